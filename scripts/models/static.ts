/**
 * Static embedding models (model2vec, e.g. minishlab/potion-base-8M; sentence-transformers StaticEmbedding, e.g.
 * static-retrieval-mrl-en-v1) into a model folder Engram and transformers.js load like any other:
 *
 *   npx tsx scripts/models/static.ts <model2vec-or-sentence-transformers-folder> <out>/<owner>/<name> [--max-tokens N]
 *
 * then `createEmbedder({ model: '<owner>/<name>', modelPath: '<out>' })`.
 *
 * These models are one table: a text's vector is the mean of its tokens' rows (normalised if the model says so).
 * That is the built-in model's architecture, so the output has the same shape: a BERT-style ONNX graph whose
 * `last_hidden_state` is the gathered rows, which Engram (and transformers.js's mean pooling) average over the
 * attention mask. Both libraries tokenize without special tokens, so the tokenizer's post-processor is removed,
 * and model2vec also drops [UNK] from the mean, so for it the [UNK] row is zero and does not count. The graph also
 * has a `sentence_embedding` output: the model's own vector (the masked mean over the tokens that count,
 * normalised when the model is), for runtimes that read that output.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EngramError, ErrorCode } from '../../src/errors.js';
import { configJson } from './bert-files.js';
import { q8LookupNodes, quantizeRows } from './glove.js';
import { sha256, writeModelFolder, type ModelFiles } from './model-folder.js';
import { DataType, encodeModel, floatTensor, int64Tensor, node, tensor, valueInfo } from './onnx.js';
import { parseHeader, readSafetensors } from './safetensors.js';

export type StaticLayout = 'model2vec' | 'sentence-transformers';

/** A static model as read from its folder, with its vocabulary mapping and token weights already applied. */
export interface StaticModel {
  layout: StaticLayout;
  /** tokenizer.json as the model ships it. */
  tokenizer: TokenizerJson;
  /** [rows × dim]: row i is token id i's vector. */
  rows: Float32Array;
  dim: number;
  /** Whether the model L2-normalises its output (model2vec's config `normalize`; a Normalize module in modules.json). */
  normalize: boolean;
  /** Token ids left out of the mean: model2vec drops [UNK]; StaticEmbedding keeps every token. */
  dropped: number[];
  /** Fingerprint of the input files, for the manifest. */
  sourceHash: string;
}

interface AddedToken {
  id: number;
  content: string;
  special?: boolean;
}

interface TokenizerJson {
  added_tokens?: AddedToken[];
  post_processor?: unknown;
  truncation?: unknown;
  padding?: { pad_token?: string } | null;
  model: { type?: string; unk_token?: string | null; unk_id?: number | null; vocab?: Record<string, number> | [string, number][] };
  [key: string]: unknown;
}

function invalid(message: string, details?: Record<string, unknown>): EngramError {
  return new EngramError(ErrorCode.MODEL_INVALID, message, details ? { details } : {});
}

function readJson<T>(path: string): T {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (error) {
    throw invalid(`${path} is not readable JSON: ${(error as Error).message}`);
  }
}

/** Where the weights, tokenizer and config are, as model2vec's own loader looks for them (persistence/datamodels.py). */
function locate(dir: string): { layout: StaticLayout; weights: string; tokenizer: string; tensor: string } {
  const at = (path: string) => join(dir, path);
  if (existsSync(at('model.safetensors')) && existsSync(at('tokenizer.json'))) {
    const header = readSafetensorsNames(at('model.safetensors'));
    if (header.includes('embeddings')) return { layout: 'model2vec', weights: at('model.safetensors'), tokenizer: at('tokenizer.json'), tensor: 'embeddings' };
    if (header.includes('embedding.weight')) {
      return { layout: 'sentence-transformers', weights: at('model.safetensors'), tokenizer: at('tokenizer.json'), tensor: 'embedding.weight' };
    }
  }
  const nested = at('0_StaticEmbedding');
  if (existsSync(join(nested, 'model.safetensors')) && existsSync(join(nested, 'tokenizer.json'))) {
    return { layout: 'sentence-transformers', weights: join(nested, 'model.safetensors'), tokenizer: join(nested, 'tokenizer.json'), tensor: 'embedding.weight' };
  }
  throw new EngramError(
    ErrorCode.MODEL_NOT_FOUND,
    `${dir} holds no static model: expected model.safetensors (tensor "embeddings" or "embedding.weight") and tokenizer.json, or 0_StaticEmbedding/ with both`,
    { details: { dir } },
  );
}

