/**
 * Known answers for the transformer path in real Chromium, on WASM and on WebGPU (SwiftShader): the model folders of
 * test/unit/embedder/known-answer-model.ts (a real BERT architecture, the real bert-base-uncased vocabulary, seeded
 * weights), built at test time into test-results/ (gitignored, served by the test server like any file under the
 * repo root), must embed to the vectors of the independent forward pass computed here in Node: CLS, mean and
 * left-padded last-token pooling, the `sentence_embedding` output, prompts per role, fp32, q8 and fp16; then through
 * createMemory (worker, SQLite), and a WebGPU run that really disagrees with WASM's, reported in `status()`.
 *
 * fp16 on WebGPU needs the adapter's `shader-f16`. SwiftShader (what these tests get) has none: ONNX Runtime then
 * creates the session but fails the first run ("Program Gather requires f16 but the device does not support it"), and
 * transformers.js refuses the load. So fp16 is checked on WebGPU where the adapter has the feature, and elsewhere the
 * test checks that Engram says so and runs the fp16 file on WASM, or fp32 on WebGPU when no dtype was given.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cosine, SAMPLE_TEXTS } from '../unit/embedder/embedder-cases.js';
import {
  bertBaseUncasedVocab,
  HIDDEN,
  LAST_PROMPTS,
  LAYOUTS,
  makeWeights,
  MEAN_PROMPTS,
  referenceTokenizer,
  referenceVector,
  writeFolder,
  type ReferencePooling,
  type Weights,
} from '../unit/embedder/known-answer-model.js';
import { launchBrowser, recordRequests } from './harness.js';
import { openLab } from './pages/memory-lab.js';

const ROOT = fileURLToPath(new URL('../../test-results/known-answer-models/', import.meta.url));
const MODEL_PATH = '/test-results/known-answer-models/';

const NO_PROMPTS = { query: '', document: '' };
/** An unused vocabulary row ([unused9]) that no text reaches: see the 'ka/q8-outlier' folder. */
const OUTLIER_ID = 10;

interface Case {
  model: string;
  /** What the embedder must report reading from the folder. */
  pooling: 'cls' | 'mean' | 'lasttoken' | 'output';
  reference: ReferencePooling;
  prompts: { query: string; document: string };
}

const CASES: Case[] = [
  { model: 'ka/cls', pooling: 'cls', reference: 'cls', prompts: NO_PROMPTS },
  { model: 'ka/mean', pooling: 'mean', reference: 'mean', prompts: MEAN_PROMPTS },
  { model: 'ka/last', pooling: 'lasttoken', reference: 'lasttoken', prompts: LAST_PROMPTS },
  { model: 'ka/dense', pooling: 'output', reference: 'dense', prompts: NO_PROMPTS },
];
const DTYPES = ['fp32', 'q8', 'fp16'] as const;
type Dtype = (typeof DTYPES)[number];
const THRESHOLD: Record<Dtype, number> = { fp32: 0.999, q8: 0.99, fp16: 0.999 };
/**
 * On WASM every model at every dtype. On WebGPU (SwiftShader here, each session a CPU-bound shader build) every
 * model once and every dtype at least once: pooling and prompts run in Engram's code, the same on both devices; what
 * WebGPU changes is how the graph and its dtype run.
 */
const WEBGPU_DTYPE: Record<string, Dtype> = { 'ka/cls': 'fp32', 'ka/mean': 'q8', 'ka/last': 'fp16', 'ka/dense': 'q8' };
const casesOn = (device: 'wasm' | 'webgpu') =>
  CASES.flatMap(({ model }) => (device === 'webgpu' ? [WEBGPU_DTYPE[model]!] : DTYPES).map((dtype) => ({ model, dtype })));

let weights: Weights;
let tokenize: (text: string) => number[];
let browser: Browser;

