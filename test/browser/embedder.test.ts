/**
 * createEmbedder in real Chromium: the built-in model and the tiny random BERT on WASM and on WebGPU (SwiftShader),
 * the device choice with and without an adapter, WebGPU failures at load and mid-run, model errors, a module
 * worker, and a request log showing nothing leaves the page's origin. Node (onnxruntime-node) is the reference.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createEmbedder } from '../../src/embedder/index.js';
import { baseURL, launchBrowser, openBlankPage, recordRequests } from './harness.js';
import { cosine, maxAbsDiff, notNearestToParaphrase, PARAPHRASES, SAMPLE_TEXTS, SIMILARITY } from '../unit/embedder/embedder-cases.js';
import type * as Lab from './pages/embedder-lab.js';

type LabApi = typeof Lab;
type Method = Exclude<keyof LabApi, 'LabOptions' | 'Opened'>;

const LAB_PAGE = '/test/browser/pages/embedder-lab.html';

async function openLab(context: BrowserContext): Promise<Page> {
  const page = await openBlankPage(context, LAB_PAGE);
  await page.waitForFunction(() => 'embedderLab' in globalThis);
  return page;
}

/** Calls a function of pages/embedder-lab.ts inside the page. */
function lab(page: Page) {
  return <K extends Method>(method: K, ...args: Parameters<LabApi[K]>): Promise<Awaited<ReturnType<LabApi[K]>>> =>
    page.evaluate(
      ({ method, args }) => {
        const module = (globalThis as unknown as { embedderLab: Record<string, (...a: unknown[]) => unknown> }).embedderLab;
        return module[method]!(...args);
      },
      { method, args: args as unknown[] },
    ) as Promise<Awaited<ReturnType<LabApi[K]>>>;
}

const TINY_BERT = { model: 'engram/tiny-random-bert', dtype: 'fp32' } as const;
const TOLERANCE = 1e-3;

/** Node CPU vectors: the reference every browser device must match. */
let reference: { tinyBert: number[][]; gloveFp32: number[][]; gloveQ8: number[][] };

beforeAll(async () => {
  const compute = async (options: Parameters<typeof createEmbedder>[0]) => {
    const embedder = await createEmbedder(options);
    const vectors = (await embedder.embed(SAMPLE_TEXTS)).map((v) => Array.from(v));
    await embedder.dispose();
    return vectors;
  };
  reference = {
    tinyBert: await compute(TINY_BERT),
    gloveFp32: await compute({ dtype: 'fp32' }),
    gloveQ8: await compute({}),
  };
});

/**
 * WebGPU faults, installed before any page script. Devices are captured as the page creates them, so a test can
 * destroy them (a real device loss) at the N-th buffer read-back, or make device creation fail outright.
 */
function installGpuFaults(): void {
  type Device = { destroy(): void };
  type Gpu = {
    GPUAdapter?: { prototype: { requestDevice(...args: unknown[]): Promise<Device> } };
    GPUBuffer?: { prototype: { mapAsync(...args: unknown[]): Promise<void> } };
    gpuFaults: { devices: Device[]; maps: number; destroyAtMap: number; failRequestDevice: boolean };
  };
  const scope = globalThis as unknown as Gpu;
  const state = (scope.gpuFaults = { devices: [] as Device[], maps: 0, destroyAtMap: Number.POSITIVE_INFINITY, failRequestDevice: false });
  if (!scope.GPUAdapter || !scope.GPUBuffer) return;
  const adapter = scope.GPUAdapter.prototype;
  const requestDevice = adapter.requestDevice;
  adapter.requestDevice = async function (this: unknown, ...args: unknown[]) {
    if (state.failRequestDevice) throw new Error('injected: requestDevice failed');
    const device = await requestDevice.apply(this, args);
    state.devices.push(device);
    return device;
  };
  const buffer = scope.GPUBuffer.prototype;
  const mapAsync = buffer.mapAsync;
  buffer.mapAsync = function (this: unknown, ...args: unknown[]) {
    state.maps++;
    if (state.maps === state.destroyAtMap) for (const device of state.devices) device.destroy();
    return mapAsync.apply(this, args);
  };
}

