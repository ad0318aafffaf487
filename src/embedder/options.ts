/** Options of `createEmbedder`, every default documented here and applied once in `resolveEmbedderOptions`. */
import type { Embedder } from '../types.js';
import { invalidInput } from '../errors.js';
import { checkKnownKeys, keysOf, type KeySet } from '../util/keys.js';

/**
 * The built-in model: GloVe 6B 100-d word vectors (SIF-weighted, 30k words) packed as a BERT-shaped ONNX model by
 * `npm run model` into `models/engram/glove-100d/`. transformers.js wants `owner/name` ids, hence the two levels.
 */
export const BUILTIN_MODEL = 'engram/glove-100d';

/** `'cpu'` and `'wasm'` both mean "this platform's CPU backend": onnxruntime-node in Node, WASM in a browser. */
export type EmbedderDevice = 'auto' | 'webgpu' | 'wasm' | 'cpu';
/** The device actually running the model. */
export type ActiveDevice = 'cpu' | 'wasm' | 'webgpu';
/** transformers.js dtypes; each picks an ONNX file (`q8` → onnx/model_quantized.onnx, `fp32` → onnx/model.onnx). */
export type EmbedderDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4';

/**
 * How token vectors become one text vector: the mean over the attention mask (MiniLM, E5, the built-in), the first
 * token (BGE) or the last real token, wherever the padding is (Qwen3-Embedding).
 */
export type Pooling = 'mean' | 'cls' | 'lasttoken';

/** What a text is embedded as: asymmetric models prefix queries and documents with different prompts. */
export type EmbedRole = 'query' | 'document';

/** The text put before each query or document; `''` for none. */
export interface EmbedderPrompts {
  query?: string;
  document?: string;
}

/** Where ONNX Runtime's WASM files come from: a folder URL, or the two files. Never a CDN by default. */
export type WasmPaths = string | { mjs: string; wasm: string };

/** transformers.js's own progress events (`initiate`, `download`, `progress`, `done`, `ready`, …) plus the device choice. */
export type EmbedderProgress =
  | { status: 'initiate' | 'download' | 'done'; name: string; file: string }
  | { status: 'progress'; name: string; file: string; progress: number; loaded: number; total: number }
  | { status: 'progress_total'; name: string; progress: number; loaded: number; total: number; files: Record<string, { loaded: number; total: number }> }
  | { status: 'ready'; task: string; model: string }
  | { status: 'calibrate'; device: ActiveDevice }
  | { status: 'device'; device: ActiveDevice; reason: DeviceReason };

