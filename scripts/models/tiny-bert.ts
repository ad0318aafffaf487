/**
 * A tiny random BERT (2 layers, hidden 32, 2 heads, real self-attention with the padding mask) for tests and
 * benchmarks of the transformer path: same inputs, same output name and the same files as a real BERT export,
 * so it exercises exactly the code a MiniLM or BGE model would, on every device.
 *
 * Weights come from a seeded PRNG, so the build is deterministic. The vocabulary is character-level WordPiece
 * (`c ##a ##t`): any lowercase text tokenizes into a realistic, variable-length sequence without a word list.
 */
import { prng } from '../../src/util/prng.js';
import { configJson, tokenizerConfigJson, tokenizerJson, withSpecialTokens } from './bert-files.js';
import { DataType, encodeModel, floatTensor, int64Tensor, node, valueInfo } from './onnx.js';
import type { ModelFiles } from './model-folder.js';
import type onnxProto from 'onnx-proto';

export const TINY_BERT_MODEL_ID = 'engram/tiny-random-bert';

const HIDDEN = 32;
const HEADS = 2;
const HEAD_DIM = HIDDEN / HEADS;
const LAYERS = 2;
const FFN = 64;
const MAX_POSITIONS = 512;
const SEED = 20240611;

function characterVocab(): string[] {
  const chars = [...'abcdefghijklmnopqrstuvwxyz0123456789'];
  const punctuation = [...'.,!?;:\'"()-/&%$#@*+=<>[]_'];
  return withSpecialTokens([...chars, ...chars.map((c) => `##${c}`), ...punctuation]);
}

export { prng };

/** Graph-building state: unique intermediate names, initializers and nodes in order. */
class Graph {
  readonly nodes: onnxProto.onnx.INodeProto[] = [];
  readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private counter = 0;
  constructor(private readonly random: () => number) {}

  private fresh(prefix: string): string {
    return `${prefix}_${this.counter++}`;
  }

  /** A weight drawn uniformly from ±limit around `center`. */
  weight(name: string, dims: number[], limit: number, center = 0): string {
    const size = dims.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    for (let i = 0; i < size; i++) data[i] = center + (this.random() * 2 - 1) * limit;
    this.initializers.push(floatTensor(name, dims, data));
    return name;
  }

  constant(name: string, value: number): string {
    this.initializers.push(floatTensor(name, [], new Float32Array([value])));
    return name;
  }

  ints(name: string, values: number[], scalar = false): string {
    this.initializers.push(int64Tensor(name, scalar ? [] : [values.length], values));
    return name;
  }

  op(type: string, inputs: string[], attributes: Parameters<typeof node>[3] = {}, output?: string): string {
    const out = output ?? this.fresh(type.toLowerCase());
    this.nodes.push(node(type, inputs, [out], attributes));
    return out;
  }

  linear(x: string, name: string, inSize: number, outSize: number): string {
    const w = this.weight(`${name}.weight`, [inSize, outSize], Math.sqrt(3 / inSize));
    const b = this.weight(`${name}.bias`, [outSize], 0.02);
    return this.op('Add', [this.op('MatMul', [x, w]), b]);
  }

  layerNorm(x: string, name: string, output?: string): string {
    const gamma = this.weight(`${name}.gamma`, [HIDDEN], 0.1, 1);
    const beta = this.weight(`${name}.beta`, [HIDDEN], 0.1);
    const axes = { axes: { ints: [-1] } };
    const centered = this.op('Sub', [x, this.op('ReduceMean', [x], axes)]);
    const variance = this.op('ReduceMean', [this.op('Mul', [centered, centered])], axes);
    const std = this.op('Sqrt', [this.op('Add', [variance, 'eps'])]);
    return this.op('Add', [this.op('Mul', [this.op('Div', [centered, std]), gamma]), beta], {}, output);
  }

  /** [B, S, H] → [B, heads, S, headDim] (or [B, heads, headDim, S] for keys, ready for Q·Kᵀ). */
  splitHeads(x: string, transposedForKeys = false): string {
    const shaped = this.op('Reshape', [x, 'heads_shape']);
    return this.op('Transpose', [shaped], { perm: { ints: transposedForKeys ? [0, 2, 3, 1] : [0, 2, 1, 3] } });
  }
}

