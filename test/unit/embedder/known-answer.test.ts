/**
 * Known answers for the transformer path in Node (onnxruntime-node): model folders with a real BERT architecture,
 * the real bert-base-uncased vocabulary and seeded weights, in each sentence-transformers layout Engram reads, must
 * embed to the vectors of an independent forward pass (known-answer-model.ts), through createEmbedder and through
 * the engine. Pooling CLS, mean, left-padded last token and the `sentence_embedding` output; prompts per role; fp32,
 * q8 and fp16; chunks past the length; Matryoshka; and what Engram refuses.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DataType, fromFloat16Bits, toFloat16Bits } from '../../../scripts/models/onnx.js';
import { createEmbedder, type LocalEmbedder } from '../../../src/embedder/index.js';
import type { EmbedderOptions } from '../../../src/embedder/options.js';
import { isEngramError } from '../../../src/errors.js';
import { createEngine, memoryStore } from '../../../src/node.js';
import { cosine, SAMPLE_TEXTS } from './embedder-cases.js';
import {
  bertBaseUncasedVocab,
  CLS,
  DENSE,
  HIDDEN,
  LAST_PROMPTS,
  LAYOUTS,
  makeWeights,
  MEAN_PROMPTS,
  referenceTokenizer,
  referenceVector,
  SEP,
  writeFolder,
  type FolderSpec,
  type ReferencePooling,
  type Weights,
} from './known-answer-model.js';

let root: string;
let weights: Weights;
let tokenize: (text: string) => number[];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'engram-known-answer-'));
  const vocab = bertBaseUncasedVocab();
  weights = makeWeights(vocab.length);
  tokenize = referenceTokenizer();
  const standard = { positions: 'range', sentenceEmbedding: false } as const;
  const folders: FolderSpec[] = [
    ...LAYOUTS,
    { id: 'ka/plain', graph: standard },
    { id: 'ka/dense-missing', graph: standard, modules: ['Pooling', 'Dense', 'Normalize'], poolingModes: ['mean_tokens'] },
    { id: 'ka/max', graph: standard, modules: ['Pooling'], poolingModes: ['max_tokens'] },
    { id: 'ka/mean-and-cls', graph: standard, modules: ['Pooling'], poolingModes: ['cls_token', 'mean_tokens'] },
    { id: 'ka/word-weights', graph: standard, modules: ['WordWeights', 'Pooling'], poolingModes: ['mean_tokens'] },
  ];
  for (const folder of folders) writeFolder(root, folder, vocab, weights);
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

const open = (model: string, options: EmbedderOptions = {}) => createEmbedder({ model, modelPath: root, dtype: 'fp32', batchSize: 5, ...options });

function reference(text: string, pooling: ReferencePooling, prompt = ''): Float64Array {
  return referenceVector(weights, tokenize(prompt + text), pooling);
}

/** The lowest cosine between Engram's vectors and the reference's, text by text. */
function agreement(actual: ArrayLike<number>[], expected: ArrayLike<number>[]): number {
  return Math.min(...actual.map((vector, i) => cosine(vector, expected[i]!)));
}

async function expectCode(promise: Promise<unknown>, code: string, messagePart: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isEngramError(error), `expected an EngramError, got ${String(error)}`).toBe(true);
  expect((error as { code: string }).code).toBe(code);
  expect((error as Error).message).toContain(messagePart);
}

async function using<T>(embedder: Promise<LocalEmbedder>, body: (embedder: LocalEmbedder) => Promise<T>): Promise<T> {
  const loaded = await embedder;
  try {
    return await body(loaded);
  } finally {
    await loaded.dispose();
  }
}

describe('the reference itself', () => {
  test('the vocabulary is bert-base-uncased and both tokenizers agree on it', () => {
    const vocab = bertBaseUncasedVocab();
    expect(vocab.length).toBe(30_522);
    expect(new Set(vocab).size).toBe(30_522);
    expect([vocab[0], vocab[100], vocab[CLS], vocab[SEP], vocab[103], vocab[1996], vocab[2015], vocab[7592]]).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', '##s', 'hello']);
    expect(tokenize('Hello world!')).toEqual([CLS, 7592, 2088, 999, SEP]);
  });

  test('half-precision rounding of the fp16 file: every half round-trips, ties go to even, past the range is infinity', () => {
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = fromFloat16Bits(bits);
      if (Number.isNaN(value)) continue;
      if (toFloat16Bits(value) !== bits && value !== 0) throw new Error(`half ${bits.toString(16)} (${value}) rounds to ${toFloat16Bits(value).toString(16)}`);
    }
    const cases: [number, number][] = [
      [1, 0x3c00],
      [-2, 0xc000],
      [1 + 2 ** -11, 0x3c00], // halfway between 1 and the next half: to the even one
      [1 + 3 * 2 ** -11, 0x3c02],
      [65504, 0x7bff],
      [65519, 0x7bff],
      [65520, 0x7c00],
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -25, 0x0000], // halfway to it: to even, zero
      [3 * 2 ** -25, 0x0002],
      [2 ** -14 - 2 ** -25, 0x0400], // rounds up from the largest subnormal into the smallest normal
    ];
    expect(cases.map(([value]) => toFloat16Bits(value))).toEqual(cases.map(([, bits]) => bits));
    expect(fromFloat16Bits(toFloat16Bits(NaN))).toBeNaN();
  });
});

