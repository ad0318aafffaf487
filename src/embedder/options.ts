/** Options of `createEmbedder`, every default documented here and applied once in `resolveEmbedderOptions`. */
import type { Embedder } from '../types.js';
import { invalidInput } from '../errors.js';

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

/** How token vectors become one text vector. BGE models were trained with 'cls'; MiniLM, E5 and the built-in use 'mean'. */
export type Pooling = 'mean' | 'cls';

/** Where ONNX Runtime's WASM files come from: a folder URL, or the two files. Never a CDN by default. */
export type WasmPaths = string | { mjs: string; wasm: string };

/** transformers.js's own progress events (`initiate`, `download`, `progress`, `done`, `ready`, …) plus the device choice. */
export type EmbedderProgress =
  | { status: 'initiate' | 'download' | 'done'; name: string; file: string }
  | { status: 'progress'; name: string; file: string; progress: number; loaded: number; total: number }
  | { status: 'progress_total'; name: string; progress: number; loaded: number; total: number }
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
  /** Default `'q8'` (the built-in model's quantized table; Xenova/* models ship q8 too). Use `'fp32'` for fp32-only models. */
  dtype?: EmbedderDtype;
  /** Default `'mean'` (over the attention mask), then L2 normalisation. */
  pooling?: Pooling;
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
}

export type ResolvedEmbedderOptions = Required<Omit<EmbedderOptions, 'onProgress' | 'wasmPaths' | 'modelPath'>> &
  Pick<EmbedderOptions, 'onProgress' | 'wasmPaths'> & { modelPath: string };

export const EMBEDDER_DEFAULTS = {
  model: BUILTIN_MODEL,
  allowRemote: false,
  device: 'auto',
  dtype: 'q8',
  pooling: 'mean',
  batchSize: 16,
  rememberDevice: true,
} as const satisfies Partial<EmbedderOptions>;

const DEVICES: readonly EmbedderDevice[] = ['auto', 'webgpu', 'wasm', 'cpu'];
const POOLINGS: readonly Pooling[] = ['mean', 'cls'];

export function resolveEmbedderOptions(options: EmbedderOptions, defaultModelPath: string): ResolvedEmbedderOptions {
  const resolved = { ...EMBEDDER_DEFAULTS, ...definedOnly(options) };
  if (typeof resolved.model !== 'string' || resolved.model.trim() === '') throw invalidInput('embedder model must be a non-empty string');
  if (!DEVICES.includes(resolved.device)) throw invalidInput(`embedder device must be one of ${DEVICES.join(', ')}`, { device: resolved.device });
  if (!POOLINGS.includes(resolved.pooling)) throw invalidInput(`embedder pooling must be one of ${POOLINGS.join(', ')}`, { pooling: resolved.pooling });
  if (!Number.isInteger(resolved.batchSize) || resolved.batchSize < 1) {
    throw invalidInput('embedder batchSize must be a positive integer', { batchSize: resolved.batchSize });
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
}

/** What `createEmbedder` returns: the engine's `Embedder`, plus what it runs on and why. */
export interface LocalEmbedder extends Embedder {
  /** `<model, '/' → '-'>@<dtype>[-cls]/<device>`, e.g. `engram-glove-100d@q8/wasm`; changes if WebGPU fails over to WASM. */
  readonly id: string;
  readonly model: string;
  readonly dtype: EmbedderDtype;
  readonly device: ActiveDevice;
  readonly deviceChoice: DeviceChoice;
  /** Milliseconds from `createEmbedder` to ready, including any calibration. */
  readonly loadMs: number;
  /** Tokens of `text` under the model's tokenizer, without [CLS]/[SEP]. */
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

/** `/` in the model id becomes `-`, so the only `/` left separates the device; non-default pooling is named too. */
/** `model@dtype[-pooling]/device`; without a device, the device-independent vector space. */
export function embedderId(model: string, dtype: string, pooling: Pooling, device?: ActiveDevice): string {
  const space = `${model.replaceAll('/', '-')}@${dtype}${pooling === 'mean' ? '' : `-${pooling}`}`;
  return device === undefined ? space : `${space}/${device}`;
}