beforeAll(async () => {
  rmSync(ROOT, { recursive: true, force: true });
  const vocab = bertBaseUncasedVocab();
  weights = makeWeights(vocab.length);
  tokenize = referenceTokenizer();
  for (const folder of LAYOUTS) writeFolder(ROOT, folder, vocab, weights);
  // The same model with one huge value in a vocabulary row no text reaches: fp32 embeds exactly as 'ka/mean' does
  // without prompts, but its q8 file's per-tensor scale rounds every other word vector to zero. 'auto' runs q8 on
  // WASM and fp32 on WebGPU (no fp16 file), so the calibration compares two really different models.
  const word = Float32Array.from(weights.word);
  word[OUTLIER_ID * HIDDEN] = 1000;
  writeFolder(ROOT, { id: 'ka/q8-outlier', graph: { positions: 'range', sentenceEmbedding: false }, q8: true, modules: ['Pooling', 'Normalize'], poolingModes: ['mean_tokens'] }, vocab, { ...weights, word });
  browser = await launchBrowser({ webgpu: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

function reference(text: string, pooling: ReferencePooling, prompt = ''): Float64Array {
  return referenceVector(weights, tokenize(prompt + text), pooling);
}

/** The lowest cosine between Engram's vectors and the reference's, text by text. */
function agreement(actual: ArrayLike<number>[], expected: ArrayLike<number>[]): number {
  return Math.min(...actual.map((vector, i) => cosine(vector, expected[i]!)));
}

interface Embedded {
  model: string;
  dtype: Dtype;
  /** The dtype the embedder reports running. */
  ran?: string;
  id?: string;
  device?: string;
  reason?: string;
  error?: string;
  choiceError?: string;
  shaderF16?: boolean;
  pooling?: string;
  prompts?: { query: string; document: string };
  documents?: number[][];
  queries?: number[][];
}

/** Whether the page's WebGPU adapter offers shader-f16 (null: no adapter). */
function adapterShaderF16(page: Page): Promise<boolean | null> {
  return page.evaluate(async () => {
    const gpu = (navigator as { gpu?: { requestAdapter(): Promise<{ features: { has(name: string): boolean } } | null> } }).gpu;
    const adapter = await gpu?.requestAdapter();
    return adapter ? adapter.features.has('shader-f16') : null;
  });
}

/** Every case on one device, in the page: a failing case is reported as such, not hiding the others. */
function embedAll(page: Page, device: 'wasm' | 'webgpu'): Promise<Embedded[]> {
  const cases = casesOn(device);
  return page.evaluate(
    async ({ cases, modelPath, device, texts }) => {
      const out: Embedded[] = [];
      for (const { model, dtype } of cases) {
        try {
          // Batches of 5: texts of different lengths share a batch, so padding (left for 'ka/last') is exercised.
          const embedder = await window.engram.createEmbedder({ model, modelPath, dtype, device, batchSize: 5 });
          const documents = (await embedder.embed(texts)).map((v) => Array.from(v));
          const queries = (await embedder.embed(texts, 'query')).map((v) => Array.from(v));
          // Read after embedding: a WebGPU failure mid-run would have moved it to WASM.
          const { id, device: ranOn, dtype: ran, deviceChoice, pooling, prompts } = embedder;
          const { reason, error: choiceError, shaderF16 } = deviceChoice;
          out.push({ model, dtype, ran, id, device: ranOn, reason, choiceError, shaderF16, pooling, prompts, documents, queries });
          await embedder.dispose();
        } catch (error) {
          out.push({ model, dtype, error: error instanceof Error ? error.message : String(error) });
        }
      }
      return out;
    },
    { cases, modelPath: MODEL_PATH, device, texts: SAMPLE_TEXTS },
  );
}

describe.each(['wasm', 'webgpu'] as const)('known answers in Chromium on %s', (device) => {
  test('every pooling, output, prompt set and dtype: stored (document) and query vectors equal the reference (fp32 and fp16 ≥ 0.999, q8 ≥ 0.99)', async () => {
    const context = await browser.newContext();
    const requests = recordRequests(context);
    const page = await openLab(context);
    const shaderF16 = await adapterShaderF16(page);
    const results = await embedAll(page, device);
    await context.close();
    if (device === 'webgpu') expect(shaderF16, 'no WebGPU adapter: the WebGPU cases would all run on WASM').not.toBeNull();

    const measured: string[] = [];
    const failures: string[] = [];
    for (const result of results) {
      const spec = CASES.find((c) => c.model === result.model)!;
      const label = `${result.model} ${result.dtype} on ${device}`;
      if (result.error !== undefined || !result.documents || !result.queries) {
        failures.push(`${label}: ${result.error}`);
        continue;
      }
      const documents = agreement(result.documents, SAMPLE_TEXTS.map((text) => reference(text, spec.reference, spec.prompts.document)));
      const queries = agreement(result.queries, SAMPLE_TEXTS.map((text) => reference(text, spec.reference, spec.prompts.query)));
      measured.push(`${label} (${result.id}): documents ${documents.toFixed(6)}, queries ${queries.toFixed(6)}`);
      // fp16 on a WebGPU adapter without shader-f16 cannot run: Engram must say so and run the same file on WASM.
      const noF16 = device === 'webgpu' && result.dtype === 'fp16' && shaderF16 === false;
      const where = noF16 ? { device: 'wasm', reason: 'webgpu-failed', shaderF16: false } : { device, reason: 'requested', shaderF16: device === 'webgpu' ? shaderF16 : undefined };
      expect({ label, ran: result.ran, device: result.device, reason: result.reason, shaderF16: result.shaderF16, pooling: result.pooling, prompts: result.prompts }).toEqual({ label, ran: result.dtype, ...where, pooling: spec.pooling, prompts: spec.prompts });
      if (noF16) expect(result.choiceError).toContain('fp16 needs the WebGPU feature shader-f16');
      expect(documents, `${label}: documents`).toBeGreaterThanOrEqual(THRESHOLD[result.dtype]);
      expect(queries, `${label}: queries`).toBeGreaterThanOrEqual(THRESHOLD[result.dtype]);
    }
    if (device === 'webgpu') console.log(`WebGPU adapter shader-f16: ${shaderF16}${shaderF16 ? '' : ' (fp16 cases ran on WASM, as checked)'}`);
    console.log(`minimum cosine to the reference, ${SAMPLE_TEXTS.length} texts per role:\n  ${measured.join('\n  ')}`);
    expect(failures).toEqual([]);
    expect(results.map(({ model, dtype }) => ({ model, dtype }))).toEqual(casesOn(device));
    expect(requests.foreign()).toEqual([]);
  });
});

test('WebGPU with no dtype given, on a model with an fp16 file: fp16 when the adapter has shader-f16, else fp32, still on WebGPU and equal to the reference', async () => {
  const context = await browser.newContext();
  const page = await openLab(context);
  const shaderF16 = await adapterShaderF16(page);
  const outcome = await page.evaluate(
    async ({ modelPath, texts }) => {
      const embedder = await window.engram.createEmbedder({ model: 'ka/mean', modelPath, device: 'webgpu', batchSize: 5 });
      const documents = (await embedder.embed(texts)).map((v) => Array.from(v));
      const queries = (await embedder.embed(texts, 'query')).map((v) => Array.from(v));
      const { id, dtype, device, deviceChoice } = embedder;
      await embedder.dispose();
      return { id, dtype, device, deviceChoice, documents, queries };
    },
    { modelPath: MODEL_PATH, texts: SAMPLE_TEXTS },
  );
  await context.close();
  expect(shaderF16).not.toBeNull();
  expect({ dtype: outcome.dtype, device: outcome.device, choice: outcome.deviceChoice }).toEqual({
    dtype: shaderF16 ? 'fp16' : 'fp32',
    device: 'webgpu',
    choice: { device: 'webgpu', reason: 'requested', shaderF16 },
  });
  const documents = agreement(outcome.documents, SAMPLE_TEXTS.map((text) => reference(text, 'mean', MEAN_PROMPTS.document)));
  const queries = agreement(outcome.queries, SAMPLE_TEXTS.map((text) => reference(text, 'mean', MEAN_PROMPTS.query)));
  console.log(`no dtype on WebGPU (shader-f16 ${shaderF16}): ${outcome.id}, documents ${documents.toFixed(6)}, queries ${queries.toFixed(6)}`);
  expect(documents).toBeGreaterThanOrEqual(0.999);
  expect(queries).toBeGreaterThanOrEqual(0.999);
});

describe('through createMemory', () => {
  const MEMORIES = SAMPLE_TEXTS.filter((text) => /[a-z]{2}/.test(text));
  const QUERIES = ['which editor theme does the user like?', 'a cat on a rug', 'camping in the rain'];

  test('on WASM: every hit\'s cosine is the query reference against the stored document reference; status names the device', async () => {
    const context = await browser.newContext();
    const page = await openLab(context);
    const outcome = await page.evaluate(
      async ({ modelPath, memories, queries }) => {
        const memory = await window.engram.createMemory({ name: 'known-answer', storage: 'memory', embedder: { model: 'ka/mean', modelPath, dtype: 'fp32', device: 'wasm' } });
        const ids = await memory.add(memories.map((text) => ({ text })));
        while (!(await memory.status()).embedder) await new Promise((resolve) => setTimeout(resolve, 50));
        while ((await memory.status()).indexing) await new Promise((resolve) => setTimeout(resolve, 50));
        const searches = [];
        for (const query of queries) {
          const { hits, trace } = await memory.search(query, { mode: 'vector', k: memories.length });
          searches.push({ mode: trace.mode, hits: hits.map((hit) => ({ index: ids.indexOf(hit.id), cosine: hit.explain.cosine })) });
        }
        const status = await memory.status();
        await memory.close();
        return { searches, embedder: status.embedder, device: status.device };
      },
      { modelPath: MODEL_PATH, memories: MEMORIES, queries: QUERIES },
    );
    await context.close();
    expect(outcome.embedder).toMatch(/^ka-mean@fp32-p[0-9a-f]{8}\/wasm$/);
    expect(outcome.device).toEqual({ device: 'wasm', reason: 'requested' });
    const documents = MEMORIES.map((text) => reference(text, 'mean', MEAN_PROMPTS.document));
    let worst = 0;
    let roleMatters = 0;
    QUERIES.forEach((text, q) => {
      const search = outcome.searches[q]!;
      expect(search.mode).toBe('vector');
      expect(search.hits.length).toBeGreaterThan(3);
      const query = reference(text, 'mean', MEAN_PROMPTS.query);
      const asDocument = reference(text, 'mean', MEAN_PROMPTS.document);
      for (const hit of search.hits) {
        const document = documents[hit.index]!;
        worst = Math.max(worst, Math.abs(hit.cosine! - cosine(query, document)));
        roleMatters = Math.max(roleMatters, Math.abs(cosine(asDocument, document) - cosine(query, document)));
      }
    });
    console.log(`createMemory on WASM: largest |explain.cosine − reference| ${worst.toExponential(2)}; the role changes a cosine by up to ${roleMatters.toFixed(3)}`);
    expect(worst).toBeLessThan(1e-3);
    // The check can tell the roles apart: embedding the query as a document would miss by more than the tolerance.
    expect(roleMatters).toBeGreaterThan(0.01);
  });

  test("'auto' with a model whose q8 file (WASM) and fp32 file (WebGPU) really differ: WASM runs, status() says WebGPU disagreed", async () => {
    const context = await browser.newContext();
    const page = await openLab(context);
    const outcome = await page.evaluate(async ({ modelPath }) => {
      const memory = await window.engram.createMemory({ name: 'known-answer-auto', storage: 'memory', embedder: { model: 'ka/q8-outlier', modelPath } });
      while (!(await memory.status()).embedder && !(await memory.status()).error) await new Promise((resolve) => setTimeout(resolve, 50));
      const status = await memory.status();
      await memory.close();
      return { embedder: status.embedder, device: status.device, error: status.error };
    }, { modelPath: MODEL_PATH });
    await context.close();
    console.log(`'auto' on ka/q8-outlier: ${JSON.stringify(outcome.device)}`);
    expect(outcome.error).toBeNull();
    expect(outcome.embedder).toBe('ka-q8-outlier@q8/wasm');
    expect(outcome.device).toMatchObject({ device: 'wasm', reason: 'webgpu-disagrees' });
    expect(outcome.device!.minCosine).toBeLessThan(0.99);
  });
});
