/**
 * The embedder in Node (onnxruntime-node, CPU) with the real built-in model and the tiny random BERT, both built
 * by `scripts/ensure-model.ts` (pretest). Also the model builder itself: SIF weights, int8 rows, graph shape,
 * tokenizer files, and a deterministic build.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEmbedder, type LocalEmbedder } from '../../../src/embedder/index.js';
import { isEngramError } from '../../../src/errors.js';
import { buildModel } from '../../../scripts/build-model.js';
import { gloveTable, quantizeRows, type WinkEmbeddings } from '../../../scripts/models/glove.js';
import { gloveRecipe, modelDir, tinyBertRecipe } from '../../../scripts/models/index.js';
import { MANIFEST_FILE, type Manifest } from '../../../scripts/models/model-folder.js';
import { randomSource } from '../helpers/vectors.js';
import { cosine, maxAbsDiff, norm, notNearestToParaphrase, PARAPHRASES, SAMPLE_TEXTS, SIMILARITY } from './embedder-cases.js';
import { FAST_TIER } from '../helpers/tier.js';

/** Build hashes of the default recipes. A deliberate builder change updates these; an accidental one fails here. */
const EXPECTED_BUILD_HASH = {
  glove: 'c14d596d47d7156a5460ea3db9a68a950dd293d521869520f884632cc6754a60',
  tinyBert: '07a3b025d2bb4a3f2bcf109e9d15c652907a9f4a55c958d32d978d257fd3f0bc',
};

const TINY_BERT = { model: 'engram/tiny-random-bert', dtype: 'fp32' } as const;

function unitVector(values: number[]): number[] {
  const length = Math.hypot(...values);
  return values.map((x) => x / length);
}

let glove: LocalEmbedder;
beforeAll(async () => {
  glove = await createEmbedder();
}, 60_000);
afterAll(async () => {
  await glove?.dispose();
});

async function expectEngramError(promise: Promise<unknown>, code: string, messagePart?: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isEngramError(error), `expected an EngramError, got ${String(error)}`).toBe(true);
  expect((error as { code: string }).code).toBe(code);
  if (messagePart) expect((error as Error).message).toContain(messagePart);
}

describe('built-in model in Node', () => {
  test('names model, dtype and device; dim comes from the model', () => {
    expect(glove.id).toBe('engram-glove-100d@q8/cpu');
    expect(glove.dim).toBe(100);
    expect(glove.deviceChoice).toEqual({ device: 'cpu', reason: 'node' });
  });

  test("each sentence's nearest neighbour among unrelated topics is its paraphrase", async () => {
    const texts = PARAPHRASES.flat();
    expect(notNearestToParaphrase(texts, await glove.embed(texts))).toEqual([]);
    // The check can fail: random unit vectors miss most paraphrases.
    const { gauss } = randomSource(12);
    const random = texts.map(() => unitVector(Array.from({ length: glove.dim }, gauss)));
    expect(notNearestToParaphrase(texts, random).length).toBeGreaterThan(texts.length / 2);
  });

  test('vectors are unit length, except a text with no known word, which is all zeros', async () => {
    const vectors = await glove.embed(SAMPLE_TEXTS);
    SAMPLE_TEXTS.forEach((text, i) => {
      const expected = text === '' || text === 'zzqx qqvw' || text === 'x' ? 0 : 1;
      expect(norm(vectors[i]!), text).toBeCloseTo(expected, 5);
    });
  });

  test('batching and length-sorting never change a vector or its position', async () => {
    const texts = Array.from({ length: 70 }, (_, i) => SAMPLE_TEXTS[(i * 7) % SAMPLE_TEXTS.length]! + ' ' + 'word '.repeat(i % 9));
    const small = await createEmbedder({ batchSize: 3 });
    try {
      const batched = await small.embed(texts);
      const oneByOne = [];
      for (const text of texts) oneByOne.push(...(await glove.embed([text])));
      expect(maxAbsDiff(batched, oneByOne)).toBeLessThan(1e-6);
      expect(await glove.embed([])).toEqual([]);
    } finally {
      await small.dispose();
    }
  });

  test('q8 stays within rounding of fp32', async () => {
    const fp32 = await createEmbedder({ dtype: 'fp32' });
    try {
      expect(fp32.id).toBe('engram-glove-100d@fp32/cpu');
      const [a, b] = [await fp32.embed(SAMPLE_TEXTS), await glove.embed(SAMPLE_TEXTS)];
      expect(maxAbsDiff(a, b)).toBeLessThan(0.02);
      a.forEach((vector, i) => {
        if (norm(vector) > 0) expect(cosine(vector, b[i]!)).toBeGreaterThan(0.999);
      });
    } finally {
      await fp32.dispose();
    }
  });

  test('countTokens uses the model tokenizer, without [CLS]/[SEP]', () => {
    // the cat sits on the mat .
    expect(glove.countTokens('The cat sits on the mat.')).toBe(7);
    expect(glove.countTokens('')).toBe(0);
  });

  test('bad input and use after dispose get stable codes', async () => {
    await expectEngramError(glove.embed([42 as unknown as string]), 'INVALID_INPUT');
    await expectEngramError(glove.embed('text' as unknown as string[]), 'INVALID_INPUT');
    await expectEngramError(createEmbedder({ batchSize: 0 }), 'INVALID_INPUT');
    await expectEngramError(createEmbedder({ device: 'gpu' as never }), 'INVALID_INPUT');
    const closing = await createEmbedder();
    await closing.dispose();
    await expectEngramError(closing.embed(['x']), 'CLOSED');
  });

  test('WebGPU asked for in Node falls back to the CPU and says why', async () => {
    const embedder = await createEmbedder({ device: 'webgpu' });
    expect(embedder.deviceChoice).toEqual({ device: 'cpu', reason: 'no-webgpu' });
    await embedder.dispose();
  });
});

