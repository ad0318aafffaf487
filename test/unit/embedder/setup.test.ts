/** The pure parts of the transformer path: the sentence-transformers config, chunking, and the devices' agreement. */
import { describe, expect, test } from 'vitest';
import { minCosine } from '../../../src/embedder/device.js';
import { embedderId } from '../../../src/embedder/options.js';
import { chunkIds, padBatch } from '../../../src/embedder/sequences.js';
import { readSentenceTransformers } from '../../../src/embedder/st-config.js';

const files = (config: unknown) => ({ modules: null, pooling: null, config, bertConfig: null });

describe('prompts from config_sentence_transformers.json', () => {
  test.each([
    [{ prompts: { query: 'q: ', document: 'd: ' } }, { query: 'q: ', document: 'd: ' }],
    [{ prompts: { query: 'query: ', passage: 'passage: ' } }, { query: 'query: ', document: 'passage: ' }],
    [{ prompts: { search_query: 'search_query: ', search_document: 'search_document: ', clustering: 'c: ' } }, { query: 'search_query: ', document: 'search_document: ' }],
    [{ prompts: { query: 'Instruct: x\nQuery:', document: '' } }, { query: 'Instruct: x\nQuery:', document: '' }],
    [{ prompts: { retrieval: 'r: ' }, default_prompt_name: 'retrieval' }, { query: 'r: ', document: 'r: ' }],
    [{ prompts: {}, default_prompt_name: null }, { query: '', document: '' }],
    [null, { query: '', document: '' }],
  ])('%j', (config, prompts) => {
    expect(readSentenceTransformers('m', files(config)).prompts).toEqual(prompts);
  });
});

test('max_seq_length comes from sentence_bert_config.json', () => {
  expect(readSentenceTransformers('m', { ...files(null), bertConfig: { max_seq_length: 256 } }).maxSeqLength).toBe(256);
  expect(readSentenceTransformers('m', files(null)).maxSeqLength).toBeUndefined();
});

describe('chunks keep the special tokens and the prompt', () => {
  const framing = { prefix: 1, suffix: 1 };
  test('a sequence that fits is itself', () => {
    expect(chunkIds([101, 5, 6, 102], framing, 8)).toEqual([{ ids: [101, 5, 6, 102], weight: 2 }]);
  });
  test('a longer one: chunks of the body between [CLS] + prompt and [SEP], weighted by their text tokens', () => {
    expect(chunkIds([101, 9, 1, 2, 3, 4, 5, 102], framing, 5, 1)).toEqual([
      { ids: [101, 9, 1, 2, 102], weight: 2 },
      { ids: [101, 9, 3, 4, 102], weight: 2 },
      { ids: [101, 9, 5, 102], weight: 1 },
    ]);
  });
  test('a prompt that leaves no room is cut with the text, the final token kept', () => {
    expect(chunkIds([101, 9, 9, 9, 1, 102], framing, 4, 3)).toEqual([
      { ids: [101, 9, 9, 102], weight: 2 },
      { ids: [101, 9, 1, 102], weight: 2 },
    ]);
  });
  test('an EOS-only tokenizer (Qwen3) keeps its EOS', () => {
    expect(chunkIds([1, 2, 3, 4, 0], { prefix: 0, suffix: 1 }, 3).map((c) => c.ids)).toEqual([[1, 2, 0], [3, 4, 0]]);
  });
});

test('padding goes on the tokenizer side', () => {
  const left = padBatch([[7], [7, 8, 9]], 0, 'left');
  expect([...left.ids].map(Number)).toEqual([0, 0, 7, 7, 8, 9]);
  expect([...left.mask].map(Number)).toEqual([0, 0, 1, 1, 1, 1]);
  expect([...padBatch([[7], [7, 8]], 5, 'right').ids].map(Number)).toEqual([7, 5, 7, 8]);
});

test('agreement between devices is the lowest per-text cosine; zeros agree only with zeros', () => {
  const a = [Float32Array.of(1, 0), Float32Array.of(0, 1), Float32Array.of(0, 0)];
  expect(minCosine(a, [Float32Array.of(1, 0), Float32Array.of(0, 1), Float32Array.of(0, 0)])).toBe(1);
  expect(minCosine(a, [Float32Array.of(1, 0), Float32Array.of(0.6, 0.8), Float32Array.of(0, 0)])).toBeCloseTo(0.8, 6);
  expect(minCosine(a, [Float32Array.of(1, 0), Float32Array.of(0, 1), Float32Array.of(1, 0)])).toBe(0);
});

test('the vector space names only what is not the default', () => {
  const base = { model: 'engram/glove-100d', dtype: 'q8', pooling: 'mean', prompts: { query: '', document: '' } } as const;
  expect(embedderId(base)).toBe('engram-glove-100d@q8');
  expect(embedderId(base, 'wasm')).toBe('engram-glove-100d@q8/wasm');
  expect(embedderId({ ...base, pooling: 'cls' })).toBe('engram-glove-100d@q8-cls');
  expect(embedderId({ ...base, pooling: 'output', dimensions: 256, maxTokens: 512, revision: 'v1.5' })).toBe('engram-glove-100d@q8-output-len512-d256-rv1.5');
  const prompted = embedderId({ ...base, prompts: { query: 'query: ', document: 'passage: ' } });
  expect(prompted).toMatch(/^engram-glove-100d@q8-p[0-9a-f]{8}$/);
  expect(embedderId({ ...base, prompts: { query: 'query: ', document: '' } })).not.toBe(prompted);
});
