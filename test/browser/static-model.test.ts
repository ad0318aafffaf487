/**
 * A static (model2vec) model converted by scripts/models/static.ts, in real Chromium: its vectors on WASM equal the
 * model's own definition, and a Memory using it answers hybrid searches from its worker. The model folder is built
 * at test time into test-results/ (gitignored), which the test server serves like any file under the repo root.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { convertStaticModel } from '../../scripts/models/static.js';
import { cosineOf, referenceVector, writeFakeStaticModel, type FakeStaticModel } from '../unit/helpers/static-model.js';
import { SAMPLE_TEXTS } from '../unit/embedder/embedder-cases.js';
import { launchBrowser, recordRequests } from './harness.js';
import { openLab } from './pages/memory-lab.js';

const ROOT = fileURLToPath(new URL('../../test-results/static-models/', import.meta.url));
const MODEL_PATH = '/test-results/static-models/';
const MODEL = 'fake/potion-like';
const TEXTS = [...SAMPLE_TEXTS, 'Embeddings of unbelievably tokenizable words 🙂 — naïve résumé!'];

let fake: FakeStaticModel;
let browser: Browser;

beforeAll(async () => {
  rmSync(ROOT, { recursive: true, force: true });
  fake = writeFakeStaticModel(join(ROOT, 'source'), { layout: 'model2vec', dtype: 'F16', synonyms: [['cat', 'kitten'], ['mat', 'rug']] });
  convertStaticModel(join(ROOT, 'source'), join(ROOT, ...MODEL.split('/')));
  browser = await launchBrowser({ webgpu: false });
});

afterAll(async () => {
  await browser?.close();
  rmSync(ROOT, { recursive: true, force: true });
});

describe('a converted static model in Chromium', () => {
  test('WASM vectors equal the mean of the text tokens, normalised (fp32 ≥ 0.999, q8 ≥ 0.99)', async () => {
    const context = await browser.newContext();
    const page = await openLab(context);
    for (const dtype of ['fp32', 'q8'] as const) {
      const vectors = await page.evaluate(
        async ({ model, modelPath, dtype, texts }) => {
          const embedder = await window.engram.createEmbedder({ model, modelPath, dtype, device: 'wasm' });
          const out = (await embedder.embed(texts)).map((vector) => Array.from(vector));
          await embedder.dispose();
          return out;
        },
        { model: MODEL, modelPath: MODEL_PATH, dtype, texts: TEXTS },
      );
      TEXTS.forEach((text, i) => {
        const expected = referenceVector(fake, text, true);
        if (expected.every((x) => x === 0)) expect(vectors[i]!.every((x) => x === 0), `"${text}"`).toBe(true);
        else expect(cosineOf(vectors[i]!, expected), `${dtype} "${text}"`).toBeGreaterThanOrEqual(dtype === 'fp32' ? 0.999 : 0.99);
      });
    }
    await context.close();
  });

  test('createMemory with the static model answers hybrid searches; the vector leg finds a memory no word matches', async () => {
    const context = await browser.newContext();
    const requests = recordRequests(context);
    const page = await openLab(context);
    const outcome = await page.evaluate(
      async ({ model, modelPath }) => {
        const memory = await window.engram.createMemory({ name: 'static-model', storage: 'memory', embedder: { model, modelPath, device: 'wasm' } });
        await memory.add([{ text: 'The cat sits on the mat' }, { text: 'Quarterly revenue grew 8 percent' }, { text: 'The train to Paris leaves at noon' }]);
        while (!(await memory.status()).embedder) await new Promise((resolve) => setTimeout(resolve, 50));
        while ((await memory.status()).indexing) await new Promise((resolve) => setTimeout(resolve, 50));
        const semantic = await memory.search('kitten rug', { k: 3 });
        const lexical = await memory.search('revenue', { k: 3 });
        const status = await memory.status();
        await memory.close();
        const top = (result: typeof semantic) => ({
          mode: result.trace.mode,
          text: result.hits[0]?.text,
          vecRank: result.hits[0]?.explain.vecRank,
          bm25Rank: result.hits[0]?.explain.bm25Rank,
        });
        return { semantic: top(semantic), lexical: top(lexical), embedder: status.embedder };
      },
      { model: MODEL, modelPath: MODEL_PATH },
    );
    // The converted graph has a sentence_embedding output, which the embedder reads in place of its own pooling.
    expect(outcome.embedder).toBe('fake-potion-like@q8-output/wasm');
    // "kitten" and "rug" share rows with "cat" and "mat" and no word with the memory: only the vector leg can find it.
    expect(outcome.semantic).toEqual({ mode: 'hybrid', text: 'The cat sits on the mat', vecRank: 1, bm25Rank: null });
    expect(outcome.lexical).toMatchObject({ mode: 'hybrid', text: 'Quarterly revenue grew 8 percent', bm25Rank: 1 });
    expect(requests.foreign()).toEqual([]);
    expect(requests.all.some((url) => url.endsWith(`${MODEL_PATH}${MODEL}/onnx/model_quantized.onnx`))).toBe(true);
    await context.close();
  });
});