function encoderLayer(g: Graph, x: string, maskBias: string, layer: number, output?: string): string {
  const name = `layer${layer}`;
  const q = g.splitHeads(g.linear(x, `${name}.query`, HIDDEN, HIDDEN));
  const k = g.splitHeads(g.linear(x, `${name}.key`, HIDDEN, HIDDEN), true);
  const v = g.splitHeads(g.linear(x, `${name}.value`, HIDDEN, HIDDEN));
  const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), 'attention_scale']), maskBias]);
  const probs = g.op('Softmax', [scores], { axis: { int: -1 } });
  const context = g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: { ints: [0, 2, 1, 3] } });
  const merged = g.op('Reshape', [context, 'hidden_shape']);
  const attended = g.layerNorm(g.op('Add', [x, g.linear(merged, `${name}.output`, HIDDEN, HIDDEN)]), `${name}.attention_norm`);
  // GELU(h) = h/2 · (1 + erf(h/√2)), as in BERT.
  const h = g.linear(attended, `${name}.intermediate`, HIDDEN, FFN);
  const gelu = g.op('Mul', [g.op('Mul', [h, 'half']), g.op('Add', [g.op('Erf', [g.op('Div', [h, 'sqrt2'])]), 'one'])]);
  return g.layerNorm(g.op('Add', [attended, g.linear(gelu, `${name}.ffn_output`, FFN, HIDDEN)]), `${name}.output_norm`, output);
}

function tinyBertOnnx(vocabSize: number): Uint8Array {
  const g = new Graph(prng(SEED));
  g.constant('eps', 1e-12);
  g.constant('one', 1);
  g.constant('half', 0.5);
  g.constant('sqrt2', Math.SQRT2);
  g.constant('attention_scale', 1 / Math.sqrt(HEAD_DIM));
  g.constant('mask_penalty', -10000);
  g.ints('heads_shape', [0, 0, HEADS, HEAD_DIM]);
  g.ints('hidden_shape', [0, 0, HIDDEN]);
  g.ints('mask_axes', [1, 2]);
  g.ints('zero', [0], true);
  g.ints('step', [1], true);
  g.ints('seq_axis', [1], true);

  // Embeddings: word + position + token type, then LayerNorm.
  const words = g.op('Gather', [g.weight('word_embeddings', [vocabSize, HIDDEN], 0.5), 'input_ids'], { axis: { int: 0 } });
  const types = g.op('Gather', [g.weight('token_type_embeddings', [2, HIDDEN], 0.1), 'token_type_ids'], { axis: { int: 0 } });
  const seqLength = g.op('Gather', [g.op('Shape', ['input_ids']), 'seq_axis'], { axis: { int: 0 } });
  const positionIds = g.op('Range', ['zero', seqLength, 'step']);
  const positions = g.op('Gather', [g.weight('position_embeddings', [MAX_POSITIONS, HIDDEN], 0.1), positionIds], { axis: { int: 0 } });
  let x = g.layerNorm(g.op('Add', [g.op('Add', [words, types]), positions]), 'embeddings.norm');

  // Padding positions get −10000 before the softmax, so they take no attention: batching cannot change a row.
  const keep = g.op('Cast', ['attention_mask'], { to: { int: DataType.FLOAT } });
  const maskBias = g.op('Unsqueeze', [g.op('Mul', [g.op('Sub', ['one', keep]), 'mask_penalty']), 'mask_axes']);

  for (let layer = 0; layer < LAYERS; layer++) {
    x = encoderLayer(g, x, maskBias, layer, layer === LAYERS - 1 ? 'last_hidden_state' : undefined);
  }

  return encodeModel({
    name: 'engram_tiny_random_bert',
    inputs: [
      valueInfo('input_ids', DataType.INT64, ['batch', 'sequence']),
      valueInfo('attention_mask', DataType.INT64, ['batch', 'sequence']),
      valueInfo('token_type_ids', DataType.INT64, ['batch', 'sequence']),
    ],
    outputs: [valueInfo('last_hidden_state', DataType.FLOAT, ['batch', 'sequence', HIDDEN])],
    initializers: g.initializers,
    nodes: g.nodes,
    docString: 'Random weights: a test fixture, not a language model.',
  });
}

export function tinyBertModelFiles(): ModelFiles {
  const vocab = characterVocab();
  return {
    'config.json': configJson({
      vocab,
      hiddenSize: HIDDEN,
      numLayers: LAYERS,
      numHeads: HEADS,
      intermediateSize: FFN,
      maxPositions: MAX_POSITIONS,
      modelMaxLength: MAX_POSITIONS,
      provenance: { kind: 'tiny-random-bert', seed: SEED, note: 'random weights, test fixture only' },
    }),
    'tokenizer.json': tokenizerJson(vocab),
    'tokenizer_config.json': tokenizerConfigJson({ modelMaxLength: MAX_POSITIONS }),
    'onnx/model.onnx': tinyBertOnnx(vocab.length),
  };
}