describe('known answers in Node, fp32', () => {
  test.each([
    ['ka/cls', 'cls'],
    ['ka/mean', 'mean'],
    ['ka/dense', 'output'],
    ['ka/plain', 'mean'],
  ] as const)('%s: pooling %s from the model config, vectors equal the reference (batched, padded)', async (model, pooling) => {
    await using(open(model), async (embedder) => {
      expect(embedder.pooling).toBe(pooling);
      const kind: ReferencePooling = pooling === 'output' ? 'dense' : pooling;
      const prompts = model === 'ka/mean' ? MEAN_PROMPTS : { query: '', document: '' };
      expect(embedder.prompts).toEqual(prompts);
      expect(embedder.dim).toBe(pooling === 'output' ? DENSE : HIDDEN);
      const documents = await embedder.embed(SAMPLE_TEXTS);
      expect(agreement(documents, SAMPLE_TEXTS.map((text) => reference(text, kind, prompts.document)))).toBeGreaterThan(0.999);
      const queries = await embedder.embed(SAMPLE_TEXTS, 'query');
      expect(agreement(queries, SAMPLE_TEXTS.map((text) => reference(text, kind, prompts.query)))).toBeGreaterThan(0.999);
    });
  });

  test('last-token pooling with a left-padding tokenizer reads each text\'s own last token, prompts per role', async () => {
    await using(open('ka/last'), async (embedder) => {
      expect(embedder.pooling).toBe('lasttoken');
      expect(embedder.maxTokens).toBe(64);
      expect(embedder.prompts).toEqual(LAST_PROMPTS);
      const documents = await embedder.embed(SAMPLE_TEXTS);
      const queries = await embedder.embed(SAMPLE_TEXTS, 'query');
      expect(agreement(documents, SAMPLE_TEXTS.map((text) => reference(text, 'lasttoken', LAST_PROMPTS.document)))).toBeGreaterThan(0.999);
      expect(agreement(queries, SAMPLE_TEXTS.map((text) => reference(text, 'lasttoken', LAST_PROMPTS.query)))).toBeGreaterThan(0.999);
    });
  });

  test('prompts: query and document vectors differ as the prompts make them; given prompts replace the model\'s and rename the space', async () => {
    const withModel = await open('ka/mean');
    const without = await open('ka/mean', { prompts: { query: '', document: '' } });
    const custom = await open('ka/mean', { prompts: { query: 'search_query: ' } });
    try {
      const [query] = await withModel.embed(['dark mode preference'], 'query');
      const [document] = await withModel.embed(['dark mode preference']);
      expect(cosine(query!, document!)).toBeLessThan(0.99);
      expect(cosine(query!, document!)).toBeCloseTo(cosine(reference('dark mode preference', 'mean', 'query: '), reference('dark mode preference', 'mean', 'passage: ')), 3);
      const [plain] = await without.embed(['dark mode preference'], 'query');
      expect(cosine(plain!, reference('dark mode preference', 'mean'))).toBeGreaterThan(0.999);
      expect(custom.prompts).toEqual({ query: 'search_query: ', document: 'passage: ' });
      const [customQuery] = await custom.embed(['dark mode preference'], 'query');
      expect(cosine(customQuery!, reference('dark mode preference', 'mean', 'search_query: '))).toBeGreaterThan(0.999);
      expect(without.vectorSpace).toBe('ka-mean@fp32');
      expect(new Set([withModel.vectorSpace, without.vectorSpace, custom.vectorSpace]).size).toBe(3);
      expect(withModel.vectorSpace).toMatch(/^ka-mean@fp32-p[0-9a-f]{8}$/);
      await expect(withModel.embed(['x'], 'passage' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    } finally {
      await Promise.all([withModel.dispose(), without.dispose(), custom.dispose()]);
    }
  });

  test('an explicit pooling wins over the config and is named in the space', async () => {
    await using(open('ka/cls', { pooling: 'mean' }), async (embedder) => {
      expect(embedder.vectorSpace).toBe('ka-cls@fp32');
      expect(agreement(await embedder.embed(SAMPLE_TEXTS), SAMPLE_TEXTS.map((text) => reference(text, 'mean')))).toBeGreaterThan(0.999);
    });
    await using(open('ka/mean', { pooling: 'lasttoken', prompts: { document: '' } }), async (embedder) => {
      expect(embedder.id).toMatch(/^ka-mean@fp32-lasttoken-p[0-9a-f]{8}\/cpu$/);
      expect(agreement(await embedder.embed(SAMPLE_TEXTS), SAMPLE_TEXTS.map((text) => reference(text, 'lasttoken')))).toBeGreaterThan(0.999);
    });
  });

  test('a text longer than maxTokens is embedded in chunks that keep [CLS], the prompt and [SEP]: the token-weighted mean', async () => {
    const long = 'Melanie went camping with her kids and they roasted marshmallows by the campfire while it rained. '.repeat(3);
    await using(open('ka/mean', { maxTokens: 16 }), async (embedder) => {
      expect(embedder.maxTokens).toBe(16);
      expect(embedder.vectorSpace).toMatch(/-len16$/);
      const ids = tokenize(MEAN_PROMPTS.document + long);
      const head = ids.slice(0, 1 + 2); // [CLS] passage :
      const body = ids.slice(3, -1);
      expect(body.length).toBeGreaterThan(24);
      const sum = new Float64Array(HIDDEN);
      for (let start = 0; start < body.length; start += 12) {
        const piece = body.slice(start, start + 12);
        const vector = referenceVector(weights, [...head, ...piece, SEP], 'mean');
        vector.forEach((v, d) => (sum[d]! += v * piece.length));
      }
      const [vector] = await embedder.embed([long]);
      expect(cosine(vector!, sum) / Math.hypot(...sum)).toBeGreaterThan(0.999);
    });
  });

  test("longText: 'truncate' embeds the first chunk only ([CLS], the prompt, the text's first tokens, [SEP]); a bad value is INVALID_INPUT", async () => {
    const long = 'Melanie went camping with her kids and they roasted marshmallows by the campfire while it rained. '.repeat(3);
    await using(open('ka/mean', { maxTokens: 16, longText: 'truncate' }), async (embedder) => {
      expect(embedder.longText).toBe('truncate');
      expect(embedder.vectorSpace).toMatch(/-len16-truncate$/);
      const ids = tokenize(MEAN_PROMPTS.document + long);
      const expected = referenceVector(weights, [...ids.slice(0, 15), SEP], 'mean');
      const [vector] = await embedder.embed([long]);
      expect(cosine(vector!, expected) / Math.hypot(...expected)).toBeGreaterThan(0.999);
      // A text that fits is embedded as with chunks.
      expect(agreement(await embedder.embed(['A short one.']), [reference('A short one.', 'mean', MEAN_PROMPTS.document)])).toBeGreaterThan(0.999);
    });
    await using(open('ka/mean', { maxTokens: 16 }), async (embedder) => {
      expect(embedder.longText).toBe('chunks');
      expect(embedder.vectorSpace).toMatch(/-len16$/);
    });
    await expectCode(open('ka/mean', { longText: 'first' as never }), 'INVALID_INPUT', 'longText');
  });

  test('Matryoshka dimensions: the first n values, renormalised; more than the model has is INVALID_INPUT', async () => {
    await using(open('ka/mean', { dimensions: 16 }), async (embedder) => {
      expect(embedder.dim).toBe(16);
      expect(embedder.vectorSpace).toMatch(/-d16$/);
      const expected = SAMPLE_TEXTS.map((text) => {
        const cut = reference(text, 'mean', MEAN_PROMPTS.document).slice(0, 16);
        return cut.map((v) => v / Math.hypot(...cut));
      });
      expect(agreement(await embedder.embed(SAMPLE_TEXTS), expected)).toBeGreaterThan(0.999);
    });
    await expectCode(open('ka/mean', { dimensions: 64 }), 'INVALID_INPUT', 'dimensions');
  });
});

/** Each layout with its reference pooling and prompts (undefined: none). */
const LAYOUT_CASES = [
  ['ka/cls', 'cls', undefined],
  ['ka/mean', 'mean', MEAN_PROMPTS],
  ['ka/last', 'lasttoken', LAST_PROMPTS],
  ['ka/dense', 'dense', undefined],
] as const;

describe('known answers in Node, q8', () => {
  test.each(LAYOUT_CASES)('%s: the int8 file, documents and queries within 0.99 of the reference', async (model, kind, prompts = { query: '', document: '' }) => {
    await using(open(model, { dtype: 'q8' }), async (embedder) => {
      expect(agreement(await embedder.embed(SAMPLE_TEXTS), SAMPLE_TEXTS.map((text) => reference(text, kind, prompts.document)))).toBeGreaterThan(0.99);
      expect(agreement(await embedder.embed(SAMPLE_TEXTS, 'query'), SAMPLE_TEXTS.map((text) => reference(text, kind, prompts.query)))).toBeGreaterThan(0.99);
    });
  });

  test('the quantized ONNX file is what runs, within 0.99 of the fp32 reference', async () => {
    const q8 = await open('ka/mean', { dtype: undefined });
    const fp32 = await open('ka/mean');
    try {
      expect(q8.dtype).toBe('q8');
      expect(q8.id).toMatch(/^ka-mean@q8-p[0-9a-f]{8}\/cpu$/);
      const vectors = await q8.embed(SAMPLE_TEXTS);
      expect(agreement(vectors, SAMPLE_TEXTS.map((text) => reference(text, 'mean', MEAN_PROMPTS.document)))).toBeGreaterThan(0.99);
      const exact = await fp32.embed(SAMPLE_TEXTS);
      expect(Math.min(...vectors.map((v, i) => cosine(v, exact[i]!)))).toBeLessThan(0.999999);
    } finally {
      await Promise.all([q8.dispose(), fp32.dispose()]);
    }
  });
});

describe('known answers in Node, fp16', () => {
  const decode = (model: string, file: string) => onnxProto.onnx.ModelProto.decode(readFileSync(join(root, ...model.split('/'), 'onnx', file)));
  /** An initializer's values: float32 or the float16 bit patterns (raw data is little-endian, as typed arrays here). */
  const values = (t: onnxProto.onnx.ITensorProto): Float32Array | Uint16Array => {
    const raw = t.rawData!;
    const buffer = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
    return t.dataType === DataType.FLOAT16 ? new Uint16Array(buffer) : new Float32Array(buffer);
  };

  test.each(['ka/mean', 'ka/dense'])('%s: model_fp16.onnx is the fp32 graph in float16: int64 inputs, float16 weights (the fp32 values rounded), casts and outputs', (model) => {
    const fp32 = decode(model, 'model.onnx').graph!;
    const fp16 = decode(model, 'model_fp16.onnx').graph!;
    expect(fp16.input!.map((i) => i.type!.tensorType!.elemType)).toEqual([DataType.INT64, DataType.INT64, DataType.INT64]);
    expect(fp16.output!.map((o) => o.type!.tensorType!.elemType)).toEqual(fp32.output!.map(() => DataType.FLOAT16));
    expect(fp16.node!.map((n) => n.opType)).toEqual(fp32.node!.map((n) => n.opType));
    expect(fp16.node!.filter((n) => n.opType === 'Cast').map((n) => Number(n.attribute![0]!.i))).toEqual([DataType.FLOAT16]);
    const originals = new Map(fp32.initializer!.map((t) => [t.name!, t]));
    let halves = 0;
    for (const t of fp16.initializer!) {
      const original = originals.get(t.name!)!;
      expect([t.name, t.dims]).toEqual([original.name, original.dims]);
      if (original.dataType === DataType.INT64) {
        expect(t.dataType).toBe(DataType.INT64);
        continue;
      }
      expect([t.name, t.dataType]).toEqual([t.name, DataType.FLOAT16]);
      const [bits, floats] = [values(t) as Uint16Array, values(original) as Float32Array];
      // Only BERT's LayerNorm epsilon (1e-12) lies outside half precision: clamped to 1e-7, whose nearest half is 2⁻²³, not 0.
      if (t.name === 'eps') expect(fromFloat16Bits(bits[0]!)).toBe(2 ** -23);
      else expect(bits.filter((b, i) => b !== toFloat16Bits(floats[i]!)).length, `${t.name}: values not the fp32 ones rounded to half`).toBe(0);
      halves += bits.length;
    }
    expect(halves).toBeGreaterThan(30_522 * HIDDEN);
  });

  test.each(LAYOUT_CASES)('%s: the fp16 file runs on onnxruntime-node and its float16 output, read as float32, equals the reference', async (model, kind, prompts = { query: '', document: '' }) => {
    const fp16 = await open(model, { dtype: 'fp16' });
    const fp32 = await open(model);
    try {
      expect(fp16.dtype).toBe('fp16');
      expect(fp16.id).toMatch(/@fp16.*\/cpu$/);
      const documents = await fp16.embed(SAMPLE_TEXTS);
      const queries = await fp16.embed(SAMPLE_TEXTS, 'query');
      const measured = [agreement(documents, SAMPLE_TEXTS.map((text) => reference(text, kind, prompts.document))), agreement(queries, SAMPLE_TEXTS.map((text) => reference(text, kind, prompts.query)))];
      // Not the fp32 file under another name: half-precision weights move every vector a little.
      const exact = await fp32.embed(SAMPLE_TEXTS);
      const fromFp32 = Math.min(...documents.map((v, i) => cosine(v, exact[i]!)));
      console.log(`${model} fp16 in Node: documents ${measured[0]!.toFixed(7)}, queries ${measured[1]!.toFixed(7)}; fp16 vs fp32 files ${fromFp32.toFixed(9)}`);
      expect(measured[0]).toBeGreaterThan(0.999);
      expect(measured[1]).toBeGreaterThan(0.999);
      expect(fromFp32).toBeLessThan(0.9999999);
    } finally {
      await Promise.all([fp16.dispose(), fp32.dispose()]);
    }
  });
});

describe('what Engram cannot do fails at load with MODEL_INVALID, naming it', () => {
  test.each([
    ['ka/dense-missing', 'Dense'],
    ['ka/max', 'pooling_mode_max_tokens'],
    ['ka/mean-and-cls', 'pooling_mode_cls_token + pooling_mode_mean_tokens'],
    ['ka/word-weights', 'sentence_transformers.models.WordWeights'],
  ])('%s', async (model, named) => {
    await expectCode(open(model), 'MODEL_INVALID', named);
  });
});

describe('known answers through the engine', () => {
  const MEMORIES = SAMPLE_TEXTS.filter((text) => /[a-z]{2}/.test(text));
  const QUERY = 'which editor theme does the user like?';

  test('stored vectors are the document reference, the query the query reference; a prompt change re-embeds in the background', async () => {
    const store = memoryStore();
    const embedder = await open('ka/mean');
    const engine = await createEngine({ store, embedder });
    const other = await open('ka/mean', { prompts: { document: 'note: ' } });
    try {
      const ids = await engine.add(MEMORIES.map((text) => ({ text })));
      const stored = await store.loadVectors(embedder.vectorSpace, embedder.dim);
      const byId = new Map(stored.ids.map((id, i) => [id, stored.data.subarray(i * embedder.dim, (i + 1) * embedder.dim)]));
      const documents = MEMORIES.map((text) => reference(text, 'mean', MEAN_PROMPTS.document));
      expect(agreement(ids.map((id) => byId.get(id)!), documents)).toBeGreaterThan(0.999);

      const { hits } = await engine.search(QUERY, { mode: 'vector', k: MEMORIES.length });
      expect(hits.length).toBeGreaterThan(3);
      const query = reference(QUERY, 'mean', MEAN_PROMPTS.query);
      const asDocument = reference(QUERY, 'mean', MEAN_PROMPTS.document);
      let roleMatters = 0;
      for (const hit of hits) {
        const document = documents[ids.indexOf(hit.id)]!;
        expect(hit.explain.cosine).toBeCloseTo(cosine(query, document), 3);
        roleMatters = Math.max(roleMatters, Math.abs(cosine(asDocument, document) - cosine(query, document)));
      }
      expect(roleMatters).toBeGreaterThan(0.01);

      await engine.setEmbedder(other);
      for (let waited = 0; engine.indexing() !== null && waited < 200; waited++) await new Promise((resolve) => setTimeout(resolve, 25));
      expect(engine.indexing()).toBeNull();
      const again = await store.loadVectors(other.vectorSpace, other.dim);
      expect(again.ids.length).toBe(MEMORIES.length);
      const redone = new Map(again.ids.map((id, i) => [id, again.data.subarray(i * other.dim, (i + 1) * other.dim)]));
      expect(agreement(ids.map((id) => redone.get(id)!), MEMORIES.map((text) => reference(text, 'mean', 'note: ')))).toBeGreaterThan(0.999);
    } finally {
      await engine.close();
      await Promise.all([embedder.dispose(), other.dispose()]);
    }
  });
});