describe('missing and broken models', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'engram-models-'));
    const source = modelDir('engram/glove-100d');
    cpSync(source, join(root, 'broken', 'onnx-cut'), { recursive: true });
    truncateSync(join(root, 'broken', 'onnx-cut', 'onnx', 'model_quantized.onnx'), 1000);
    cpSync(source, join(root, 'broken', 'bad-tokenizer'), { recursive: true });
    writeFileSync(join(root, 'broken', 'bad-tokenizer', 'tokenizer.json'), '{ not json');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test('a missing model is MODEL_NOT_FOUND naming the folder it looked in', async () => {
    await expectEngramError(createEmbedder({ model: 'nobody/nothing', modelPath: root }), 'MODEL_NOT_FOUND', join(root, 'nobody/nothing/'));
  });

  test('a missing dtype file is MODEL_NOT_FOUND too', async () => {
    await expectEngramError(createEmbedder({ model: 'engram/tiny-random-bert', dtype: 'q8' }), 'MODEL_NOT_FOUND', 'model_quantized.onnx');
  });

  test('a truncated ONNX file or an unreadable tokenizer is MODEL_INVALID naming the folder', async () => {
    await expectEngramError(createEmbedder({ model: 'broken/onnx-cut', modelPath: root }), 'MODEL_INVALID', join(root, 'broken/onnx-cut/'));
    await expectEngramError(createEmbedder({ model: 'broken/bad-tokenizer', modelPath: root }), 'MODEL_INVALID', 'broken/bad-tokenizer');
  });
});

describe('tiny random BERT (real attention) in Node', () => {
  test('runs on the CPU; padding in a batch does not change a vector', async () => {
    const bert = await createEmbedder({ ...TINY_BERT, batchSize: 64 });
    try {
      expect(bert.id).toBe('engram-tiny-random-bert@fp32/cpu');
      expect(bert.dim).toBe(32);
      const batched = await bert.embed(SAMPLE_TEXTS);
      const single = [];
      for (const text of SAMPLE_TEXTS) single.push(...(await bert.embed([text])));
      expect(maxAbsDiff(batched, single)).toBeLessThan(1e-5);
      for (const vector of batched) expect(norm(vector)).toBeCloseTo(1, 5);
      // Random weights still see order: attention and positions make "dog bites man" ≠ "man bites dog".
      const [a, b] = await bert.embed(['dog bites man', 'man bites dog']);
      expect(maxAbsDiff([a!], [b!])).toBeGreaterThan(1e-3);
    } finally {
      await bert.dispose();
    }
  });

  test("pooling: 'cls' takes the first token's state (as BGE models expect), and says so in the id", async () => {
    const cls = await createEmbedder({ ...TINY_BERT, pooling: 'cls' });
    const mean = await createEmbedder({ ...TINY_BERT });
    try {
      expect(cls.id).toBe('engram-tiny-random-bert@fp32-cls/cpu');
      const batched = await cls.embed(SAMPLE_TEXTS);
      const single = [];
      for (const text of SAMPLE_TEXTS) single.push(...(await cls.embed([text])));
      expect(maxAbsDiff(batched, single)).toBeLessThan(1e-5);
      for (const vector of batched) expect(norm(vector)).toBeCloseTo(1, 5);
      expect(maxAbsDiff(batched, await mean.embed(SAMPLE_TEXTS))).toBeGreaterThan(0.01);
    } finally {
      await cls.dispose();
      await mean.dispose();
    }
  });
});