type GpuFaults = { maps: number; destroyAtMap: number; failRequestDevice: boolean };
function gpuFaults(page: Page, change: Partial<GpuFaults> = {}): Promise<GpuFaults> {
  return page.evaluate((change) => {
    const state = (globalThis as unknown as { gpuFaults: GpuFaults }).gpuFaults;
    Object.assign(state, change);
    return { maps: state.maps, destroyAtMap: state.destroyAtMap, failRequestDevice: state.failRequestDevice };
  }, change);
}

/** One browser per describe block, with or without the WebGPU flag. */
function useBrowser(webgpu: boolean): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser({ webgpu });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser as Browser;
}

/** A fresh context (its own IndexedDB, so no remembered device) with the fault hooks and a request log. */
async function freshPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; requests: ReturnType<typeof recordRequests> }> {
  const context = await browser.newContext();
  await context.addInitScript(installGpuFaults);
  const requests = recordRequests(context);
  const page = await openLab(context);
  return { context, page, requests };
}

describe('with a WebGPU adapter (--enable-unsafe-webgpu, SwiftShader)', () => {
  const browser = useBrowser(true);

  test('built-in model on WASM: the expected ordering, and every request stays on the page origin', async () => {
    const { context, page, requests } = await freshPage(browser());
    const call = lab(page);
    const opened = await call('open', 'glove', { device: 'wasm' });
    expect(opened).toMatchObject({ id: 'engram-glove-100d@q8/wasm', dim: 100, device: 'wasm', choice: { reason: 'requested' } });
    expect(opened.statuses).toEqual(expect.arrayContaining(['initiate', 'done', 'ready', 'device']));
    expect(opened.files).toEqual(expect.arrayContaining(['tokenizer.json', 'onnx/model_quantized.onnx']));

    const texts = PARAPHRASES.flat();
    expect(notNearestToParaphrase(texts, (await call('embed', 'glove', texts)).vectors)).toEqual([]);
    expect(maxAbsDiff((await call('embed', 'glove', SAMPLE_TEXTS)).vectors, reference.gloveQ8)).toBeLessThan(TOLERANCE);
    expect(await call('countTokens', 'glove', 'The cat sits on the mat.')).toBe(7);

    const origin = new URL(baseURL()).origin;
    expect(requests.foreign()).toEqual([]);
    expect(requests.all).toEqual(expect.arrayContaining([`${origin}/models/engram/glove-100d/onnx/model_quantized.onnx`]));
    expect(requests.all.some((url) => url.startsWith(origin) && url.includes('ort-wasm-simd-threaded.asyncify.wasm'))).toBe(true);
    await context.close();
  });

  test('tiny BERT and the built-in model give Node-CPU vectors on WASM and on WebGPU (within 1e-3)', async () => {
    const { context, page, requests } = await freshPage(browser());
    const call = lab(page);
    for (const device of ['wasm', 'webgpu'] as const) {
      const bert = await call('open', `bert-${device}`, { ...TINY_BERT, device });
      expect(bert).toMatchObject({ id: `engram-tiny-random-bert@fp32/${device}`, dim: 32, device, choice: { reason: 'requested' } });
      const bertVectors = (await call('embed', `bert-${device}`, SAMPLE_TEXTS)).vectors;
      expect(maxAbsDiff(bertVectors, reference.tinyBert), `tiny BERT on ${device}`).toBeLessThan(TOLERANCE);

      const glove = await call('open', `glove-${device}`, { dtype: 'fp32', device });
      expect(glove.device).toBe(device);
      expect(maxAbsDiff((await call('embed', `glove-${device}`, SAMPLE_TEXTS)).vectors, reference.gloveFp32), `built-in on ${device}`).toBeLessThan(TOLERANCE);
    }
    expect(requests.foreign()).toEqual([]);
    await context.close();
  });

  test("'auto' calibrates once, keeps the faster device and remembers it for this origin, model and browser", async () => {
    const { context, page } = await freshPage(browser());
    const first = await lab(page)('open', 'auto', { ...TINY_BERT });
    expect(first.choice.reason).toBe('calibrated');
    expect(first.statuses).toContain('calibrate');
    const timings = first.choice.timings!;
    expect(timings.wasm).toBeGreaterThan(0);
    expect(timings.webgpu).toBeGreaterThan(0);
    expect(first.device).toBe(timings.webgpu < timings.wasm * 0.9 ? 'webgpu' : 'wasm');
    console.log(`calibration (tiny BERT, 8 sentences): wasm ${timings.wasm.toFixed(1)} ms, webgpu ${timings.webgpu.toFixed(1)} ms → ${first.device}`);
    expect(maxAbsDiff((await lab(page)('embed', 'auto', SAMPLE_TEXTS)).vectors, reference.tinyBert)).toBeLessThan(TOLERANCE);

    const again = await openLab(context);
    const second = await lab(again)('open', 'auto', { ...TINY_BERT });
    expect(second.choice).toEqual({ ...first.choice, reason: 'remembered' });
    expect(second.device).toBe(first.device);
    expect(second.statuses).not.toContain('calibrate');

    // Another model (or dtype) is a different decision.
    const other = await lab(again)('open', 'glove-auto', {});
    expect(other.choice.reason).toBe('calibrated');
    await context.close();
  });

  test('a WebGPU failure mid-run: the same call still returns the right vectors, and later calls use WASM', async () => {
    const { context, page } = await freshPage(browser());
    const call = lab(page);
    const opened = await call('open', 'gpu', { ...TINY_BERT, device: 'webgpu', batchSize: 2 });
    expect(opened.device).toBe('webgpu');
    const before = await gpuFaults(page);
    // Read-backs after load: the first batch of the next call reads back fine, a later one finds the device lost.
    await gpuFaults(page, { destroyAtMap: before.maps + 2 });

    const { vectors, info } = await call('embed', 'gpu', SAMPLE_TEXTS);
    const after = await gpuFaults(page);
    expect(after.maps).toBeGreaterThanOrEqual(after.destroyAtMap);
    expect(maxAbsDiff(vectors, reference.tinyBert)).toBeLessThan(TOLERANCE);
    expect(info).toMatchObject({ id: 'engram-tiny-random-bert@fp32/wasm', device: 'wasm', choice: { device: 'wasm', reason: 'webgpu-failed' } });
    expect(info.choice.error).toMatch(/lost|destroy|mapAsync|OrtRun/i);

    const later = await call('embed', 'gpu', SAMPLE_TEXTS.slice(0, 3));
    expect(later.info.device).toBe('wasm');
    expect(maxAbsDiff(later.vectors, reference.tinyBert.slice(0, 3))).toBeLessThan(TOLERANCE);
    expect((await gpuFaults(page)).maps).toBe(after.maps);
    await context.close();
  });

  test('a WebGPU failure at load falls back to WASM, and the page keeps working', async () => {
    const { context, page } = await freshPage(browser());
    await gpuFaults(page, { failRequestDevice: true });
    const call = lab(page);
    const opened = await call('open', 'gpu', { ...TINY_BERT, device: 'webgpu' });
    expect(opened).toMatchObject({ device: 'wasm', choice: { reason: 'webgpu-failed' } });
    expect(opened.choice.error).toMatch(/requestDevice|device|adapter/i);
    expect(maxAbsDiff((await call('embed', 'gpu', SAMPLE_TEXTS)).vectors, reference.tinyBert)).toBeLessThan(TOLERANCE);
    const glove = await call('open', 'glove', { device: 'wasm' });
    expect(glove.device).toBe('wasm');
    await context.close();
  });

  test('a missing or broken model names the URL it looked at; the built-in model still loads afterwards', async () => {
    const { context, page, requests } = await freshPage(browser());
    const call = lab(page);
    const origin = new URL(baseURL()).origin;
    const missing = await call('openError', { model: 'nobody/nothing', device: 'wasm' });
    expect(missing.code).toBe('MODEL_NOT_FOUND');
    expect(missing.message).toContain(`${origin}/models/nobody/nothing/`);
    expect(missing.message).toContain('allowRemote');

    // The tokenizer JSON served where the ONNX file should be: a real file that is not a model.
    await page.route('**/models/engram/glove-100d/onnx/model.onnx', (route) => route.fulfill({ body: 'not an onnx file', status: 200 }));
    const broken = await call('openError', { dtype: 'fp32', device: 'wasm' });
    expect(broken.code).toBe('MODEL_INVALID');
    expect(broken.message).toContain(`${origin}/models/engram/glove-100d/`);
    await page.unroute('**/models/engram/glove-100d/onnx/model.onnx');

    const good = await call('open', 'glove', { device: 'wasm' });
    expect(good.id).toBe('engram-glove-100d@q8/wasm');
    expect((await call('embed', 'glove', ['cat'])).vectors[0]).toHaveLength(100);
    expect(requests.foreign()).toEqual([]);
    await context.close();
  });

  test('a built-in model file with other bytes than the build made is refused (MODEL_INVALID), not loaded', async () => {
    const { context, page } = await freshPage(browser());
    const call = lab(page);
    // Valid JSON, one number changed: it would load and embed wrongly without the hash check.
    await page.route('**/models/engram/glove-100d/tokenizer_config.json', async (route) => {
      const original = await (await route.fetch()).text();
      await route.fulfill({ body: original.replace(/"model_max_length":\s*\d+/, '"model_max_length": 7'), status: 200, contentType: 'application/json' });
    });
    const tampered = await call('openError', { device: 'wasm' });
    expect(tampered.code).toBe('MODEL_INVALID');
    expect(tampered.message).toContain('tokenizer_config.json');
    await context.close();
  });

  test('works inside a module worker (where the Engram worker runs it)', async () => {
    const { context, page, requests } = await freshPage(browser());
    const { info, vectors } = await lab(page)('inWorker', {}, SAMPLE_TEXTS);
    // A fresh context: 'auto' calibrates in the worker and stores the decision in the worker's IndexedDB.
    expect(info.choice.reason).toBe('calibrated');
    expect(info.id).toBe(`engram-glove-100d@q8/${info.device}`);
    expect(maxAbsDiff(vectors, reference.gloveQ8)).toBeLessThan(TOLERANCE);
    const again = await lab(page)('inWorker', {}, SAMPLE_TEXTS.slice(0, 2));
    expect(again.info.choice.reason).toBe('remembered');
    expect(requests.foreign()).toEqual([]);
    await context.close();
  });
});

describe('without a WebGPU adapter (no --enable-unsafe-webgpu)', () => {
  const browser = useBrowser(false);

  test("'auto' and 'webgpu' both run on WASM, saying there is no adapter", async () => {
    const { context, page, requests } = await freshPage(browser());
    const call = lab(page);
    const auto = await call('open', 'auto', {});
    expect(auto).toMatchObject({ id: 'engram-glove-100d@q8/wasm', device: 'wasm', choice: { device: 'wasm', reason: 'no-webgpu' } });
    expect(auto.statuses).not.toContain('calibrate');
    const [anchor, paraphrase, unrelated] = (await call('embed', 'auto', [SIMILARITY.anchor, SIMILARITY.paraphrase, SIMILARITY.unrelated])).vectors;
    expect(cosine(anchor!, paraphrase!)).toBeGreaterThan(cosine(anchor!, unrelated!) + 0.4);
    const webgpu = await call('open', 'webgpu', { ...TINY_BERT, device: 'webgpu' });
    expect(webgpu).toMatchObject({ device: 'wasm', choice: { reason: 'no-webgpu' } });
    expect(requests.foreign()).toEqual([]);
    await context.close();
  });
});
