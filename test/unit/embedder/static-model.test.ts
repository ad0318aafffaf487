/**
 * Static models (model2vec, sentence-transformers StaticEmbedding) converted by scripts/models/static.ts and loaded
 * through createEmbedder in Node: a fake folder with the real bert-base-uncased vocabulary and seeded rows, and
 * vectors checked against the models' own definition computed in test/unit/helpers/static-model.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEmbedder } from '../../../src/embedder/index.js';
import { isEngramError } from '../../../src/errors.js';
import { readSafetensors, writeSafetensors } from '../../../scripts/models/safetensors.js';
import { convertStaticModel } from '../../../scripts/models/static.js';
import { cosineOf, referenceTokenize, referenceVector, writeFakeStaticModel, type FakeStaticModel } from '../helpers/static-model.js';
import { SAMPLE_TEXTS } from './embedder-cases.js';

/** Sub-words, accents, digits, punctuation, an emoji ([UNK] in this vocabulary), an empty text and one of [UNK] only. */
const TEXTS = [...SAMPLE_TEXTS, 'Embeddings of unbelievably tokenizable words 🙂 — naïve résumé!', '🙂 🙂', 'literal [CLS] and [SEP] text'];

let root: string;
const fakes: Record<string, FakeStaticModel> = {};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'engram-static-'));
  const make = (name: string, options: Parameters<typeof writeFakeStaticModel>[1]) => {
    fakes[name] = writeFakeStaticModel(join(root, 'in', name), options);
    convertStaticModel(join(root, 'in', name), join(root, 'models', 'fake', name));
  };
  make('m2v-f32', { layout: 'model2vec', dtype: 'F32' });
  make('m2v-f16', { layout: 'model2vec', dtype: 'F16', dim: 48, seed: 7 });
  make('st-f16', { layout: 'sentence-transformers', dtype: 'F16', dim: 32, seed: 11, normalize: false });
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function embedAll(name: string, dtype: 'fp32' | 'q8'): Promise<{ vectors: Float32Array[]; counts: number[] }> {
  const embedder = await createEmbedder({ model: `fake/${name}`, modelPath: join(root, 'models'), dtype });
  try {
    expect(embedder.dim).toBe(fakes[name]!.dim);
    return { vectors: await embedder.embed(TEXTS), counts: TEXTS.map((text) => embedder.countTokens(text)) };
  } finally {
    await embedder.dispose();
  }
}

/** Engram's vectors against the reference: the model's direction (Engram always normalises), zero when no token counts. */
function expectReference(name: string, vectors: Float32Array[], dropUnk: boolean, minCosine: number): void {
  const fake = fakes[name]!;
  TEXTS.forEach((text, i) => {
    const expected = referenceVector(fake, text, dropUnk);
    const vector = vectors[i]!;
    if (expected.every((x) => x === 0)) {
      expect(Array.from(vector).every((x) => x === 0), `"${text}" has no token that counts: zero vector`).toBe(true);
      return;
    }
    expect(cosineOf(vector, expected), `"${text}"`).toBeGreaterThanOrEqual(minCosine);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 5);
  });
}