export interface EmbedderOptions {
  /** Model id (`owner/name`) under `modelPath`, or on the Hugging Face Hub when `allowRemote`. Default: `BUILTIN_MODEL`. */
  model?: string;
  /**
   * Folder (Node) or URL (browser) holding `<owner>/<name>/` model folders.
   * Default: Node → this package's `models/` folder. Browser → the built-in model's files come with the package (the
   * app's bundler emits them); any other model is looked for under `/models/` on the page's own origin.
   */
  modelPath?: string;
  /** Let transformers.js download from the Hugging Face Hub when the model is not under `modelPath`. Default: false. */
  allowRemote?: boolean;
  /** Default `'auto'`: Node → CPU; browser → WebGPU only if an adapter exists and a calibration run shows it faster. */
  device?: EmbedderDevice;
  /**
   * Default per device: `'q8'` on the CPU and WASM; on WebGPU `'fp16'` when the model has that file and the adapter
   * has `shader-f16`, else `'fp32'` (q8 is slow there and wrong on some GPUs). The built-in model ships q8 only and
   * uses it everywhere. An explicit dtype is used on every device; `'fp16'`/`'q4f16'` need `shader-f16` on WebGPU and
   * run on WASM without it.
   */
  dtype?: EmbedderDtype;
  /**
   * Default: what the model's sentence-transformers config (`modules.json`, `1_Pooling/config.json`) says, or its
   * ONNX `sentence_embedding` output when it has one; `'mean'` for a model without that config. Then L2 normalisation.
   * An explicit pooling wins over the config and the output.
   */
  pooling?: Pooling;
  /**
   * The prompts put before queries and documents. Default: the model's (`config_sentence_transformers.json`
   * `prompts`: `query`/`search_query`, `document`/`passage`/`search_document`, or `default_prompt_name`), else none.
   * Each given prompt replaces the model's; `''` means none.
   */
  prompts?: EmbedderPrompts;
  /** Matryoshka: keep the first `dimensions` values, then renormalise (models trained for it). At most the model's size. */
  dimensions?: number;
  /**
   * Tokens per model run, special tokens included. Default: the model's `max_seq_length` (sentence_bert_config.json),
   * else its tokenizer's `model_max_length` and `max_position_embeddings`, at most 8192. A longer text is embedded as
   * `longText` says.
   */
  maxTokens?: number;
  /**
   * A text longer than `maxTokens`: `'chunks'` embeds every chunk and takes their token-weighted mean; `'truncate'`
   * embeds the first chunk only, as sentence-transformers does. Default: `'chunks'` (measured in docs/embedder.md).
   */
  longText?: LongText;
  /** Hub revision (branch, tag or commit) downloaded with `allowRemote`; named in the vector space. Default: `'main'`. */
  revision?: string;
  /**
   * Texts per model run. Default 16: in Node, 8–16 beat 1, 32 and 64 for both the built-in model and the tiny BERT
   * (bigger tensors cost more in tokenizer padding and memory than the runs save). Texts are sorted by length before
   * batching, so padding stays small. On a real GPU, larger batches may pay off.
   */
  batchSize?: number;
  /** Model loading progress. */
  onProgress?: (progress: EmbedderProgress) => void;
  /** Browser only. Default: ONNX Runtime's own WASM files, which the app's bundler emits and serves from its origin. */
  wasmPaths?: WasmPaths;
  /** Browser only: keep the `'auto'` calibration result in IndexedDB (per origin, model and browser). Default: true. */
  rememberDevice?: boolean;
  /**
   * Aborts loading: `createEmbedder` rejects with ABORTED at once, and a model that finishes loading after that is
   * disposed. Not a `createMemory` embedder option (its own `signal` covers its open; the model loads after). Default none.
   */
  signal?: AbortSignal;
}

/** Options that come from the model when not given stay undefined here. */
type ModelDerived = 'dtype' | 'pooling' | 'prompts' | 'dimensions' | 'maxTokens' | 'revision';

export type ResolvedEmbedderOptions = Required<Omit<EmbedderOptions, 'onProgress' | 'wasmPaths' | 'modelPath' | 'signal' | ModelDerived>> &
  Pick<EmbedderOptions, 'onProgress' | 'wasmPaths' | ModelDerived> & { modelPath: string };

/** What a text longer than the model's length becomes (`EmbedderOptions.longText`). */
export type LongText = 'chunks' | 'truncate';

export const EMBEDDER_DEFAULTS = {
  model: BUILTIN_MODEL,
  longText: 'chunks',
  allowRemote: false,
  device: 'auto',
  batchSize: 16,
  rememberDevice: true,
} as const satisfies Partial<EmbedderOptions>;

/** The dtype on the CPU and WASM unless one is given, and the one the vector space is named after. */
export const CPU_DTYPE: EmbedderDtype = 'q8';

const DEVICES: readonly EmbedderDevice[] = ['auto', 'webgpu', 'wasm', 'cpu'];
const DTYPES: readonly EmbedderDtype[] = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4'];
const POOLINGS: readonly Pooling[] = ['mean', 'cls', 'lasttoken'];
const LONG_TEXTS: readonly LongText[] = ['chunks', 'truncate'];