function readSafetensorsNames(path: string): string[] {
  return Object.keys(parseHeader(readFileSync(path)).entries);
}

/** Every token id the tokenizer can produce. */
function tokenIds(tokenizer: TokenizerJson): number[] {
  const vocab = tokenizer.model?.vocab;
  const ids = Array.isArray(vocab) ? vocab.map((_, id) => id) : Object.values(vocab ?? {});
  return [...ids, ...(tokenizer.added_tokens ?? []).map((token) => token.id)];
}

function unkId(tokenizer: TokenizerJson): number | null {
  const model = tokenizer.model;
  if (typeof model.unk_id === 'number') return model.unk_id;
  if (typeof model.unk_token !== 'string') return null;
  const vocab = model.vocab;
  const fromVocab = vocab && !Array.isArray(vocab) ? vocab[model.unk_token] : undefined;
  return fromVocab ?? tokenizer.added_tokens?.find((token) => token.content === model.unk_token)?.id ?? null;
}

export function readStaticModel(dir: string): StaticModel {
  const { layout, weights, tokenizer: tokenizerPath, tensor: tensorName } = locate(dir);
  const bytes = readFileSync(weights);
  const tensors = readSafetensors(bytes, [tensorName, 'weights', 'mapping']);
  const embeddings = tensors.get(tensorName);
  if (!embeddings || embeddings.shape.length !== 2 || !['F32', 'F16', 'BF16', 'F64'].includes(embeddings.dtype)) {
    throw invalid(`${weights}: "${tensorName}" must be a 2-d float tensor`, { shape: embeddings?.shape, dtype: embeddings?.dtype });
  }
  const [tableRows, dim] = embeddings.shape as [number, number];
  const tokenWeights = tensors.get('weights')?.values;
  const mapping = tensors.get('mapping')?.values;
  const tokenizerText = readFileSync(tokenizerPath, 'utf8');
  const tokenizer = readJson<TokenizerJson>(tokenizerPath);
  if (typeof tokenizer.model !== 'object' || tokenizer.model === null) throw invalid(`${tokenizerPath} has no tokenizer model`);
  const ids = tokenIds(tokenizer);
  const vocabSize = ids.reduce((max, id) => Math.max(max, id), -1) + 1;
  // Vocabulary quantisation maps every token id to a shared row; without it, token id = row.
  const covered = Math.min(mapping?.length ?? tableRows, tokenWeights?.length ?? Infinity);
  if (covered < vocabSize) {
    throw invalid(`${weights}: the tokenizer has ids up to ${vocabSize - 1}, but "${tensorName}"/mapping/weights cover ${covered}`, { vocabSize, tableRows });
  }
  const rows = new Float32Array(vocabSize * dim);
  for (let id = 0; id < vocabSize; id++) {
    const source = mapping ? (mapping[id] as number) : id;
    if (!(source >= 0 && source < tableRows)) throw invalid(`mapping sends token ${id} to row ${source} of ${tableRows}`);
    const weight = tokenWeights ? (tokenWeights[id] as number) : 1;
    for (let k = 0; k < dim; k++) rows[id * dim + k] = (embeddings.values[source * dim + k] as number) * weight;
  }
  const unk = layout === 'model2vec' ? unkId(tokenizer) : null;
  return {
    layout,
    tokenizer,
    rows,
    dim,
    normalize: normalizes(dir, layout),
    dropped: unk === null ? [] : [unk],
    sourceHash: sha256(sha256(bytes) + sha256(tokenizerText)),
  };
}