describe('static models converted and loaded through createEmbedder', () => {
  test("the fixture's vocabulary and tokenizer are bert-base-uncased's", () => {
    // Ids as bert-base-uncased gives them: the 1996, [UNK] 100, em ##bed ##ding ##s.
    expect(referenceTokenize(fakes['m2v-f32']!.vocab, 'The embeddings 🙂')).toEqual([1996, 7861, 8270, 4667, 2015, 100]);
  });

  test.each([
    ['m2v-f32', 'fp32', 0.999],
    ['m2v-f32', 'q8', 0.99],
    ['m2v-f16', 'fp32', 0.999],
    ['m2v-f16', 'q8', 0.99],
  ] as const)('model2vec %s, %s: the mean of the text tokens without [UNK], normalised', async (name, dtype, minCosine) => {
    const { vectors, counts } = await embedAll(name, dtype);
    expectReference(name, vectors, true, minCosine);
    // Tokenized as model2vec does: no [CLS]/[SEP] around the text.
    expect(counts).toEqual(TEXTS.map((text) => referenceTokenize(fakes[name]!.vocab, text).length));
  });

  test('StaticEmbedding (0_StaticEmbedding/, no Normalize module): every token counts, [UNK] too', async () => {
    for (const dtype of ['fp32', 'q8'] as const) {
      const { vectors } = await embedAll('st-f16', dtype);
      expectReference('st-f16', vectors, false, dtype === 'fp32' ? 0.999 : 0.99);
    }
    // Without [UNK] the emoji text would differ: the reference tells the two definitions apart.
    const text = TEXTS.at(-3)!;
    expect(cosineOf(referenceVector(fakes['st-f16']!, text, false), referenceVector(fakes['st-f16']!, text, true))).toBeLessThan(0.999);
  });

  test('the sentence_embedding output is the model\'s own vector: masked mean, normalised only when the model is', async () => {
    for (const name of ['m2v-f32', 'st-f16']) {
      const fake = fakes[name]!;
      const session = await ort.InferenceSession.create(join(root, 'models', 'fake', name, 'onnx', 'model.onnx'));
      const batch = TEXTS.slice(0, 6).map((text) => referenceTokenize(fake.vocab, text));
      const width = Math.max(...batch.map((ids) => ids.length));
      const feed = (values: (ids: number[], s: number) => number) =>
        new ort.Tensor('int64', BigInt64Array.from(batch.flatMap((ids) => Array.from({ length: width }, (_, s) => BigInt(values(ids, s))))), [batch.length, width]);
      const output = await session.run({ input_ids: feed((ids, s) => ids[s] ?? 0), attention_mask: feed((ids, s) => (s < ids.length ? 1 : 0)) });
      const sentences = output.sentence_embedding!.data as Float32Array;
      batch.forEach((_, b) => {
        const expected = referenceVector(fake, TEXTS[b]!, name.startsWith('m2v'));
        const actual = sentences.subarray(b * fake.dim, (b + 1) * fake.dim);
        for (let k = 0; k < fake.dim; k++) expect(actual[k]).toBeCloseTo(expected[k]!, 5);
      });
      await session.release();
    }
  });
});

describe('converter input checks', () => {
  test('a folder without a static model is MODEL_NOT_FOUND; a broken safetensors file is MODEL_INVALID', () => {
    const empty = join(root, 'in', 'empty');
    mkdirSync(empty, { recursive: true });
    expect(() => convertStaticModel(empty, join(root, 'models', 'fake', 'empty'))).toThrowError(expect.objectContaining({ code: 'MODEL_NOT_FOUND' }));
    const broken = join(root, 'in', 'broken');
    mkdirSync(broken, { recursive: true });
    const header = new TextEncoder().encode('{"embeddings":{"dtype":"F32","shape":[2,2],"data_offsets":[0,99]}}');
    const bytes = new Uint8Array(8 + header.length + 16);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(header.length), true);
    bytes.set(header, 8);
    writeFileSync(join(broken, 'model.safetensors'), bytes);
    writeFileSync(join(broken, 'tokenizer.json'), '{}');
    let error: unknown;
    try {
      convertStaticModel(broken, join(root, 'models', 'fake', 'broken'));
    } catch (e) {
      error = e;
    }
    expect(isEngramError(error, 'MODEL_INVALID'), String(error)).toBe(true);
  });

  test('safetensors: F16 and BF16 widen exactly; an unknown dtype is MODEL_INVALID', () => {
    const values = [0, 1, -2, 0.5, 65504, 2 ** -24, 1 / 3];
    const f16 = readSafetensors(writeSafetensors({ t: { dtype: 'F16', shape: [values.length], values } })).get('t')!;
    expect(Array.from(f16.values)).toEqual([0, 1, -2, 0.5, 65504, 2 ** -24, 0.333251953125]);
    // BF16 by hand: 1.5 = 0x3fc0, -0.25 = 0xbe80.
    const header = new TextEncoder().encode('{"b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"x":{"dtype":"C64","shape":[1],"data_offsets":[4,12]}}');
    const bytes = new Uint8Array(8 + header.length + 12);
    const view = new DataView(bytes.buffer);
    view.setBigUint64(0, BigInt(header.length), true);
    bytes.set(header, 8);
    view.setUint16(8 + header.length, 0x3fc0, true);
    view.setUint16(8 + header.length + 2, 0xbe80, true);
    expect(Array.from(readSafetensors(bytes, ['b']).get('b')!.values)).toEqual([1.5, -0.25]);
    expect(() => readSafetensors(bytes)).toThrowError(expect.objectContaining({ code: 'MODEL_INVALID' }));
  });
});
