/**
 * `createEmbedder`: the engine's `Embedder` backed by transformers.js feature extraction (mean pooling,
 * L2-normalised, batched), on onnxruntime-node in Node and on WebGPU or WASM in a browser.
 */
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../errors.js';
import { chooseBrowserDevice, rememberChoice, type BrowserDeviceResult } from './device.js';
import { BUILTIN_MODEL_FILES, checkModelFiles, type ModelLocation } from './model-files.js';
import {
  BUILTIN_MODEL,
  embedderId,
  resolveEmbedderOptions,
  type ActiveDevice,
  type DeviceChoice,
  type EmbedderOptions,
  type LocalEmbedder,
  type ResolvedEmbedderOptions,
} from './options.js';
import { defaultModelPath, IS_NODE } from './platform.js';
import { loadModel, type LoadedModel } from './runtime.js';

/**
 * Loads a model (the built-in one by default, from the package; no network) and resolves when it can embed.
 *
 * @example
 * ```ts
 * const embedder = await createEmbedder(); // engram/glove-100d, 100 dimensions
 * const engine = await createEngine({ embedder });
 * // A Hugging Face model, downloaded once:
 * const minilm = await createEmbedder({ model: 'Xenova/all-MiniLM-L6-v2', allowRemote: true });
 * ```
 */
export async function createEmbedder(options: EmbedderOptions = {}): Promise<LocalEmbedder> {
  const started = performance.now();
  const { resolved, location } = locate(options);
  const load = (device: ActiveDevice) =>
    loadModel({
      ...location,
      allowRemote: resolved.allowRemote,
      device,
      pooling: resolved.pooling,
      wasmPaths: resolved.wasmPaths,
      onProgress: resolved.onProgress,
    });
  const chosen: BrowserDeviceResult = IS_NODE
    ? { model: await load('cpu'), choice: { device: 'cpu', reason: resolved.device === 'webgpu' ? 'no-webgpu' : 'node' } }
    : await chooseBrowserDevice({
        requested: resolved.device,
        modelKey: `${resolved.model}@${resolved.dtype}`,
        remember: resolved.rememberDevice,
        load,
        onProgress: resolved.onProgress,
      });
  return new TransformersEmbedder(resolved, chosen, () => load('wasm'), performance.now() - started);
}

/**
 * The options, checked and defaulted, and where the model's files are. In a browser the built-in model comes with
 * this package, as assets the app's bundler emits; in Node it is read from the package's `models/` folder. A
 * caller's own `modelPath` always wins.
 */
function locate(options: EmbedderOptions): { resolved: ResolvedEmbedderOptions; location: ModelLocation } {
  const resolved = resolveEmbedderOptions(options, defaultModelPath());
  const builtin = !IS_NODE && resolved.model === BUILTIN_MODEL && options.modelPath === undefined;
  const location: ModelLocation = { model: resolved.model, modelPath: resolved.modelPath, dtype: resolved.dtype };
  return { resolved, location: builtin ? { ...location, files: BUILTIN_MODEL_FILES } : location };
}

/**
 * Browser only: MODEL_NOT_FOUND unless the files a load needs are where the embedder will look. A HEAD request per
 * file, so a Memory can refuse to open on a missing model without loading it. Remote models are not checked.
 */
export async function checkEmbedderModel(options: EmbedderOptions = {}): Promise<void> {
  const { resolved, location } = locate(options);
  if (IS_NODE || resolved.allowRemote) return;
  await checkModelFiles(location);
}

class TransformersEmbedder implements LocalEmbedder {
  readonly model: string;
  readonly dtype: ResolvedEmbedderOptions['dtype'];
  private readonly pooling: ResolvedEmbedderOptions['pooling'];
  readonly dim: number;
  readonly loadMs: number;
  private active: LoadedModel;
  private choice: DeviceChoice;
  private readonly batchSize: number;
  private readonly memoryKey: string | undefined;
  private failover: Promise<void> | undefined;
  private disposed = false;

  constructor(
    options: ResolvedEmbedderOptions,
    chosen: BrowserDeviceResult,
    private readonly loadWasm: () => Promise<LoadedModel>,
    loadMs: number,
  ) {
    this.model = options.model;
    this.dtype = options.dtype;
    this.pooling = options.pooling;
    this.batchSize = options.batchSize;
    this.active = chosen.model;
    this.choice = chosen.choice;
    this.memoryKey = chosen.memoryKey;
    this.dim = chosen.model.dim;
    this.loadMs = loadMs;
  }

  get id(): string {
    return embedderId(this.model, this.dtype, this.pooling, this.device);
  }

  /** Devices agree within 1e-3, so a WebGPU→WASM failover keeps the stored vectors. */
  get vectorSpace(): string {
    return embedderId(this.model, this.dtype, this.pooling);
  }

  get device(): ActiveDevice {
    return this.active.device;
  }

  get deviceChoice(): DeviceChoice {
    return { ...this.choice };
  }

  /**
   * Texts are sorted by length before batching (transformers pad each batch to its longest text, so mixing a
   * one-liner with a page wastes work), and the vectors are put back in input order.
   */
  async embed(texts: string[]): Promise<Float32Array[]> {
    this.assertOpen();
    if (!Array.isArray(texts) || texts.some((text) => typeof text !== 'string')) {
      throw invalidInput('embed() takes an array of strings');
    }
    const order = texts.map((_, index) => index).sort((a, b) => (texts[a] as string).length - (texts[b] as string).length);
    const vectors: Float32Array[] = new Array(texts.length);
    for (let start = 0; start < order.length; start += this.batchSize) {
      const indices = order.slice(start, start + this.batchSize);
      const batch = await this.run(indices.map((index) => texts[index] as string));
      indices.forEach((index, i) => {
        vectors[index] = batch[i] as Float32Array;
      });
    }
    return vectors;
  }

  countTokens(text: string): number {
    this.assertOpen();
    return this.active.countTokens(text);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.failover?.catch(() => undefined);
    await this.active.dispose();
  }

  /** One batch; if WebGPU fails, the same batch runs again on WASM, and every later batch stays on WASM. */
  private async run(texts: string[]): Promise<Float32Array[]> {
    const model = this.active;
    try {
      return await model.embedBatch(texts);
    } catch (error) {
      if (model.device !== 'webgpu') throw toEngramError(error, ErrorCode.EMBEDDER_FAILED, `embedding failed on ${model.device}`);
      await this.failOver(model, error);
      return this.run(texts);
    }
  }

  /** Single-flight: batches failing together wait for one WASM load. */
  private failOver(failed: LoadedModel, error: unknown): Promise<void> {
    this.failover ??= (async () => {
      const wasm = await this.loadWasm().catch((loadError: unknown) => {
        throw toEngramError(loadError, ErrorCode.EMBEDDER_FAILED, 'WebGPU failed and the WASM fallback did not load');
      });
      this.active = wasm;
      this.choice = { device: 'wasm', reason: 'webgpu-failed', error: error instanceof Error ? error.message : String(error) };
      if (this.memoryKey) await rememberChoice(this.memoryKey, this.choice);
      await failed.dispose().catch(() => undefined);
    })();
    return this.failover;
  }

  private assertOpen(): void {
    if (this.disposed) throw new EngramError(ErrorCode.CLOSED, 'this embedder was disposed');
  }
}