/** model2vec: config.json `normalize` (false when absent, as in StaticModel). StaticEmbedding: a Normalize module. */
function normalizes(dir: string, layout: StaticLayout): boolean {
  if (layout === 'model2vec') {
    const path = join(dir, 'config.json');
    return existsSync(path) && readJson<{ normalize?: unknown }>(path).normalize === true;
  }
  const modules = join(dir, 'modules.json');
  if (!existsSync(modules)) return false;
  return readJson<{ type?: string }[]>(modules).some((module) => module.type === 'sentence_transformers.models.Normalize');
}

/**
 * Static models truncate nothing (StaticEmbedding) or at 512 tokens (model2vec's `encode` default); Engram's
 * tokenizer cuts at `model_max_length`.
 */
export const STATIC_MAX_TOKENS: Record<StaticLayout, number> = { model2vec: 512, 'sentence-transformers': 8192 };

export interface StaticOptions {
  maxTokens?: number;
}

/** The model's tokenizer without the steps neither library applies when embedding: special tokens, padding, truncation. */
function engramTokenizer(tokenizer: TokenizerJson): TokenizerJson {
  return { ...tokenizer, post_processor: null, truncation: null, padding: null };
}

/** A pad token (never counted: the mask drops it): the tokenizer's own, else a conventional one, else its [UNK]. */
function padToken(tokenizer: TokenizerJson): string {
  const added = tokenizer.added_tokens ?? [];
  const known = ['[PAD]', '<pad>', '<|padding|>', '<|endoftext|>'].find((token) => added.some((t) => t.content === token));
  const pad = tokenizer.padding?.pad_token ?? known ?? tokenizer.model.unk_token ?? added[0]?.content;
  if (!pad) throw invalid('the tokenizer has no pad, unk or added token to pad batches with');
  return pad;
}

/**
 * Inputs: the two a tokenizer gives. Outputs: the gathered rows ([batch, sequence, dim]) and the sentence vector.
 * `table` nodes turn input_ids into `last_hidden_state`; the rest pools:
 * sentence = Σ rows · keep · mask / max(1, Σ keep · mask), then / max(‖·‖, 1e-12) when normalising.
 */
function staticGraph(name: string, dim: number, table: { nodes: ReturnType<typeof node>[]; initializers: ReturnType<typeof tensor>[] }, keep: Float32Array, normalize: boolean, metadata: Record<string, string>): Uint8Array {
  const pooling = [
    node('Gather', ['keep', 'input_ids'], ['kept'], { axis: { int: 0 } }),
    node('Cast', ['attention_mask'], ['mask_f32'], { to: { int: DataType.FLOAT } }),
    node('Mul', ['kept', 'mask_f32'], ['token_weights']),
    node('Unsqueeze', ['token_weights', 'last_axis'], ['token_weights_3d']),
    node('Mul', ['last_hidden_state', 'token_weights_3d'], ['weighted']),
    node('ReduceSum', ['weighted', 'sequence_axis'], ['summed'], { keepdims: { int: 0 } }),
    node('ReduceSum', ['token_weights', 'sequence_axis'], ['counted'], { keepdims: { int: 1 } }),
    // An empty text (or one of dropped tokens only) sums to zero: dividing by 1 keeps it the zero vector.
    node('Max', ['counted', 'one'], ['count']),
    node('Div', ['summed', 'count'], normalize ? ['mean'] : ['sentence_embedding']),
    ...(normalize
      ? [
          node('ReduceL2', ['mean'], ['length'], { axes: { ints: [1] }, keepdims: { int: 1 } }),
          node('Max', ['length', 'tiny'], ['safe_length']),
          node('Div', ['mean', 'safe_length'], ['sentence_embedding']),
        ]
      : []),
  ];
  return encodeModel({
    name,
    inputs: [valueInfo('input_ids', DataType.INT64, ['batch', 'sequence']), valueInfo('attention_mask', DataType.INT64, ['batch', 'sequence'])],
    outputs: [valueInfo('last_hidden_state', DataType.FLOAT, ['batch', 'sequence', dim]), valueInfo('sentence_embedding', DataType.FLOAT, ['batch', dim])],
    initializers: [
      ...table.initializers,
      floatTensor('keep', [keep.length], keep),
      int64Tensor('last_axis', [1], [-1]),
      int64Tensor('sequence_axis', [1], [1]),
      floatTensor('one', [1], Float32Array.of(1)),
      floatTensor('tiny', [1], Float32Array.of(1e-12)),
    ],
    nodes: [...table.nodes, ...pooling],
    metadata,
  });
}