/** Every `createEmbedder` option, checked against `EmbedderOptions` at compile time; any other name is refused. */
export const EMBEDDER_OPTION_KEYS = keysOf<EmbedderOptions>({
  model: true,
  modelPath: true,
  allowRemote: true,
  device: true,
  dtype: true,
  pooling: true,
  prompts: true,
  dimensions: true,
  maxTokens: true,
  revision: true,
  batchSize: true,
  onProgress: true,
  wasmPaths: true,
  rememberDevice: true,
  longText: true,
  signal: true,
} satisfies KeySet<EmbedderOptions>);

/** INVALID_INPUT for an option `createEmbedder` does not have (`{ modelId }` would load the built-in model). */
export function checkEmbedderOptionKeys(options: unknown): void {
  checkKnownKeys(options, EMBEDDER_OPTION_KEYS, { aliases: { modelid: 'model', name: 'model', id: 'model', path: 'modelPath', quantization: 'dtype', backend: 'device' } });
  checkKnownKeys((options as EmbedderOptions | null | undefined)?.prompts, ['query', 'document'], { prefix: 'prompts.', aliases: { passage: 'document', search_query: 'query', search_document: 'document' } });
}

export function resolveEmbedderOptions(options: EmbedderOptions, defaultModelPath: string): ResolvedEmbedderOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput('embedder options must be an object');
  checkEmbedderOptionKeys(options);
  const { signal: _signal, ...given } = options;
  const resolved = { ...EMBEDDER_DEFAULTS, ...definedOnly(given) };
  if (typeof resolved.model !== 'string' || resolved.model.trim() === '') throw invalidInput('embedder model must be a non-empty string');
  if (!DEVICES.includes(resolved.device)) throw invalidInput(`embedder device must be one of ${DEVICES.join(', ')}`, { device: resolved.device });
  if (resolved.dtype !== undefined && !DTYPES.includes(resolved.dtype)) throw invalidInput(`embedder dtype must be one of ${DTYPES.join(', ')}`, { dtype: resolved.dtype });
  if (resolved.pooling !== undefined && !POOLINGS.includes(resolved.pooling)) {
    throw invalidInput(`embedder pooling must be one of ${POOLINGS.join(', ')}`, { pooling: resolved.pooling });
  }
  if (!LONG_TEXTS.includes(resolved.longText)) throw invalidInput(`embedder longText must be one of ${LONG_TEXTS.join(', ')}`, { longText: resolved.longText });
  for (const name of ['batchSize', 'dimensions', 'maxTokens'] as const) {
    const value = resolved[name];
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) throw invalidInput(`embedder ${name} must be a positive integer`, { [name]: value });
  }
  if (resolved.maxTokens !== undefined && resolved.maxTokens < 4) throw invalidInput('embedder maxTokens must be at least 4', { maxTokens: resolved.maxTokens });
  if (resolved.revision !== undefined && (typeof resolved.revision !== 'string' || resolved.revision.trim() === '')) {
    throw invalidInput('embedder revision must be a non-empty string');
  }
  const prompts = resolved.prompts;
  if (prompts !== undefined) {
    const bad = typeof prompts !== 'object' || prompts === null || Object.entries(prompts).some(([k, v]) => !['query', 'document'].includes(k) || (v !== undefined && typeof v !== 'string'));
    if (bad) throw invalidInput('embedder prompts must be { query?: string, document?: string }');
  }
  return { ...resolved, modelPath: withTrailingSlash(options.modelPath ?? defaultModelPath) };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function withTrailingSlash(path: string): string {
  return path.endsWith('/') ? path : `${path}/`;
}

/** Why the embedder runs where it runs: shown in traces and the demo. */
export type DeviceReason =
  /** Node: onnxruntime-node on the CPU. */
  | 'node'
  /** The caller asked for this device. */
  | 'requested'
  /** `'auto'` or `'webgpu'`, but the browser offers no WebGPU adapter. */
  | 'no-webgpu'
  /** `'auto'`: both devices ran the calibration batch; this one was faster. */
  | 'calibrated'
  /** `'auto'`: WebGPU's calibration vectors differ from WASM's (cosine below 0.99 for some text), so WASM runs. */
  | 'webgpu-disagrees'
  /** `'auto'`: an earlier calibration in this origin, for this model and browser, decided. */
  | 'remembered'
  /** WebGPU failed to load or run; the embedder moved to WASM for good. */
  | 'webgpu-failed';

