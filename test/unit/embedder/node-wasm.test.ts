/**
 * engram/node without onnxruntime-node's native build (an app that replaced the package through npm `overrides` to
 * leave out its 288 MB): the built-in model runs on onnxruntime-web's WASM build for Node and gives the vectors the
 * native build gives. Each case is its own process (the runtime is chosen once, before transformers.js loads).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const EMBED = new URL('./helpers/embed.ts', import.meta.url).pathname;
const OVERRIDDEN = new URL('./helpers/ort-overridden.cjs', import.meta.url).pathname;
const TEXTS = ['Grandma likes tulips and orchids in her garden', 'The staging server moved to eu-west-2 in March'];

interface Run {
  id: string;
  vectors: number[][];
  nativeBinding: boolean;
  ortHook: boolean;
}

async function embed(preload: string[]): Promise<Run> {
  const { stdout } = await promisify(execFile)(process.execPath, [...preload, '--import', 'tsx', EMBED, ...TEXTS], { maxBuffer: 16 << 20 });
  return JSON.parse(stdout.slice(stdout.indexOf('{'))) as Run;
}

const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

it('with onnxruntime-node replaced, the built-in model runs on WASM, with the native vectors and the same embedder id', async () => {
  const [native, wasm] = await Promise.all([embed([]), embed(['--require', OVERRIDDEN])]);
  expect(native).toMatchObject({ nativeBinding: true, ortHook: false });
  expect(wasm).toMatchObject({ nativeBinding: false, ortHook: true });
  // Stored vectors are kept per embedder id: the two builds must not force a re-embedding of each other's.
  expect(wasm.id).toBe(native.id);
  expect(wasm.vectors).toHaveLength(TEXTS.length);
  wasm.vectors.forEach((vector, i) => expect(cosine(vector, native.vectors[i]!)).toBeGreaterThan(0.9999));
}, 120_000);