describe('model builder', () => {
  const fakeWink: WinkEmbeddings = {
    size: 6,
    dimensions: 2,
    words: ['the', ',', 'cat', 'kitten', 'ca-t', 'mat'],
    vectors: { the: [1, 2], ',': [9, 9], cat: [3, 4], kitten: [5, 6], 'ca-t': [9, 9], mat: [7, 8] },
  };

  test('SIF weights a/(a+p), p from the Zipf rank in the whole list; specials are zero rows', () => {
    const a = 1e-3;
    const table = gloveTable(fakeWink, { vocabSize: 3, sifA: a });
    expect(table.vocab).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'cat', 'kitten']);
    const harmonic = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5 + 1 / 6;
    const weight = (rank: number) => a / (a + 1 / (rank * harmonic));
    expect(Array.from(table.rows.slice(0, 10))).toEqual(new Array(10).fill(0));
    const expected = [
      [1, 2, weight(1)],
      [3, 4, weight(3)],
      [5, 6, weight(4)],
    ];
    expected.forEach(([x, y, w], i) => {
      expect(table.rows[(5 + i) * 2]).toBeCloseTo(x! * w!, 6);
      expect(table.rows[(5 + i) * 2 + 1]).toBeCloseTo(y! * w!, 6);
    });
  });

  test('int8 rows: per-row scale, error at most half a step, zero rows stay zero', () => {
    const rows = Float32Array.from([0, 0, 0, 0.5, -1, 0.25, 3, 2, -0.001]);
    const { values, scales } = quantizeRows(rows, 3);
    expect(Array.from(values.slice(0, 3))).toEqual([0, 0, 0]);
    expect(scales[0]).toBe(0);
    for (let r = 1; r < 3; r++) {
      for (let k = 0; k < 3; k++) expect(Math.abs(values[r * 3 + k]! * scales[r]! - rows[r * 3 + k]!)).toBeLessThanOrEqual(scales[r]! / 2 + 1e-7);
    }
  });

  test('q8 graph gathers int8 rows and scales first, then dequantises only what it gathered', () => {
    const bytes = readFileSync(join(modelDir('engram/glove-100d'), 'onnx', 'model_quantized.onnx'));
    const model = onnxProto.onnx.ModelProto.decode(bytes);
    // Decoded messages are full class instances: repeated fields are arrays, never null.
    const { node, input, output, initializer } = model.graph as onnxProto.onnx.GraphProto;
    expect(node.map((n) => n.opType)).toEqual(['Gather', 'Gather', 'Cast', 'Unsqueeze', 'Mul']);
    expect(input.map((i) => i.name)).toEqual(['input_ids', 'attention_mask', 'token_type_ids']);
    expect(output.map((o) => o.name)).toEqual(['last_hidden_state']);
    const table = initializer.find((t) => t.name === 'embeddings_q8');
    expect(table?.dataType).toBe(onnxProto.onnx.TensorProto.DataType.INT8);
    expect(table?.dims?.map(Number)).toEqual([30_005, 100]);
    expect(node[0]?.input).toEqual(['embeddings_q8', 'input_ids']);
  });

  test('tokenizer files are BERT WordPiece with lowercasing and the [CLS] $A [SEP] template', () => {
    const dir = modelDir('engram/glove-100d');
    const tokenizer = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    expect(tokenizer.model.type).toBe('WordPiece');
    expect(tokenizer.normalizer).toMatchObject({ type: 'BertNormalizer', lowercase: true });
    expect(tokenizer.pre_tokenizer.type).toBe('BertPreTokenizer');
    expect(tokenizer.post_processor.single.map((p: object) => Object.values(p)[0].id)).toEqual(['[CLS]', 'A', '[SEP]']);
    expect(Object.keys(tokenizer.model.vocab).slice(0, 7)).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'of']);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ model_type: 'bert', hidden_size: 100, vocab_size: 30_005 });
    expect(JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')).tokenizer_class).toBe('BertTokenizer');
  });

  // Rebuilds both models from scratch: left to `npm test`.
  test.skipIf(FAST_TIER)('builds are deterministic: same bytes, same hash as models/ and as pinned', () => {
    const root = mkdtempSync(join(tmpdir(), 'engram-build-'));
    try {
      const built = {
        glove: buildModel(gloveRecipe(), root).manifest.buildHash,
        tinyBert: buildModel(tinyBertRecipe, root).manifest.buildHash,
      };
      const installed = (id: string) => (JSON.parse(readFileSync(join(modelDir(id), MANIFEST_FILE), 'utf8')) as Manifest).buildHash;
      expect(built).toEqual(EXPECTED_BUILD_HASH);
      expect({ glove: installed('engram/glove-100d'), tinyBert: installed('engram/tiny-random-bert') }).toEqual(EXPECTED_BUILD_HASH);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 180_000);
});