export interface DeviceChoice {
  device: ActiveDevice;
  reason: DeviceReason;
  /** Milliseconds per calibration batch on each device, when a calibration ran (now or when remembered). */
  timings?: { wasm: number; webgpu: number };
  /** The WebGPU error, when reason is 'webgpu-failed'. */
  error?: string;
  /** The lowest cosine between WebGPU's and WASM's vector of one calibration text, when a calibration compared them. */
  minCosine?: number;
  /**
   * Whether the WebGPU adapter offers `shader-f16`, when one was found. Without it fp16 cannot run there: the
   * default dtype on WebGPU is then fp32 even for a model with an fp16 file, and an fp16 asked for moves to WASM.
   */
  shaderF16?: boolean;
}

/** What `createEmbedder` returns: the engine's `Embedder`, plus what it runs on and why. */
export interface LocalEmbedder extends Embedder {
  /** `<vector space>/<device>`, e.g. `engram-glove-100d@q8/wasm`; changes if WebGPU fails over to WASM. */
  readonly id: string;
  /** `<model, '/' → '-'>@<dtype>` plus a suffix for each non-default setting (see `embedderId`). */
  readonly vectorSpace: string;
  readonly model: string;
  /** The dtype running now (on WebGPU it may differ from the CPU dtype the vector space names). */
  readonly dtype: EmbedderDtype;
  /** The pooling in use: the option, the model's config, or `'output'` for the model's `sentence_embedding` output. */
  readonly pooling: Pooling | 'output';
  /** The prompts in use per role (`''`: none). */
  readonly prompts: Required<EmbedderPrompts>;
  /** Tokens per model run; longer texts are embedded as `longText` says. */
  readonly maxTokens: number;
  readonly longText: LongText;
  readonly device: ActiveDevice;
  readonly deviceChoice: DeviceChoice;
  /** Milliseconds from `createEmbedder` to ready, including any calibration. */
  readonly loadMs: number;
  /** Tokens of `text` under the model's tokenizer, without [CLS]/[SEP]. */
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

/** What makes vectors of one model differ; each non-default part adds a suffix to the vector space. */
export interface VectorSpaceParts {
  model: string;
  dtype: string;
  pooling: Pooling | 'output';
  prompts: Required<EmbedderPrompts>;
  /** Only when truncated below the model's size. */
  dimensions?: number;
  /** Only when set by the caller (the model's own length is part of the model). */
  maxTokens?: number;
  /** Only when not the default. */
  longText?: LongText;
  revision?: string;
}

/**
 * `model@dtype[-pooling][-p<hash>][-len<n>][-<longText>][-d<n>][-r<revision>]`, `/` in the model id as `-`, so the only `/` left
 * separates the device: `engram-glove-100d@q8/wasm`. Defaults add nothing, so stored vectors of a model keep their key.
 */
export function embedderId(parts: VectorSpaceParts, device?: ActiveDevice): string {
  const { prompts } = parts;
  const suffixes = [
    parts.pooling === 'mean' ? '' : `-${parts.pooling}`,
    prompts.query === '' && prompts.document === '' ? '' : `-p${fnv1a(`${prompts.query}\u0000${prompts.document}`)}`,
    parts.maxTokens === undefined ? '' : `-len${parts.maxTokens}`,
    parts.longText === undefined ? '' : `-${parts.longText}`,
    parts.dimensions === undefined ? '' : `-d${parts.dimensions}`,
    parts.revision === undefined || parts.revision === 'main' ? '' : `-r${parts.revision.replaceAll('/', '-')}`,
  ];
  const space = `${parts.model.replaceAll('/', '-')}@${parts.dtype}${suffixes.join('')}`;
  return device === undefined ? space : `${space}/${device}`;
}

/** 32-bit FNV-1a as 8 hex digits: a short, stable name for a pair of prompts. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