function fp32Table(rows: Float32Array, dim: number) {
  return {
    initializers: [floatTensor('embeddings', [rows.length / dim, dim], rows)],
    nodes: [node('Gather', ['embeddings', 'input_ids'], ['last_hidden_state'], { axis: { int: 0 } })],
  };
}

/** Per-row int8, as the built-in model's q8 file: gather int8 rows and their scales, dequantise what was gathered. */
function q8Table(rows: Float32Array, dim: number) {
  const { values, scales } = quantizeRows(rows, dim);
  return {
    initializers: [tensor('embeddings_q8', DataType.INT8, [rows.length / dim, dim], values), floatTensor('row_scales', [scales.length], scales)],
    nodes: q8LookupNodes(),
  };
}

export function staticModelFiles(model: StaticModel, source: string, options: StaticOptions = {}): ModelFiles {
  const maxTokens = options.maxTokens ?? STATIC_MAX_TOKENS[model.layout];
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new EngramError(ErrorCode.INVALID_INPUT, `--max-tokens must be a positive integer, got ${maxTokens}`);
  const count = model.rows.length / model.dim;
  const rows = model.rows.slice();
  const keep = new Float32Array(count).fill(1);
  for (const id of model.dropped) {
    keep[id] = 0;
    rows.fill(0, id * model.dim, (id + 1) * model.dim);
  }
  const tokenizer = engramTokenizer(model.tokenizer);
  const provenance = {
    kind: 'static',
    source,
    layout: model.layout,
    normalize: model.normalize,
    droppedTokenIds: model.dropped,
    maxTokens,
    sourceHash: model.sourceHash,
  };
  const metadata = { source, layout: model.layout, normalize: String(model.normalize) };
  return {
    'config.json': configJson({
      vocab: new Array<string>(count).fill(''),
      hiddenSize: model.dim,
      numLayers: 0,
      numHeads: 1,
      intermediateSize: 0,
      maxPositions: maxTokens,
      modelMaxLength: maxTokens,
      provenance,
    }),
    'tokenizer.json': JSON.stringify(tokenizer),
    'tokenizer_config.json': JSON.stringify(
      { model_max_length: maxTokens, pad_token: padToken(model.tokenizer), unk_token: model.tokenizer.model.unk_token ?? null, clean_up_tokenization_spaces: true },
      null,
      2,
    ),
    'onnx/model.onnx': staticGraph('engram_static', model.dim, fp32Table(rows, model.dim), keep, model.normalize, metadata),
    'onnx/model_quantized.onnx': staticGraph('engram_static_q8', model.dim, q8Table(rows, model.dim), keep, model.normalize, metadata),
  };
}

/** Reads `input`, writes the Engram model folder `output` (atomically, with a manifest); returns what it wrote. */
export function convertStaticModel(input: string, output: string, options: StaticOptions = {}): { dir: string; files: string[]; model: StaticModel } {
  const model = readStaticModel(input);
  const files = staticModelFiles(model, basename(resolve(input)), options);
  writeModelFolder(output, files, model.sourceHash);
  return { dir: output, files: Object.keys(files), model };
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'max-tokens': { type: 'string' } } });
  const [input, output] = positionals;
  if (!input || !output) {
    console.error('usage: npx tsx scripts/models/static.ts <model2vec-or-StaticEmbedding-folder> <out>/<owner>/<name> [--max-tokens N]');
    process.exit(2);
  }
  const maxTokens = values['max-tokens'] === undefined ? undefined : Number(values['max-tokens']);
  const { model } = convertStaticModel(input, output, { maxTokens });
  const owner = basename(dirname(resolve(output)));
  console.log(
    `converted ${input} (${model.layout}, ${model.rows.length / model.dim} tokens × ${model.dim}, normalize ${model.normalize}) → ${output}\n` +
      `load it with createEmbedder({ model: '${owner}/${basename(resolve(output))}', modelPath: '${dirname(dirname(resolve(output)))}' })`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();
