/**
 * `status().device`: the embedder's device choice as the worker reports it. A real disagreement (a model whose q8
 * file on WASM and fp32 file on WebGPU differ) reaches `status()` in Chromium, test/browser/known-answer.test.ts;
 * here the mapping of every choice device.ts can make, remembered ones included.
 */
import { describe, expect, it } from 'vitest';
import { deviceStatus } from '../../../src/contract/protocol.js';
import { AGREEMENT } from '../../../src/embedder/device.js';

describe('deviceStatus', () => {
  it('keeps device and reason, and drops what only a calibration or a failure carries', () => {
    expect(deviceStatus({ device: 'cpu', reason: 'node' })).toEqual({ device: 'cpu', reason: 'node' });
    expect(deviceStatus({ device: 'wasm', reason: 'requested' })).toEqual({ device: 'wasm', reason: 'requested' });
    expect(deviceStatus({ device: 'wasm', reason: 'webgpu-failed', error: 'device lost' })).toEqual({ device: 'wasm', reason: 'webgpu-failed' });
    expect(deviceStatus({ device: 'webgpu', reason: 'calibrated', timings: { wasm: 9, webgpu: 4 }, minCosine: 0.99998 })).toEqual({ device: 'webgpu', reason: 'calibrated' });
    expect(deviceStatus({ device: 'wasm', reason: 'calibrated', timings: { wasm: 4, webgpu: 9 }, minCosine: AGREEMENT })).toEqual({ device: 'wasm', reason: 'calibrated' });
  });

  it('a disagreement carries its cosine, also when the choice was remembered', () => {
    expect(deviceStatus({ device: 'wasm', reason: 'webgpu-disagrees', minCosine: 0.6 })).toEqual({ device: 'wasm', reason: 'webgpu-disagrees', minCosine: 0.6 });
    expect(deviceStatus({ device: 'wasm', reason: 'remembered', minCosine: 0.6 })).toEqual({ device: 'wasm', reason: 'remembered', minCosine: 0.6 });
    // Non-finite GPU output counts as cosine -1 (minCosine in device.ts).
    expect(deviceStatus({ device: 'wasm', reason: 'webgpu-disagrees', minCosine: -1 })).toEqual({ device: 'wasm', reason: 'webgpu-disagrees', minCosine: -1 });
  });
});
