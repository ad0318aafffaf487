/**
 * `createEmbedder`: the engine's `Embedder` backed by a transformers.js model run as its sentence-transformers config
 * says (pooling, prompts per role, length), L2-normalised and batched, on onnxruntime-node in Node and on WebGPU or
 * WASM in a browser.
 */
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../errors.js';
import { chooseBrowserDevice, rememberChoice, type BrowserDeviceResult } from './device.js';
import { BUILTIN_MODEL_FILES, BUILTIN_MODEL_SHA256, checkModelFiles, hasModelFile, type ModelLocation, type OptionalFiles } from './model-files.js';
import {
  BUILTIN_MODEL,
  CPU_DTYPE,
  EMBEDDER_DEFAULTS,
  embedderId,
  resolveEmbedderOptions,
  type ActiveDevice,
  type DeviceChoice,
  type EmbedderDtype,
  type EmbedderOptions,
  type EmbedderPrompts,
  type EmbedRole,
  type LocalEmbedder,
  type LongText,
  type Pooling,
  type ResolvedEmbedderOptions,
  type VectorSpaceParts,
} from './options.js';
import { checkSignal, throwIfAborted, unlessAborted } from '../util/abort.js';
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
  const signal = checkSignal((options as EmbedderOptions | null | undefined)?.signal, 'createEmbedder');
  throwIfAborted(signal, 'createEmbedder');
  const loading = loadEmbedder(options);
  if (!signal) return loading;
  try {
    return await unlessAborted(loading, signal, 'createEmbedder');
  } catch (error) {
    // ONNX Runtime cannot stop a session mid-load: what loads after the abort is let go as soon as it is there.
    if (signal.aborted) void loading.then((late) => late.dispose(), () => undefined);
    throw error;
  }
}

async function loadEmbedder(options: EmbedderOptions): Promise<LocalEmbedder> {
  const started = performance.now();
  const { resolved, location } = locate(options);
  const remote = resolved.allowRemote ? { remoteRevision: resolved.revision ?? 'main' } : {};
  const load = async (device: ActiveDevice, shaderF16 = false) => {
    const dtype = resolved.dtype ?? (await defaultDtype(resolved.model, device, shaderF16, { ...location, ...remote }));
    // Fails before any download and names the missing feature; transformers.js would refuse with "does not support fp16".
    if (device === 'webgpu' && HALF_DTYPES.has(dtype) && !shaderF16) {
      throw new EngramError(ErrorCode.MODEL_INVALID, `dtype ${dtype} needs the WebGPU feature shader-f16, which this adapter lacks`, {
        details: { model: resolved.model, dtype },
      });
    }
    return loadModel({
      ...location,
      dtype,
      allowRemote: resolved.allowRemote,
      device,
      batchSize: resolved.batchSize,
      pooling: resolved.pooling,
      prompts: resolved.prompts,
      maxTokens: resolved.maxTokens,
      longText: resolved.longText,
      dimensions: resolved.dimensions,
      revision: resolved.revision,
      wasmPaths: resolved.wasmPaths,
      onProgress: resolved.onProgress,
    });
  };
  const chosen: BrowserDeviceResult = IS_NODE
    ? { model: await load('cpu'), choice: { device: 'cpu', reason: resolved.device === 'webgpu' ? 'no-webgpu' : 'node' } }
    : await chooseBrowserDevice({
        requested: resolved.device,
        modelKey: `${resolved.model}@${resolved.dtype ?? (resolved.model === BUILTIN_MODEL ? CPU_DTYPE : 'auto')}`,
        remember: resolved.rememberDevice,
        load,
        onProgress: resolved.onProgress,
      });
  return new TransformersEmbedder(resolved, chosen, () => load('wasm'), performance.now() - started);
}

/** dtypes whose WebGPU kernels use WGSL's f16. */
const HALF_DTYPES: ReadonlySet<EmbedderDtype> = new Set(['fp16', 'q4f16']);

/**
 * The dtype when none is given: q8 on the CPU and WASM; on WebGPU, where q8 is slow and wrong on some GPUs
 * (transformers.js #1512, #1728), fp16 when the model has that file and the adapter has shader-f16, else fp32. The
 * built-in model ships q8 only.
 */
async function defaultDtype(model: string, device: ActiveDevice, shaderF16: boolean, location: OptionalFiles): Promise<EmbedderDtype> {
  if (model === BUILTIN_MODEL || device !== 'webgpu') return CPU_DTYPE;
  return shaderF16 && (await hasModelFile(location, 'onnx/model_fp16.onnx')) ? 'fp16' : 'fp32';
}

/**
 * The options, checked and defaulted, and where the model's files are. In a browser the built-in model comes with
 * this package, as assets the app's bundler emits; in Node it is read from the package's `models/` folder. A
 * caller's own `modelPath` always wins.
 */
function locate(options: EmbedderOptions): { resolved: ResolvedEmbedderOptions; location: ModelLocation } {
  const resolved = resolveEmbedderOptions(options, defaultModelPath());
  const builtin = !IS_NODE && resolved.model === BUILTIN_MODEL && options.modelPath === undefined;
  const location: ModelLocation = { model: resolved.model, modelPath: resolved.modelPath, dtype: resolved.dtype ?? CPU_DTYPE };
  return { resolved, location: builtin ? { ...location, files: BUILTIN_MODEL_FILES, sha256: BUILTIN_MODEL_SHA256 } : location };
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
  readonly dim: number;
  readonly loadMs: number;
  readonly vectorSpace: string;
  private readonly parts: VectorSpaceParts;
  private active: LoadedModel;
  private choice: DeviceChoice;
  private readonly memoryKey: string | undefined;
  private failover: Promise<void> | undefined;
  private disposed = false;

  constructor(
    options: ResolvedEmbedderOptions,
    chosen: BrowserDeviceResult,
    private readonly loadWasm: () => Promise<LoadedModel>,
    loadMs: number,
  ) {
    const { setup } = chosen.model;
    this.model = options.model;
    this.active = chosen.model;
    this.choice = chosen.choice;
    this.memoryKey = chosen.memoryKey;
    this.dim = chosen.model.dim;
    this.loadMs = loadMs;
    // Named after the CPU dtype: WebGPU's vectors (fp16/fp32) are used only when they agree with it (device.ts).
    this.parts = {
      model: options.model,
      dtype: options.dtype ?? CPU_DTYPE,
      pooling: setup.pooling,
      prompts: setup.prompts,
      ...(options.dimensions !== undefined && options.dimensions < setup.modelDim ? { dimensions: options.dimensions } : {}),
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      ...(options.longText !== EMBEDDER_DEFAULTS.longText ? { longText: options.longText } : {}),
      ...(options.revision !== undefined ? { revision: options.revision } : {}),
    };
    this.vectorSpace = embedderId(this.parts);
  }

  get id(): string {
    return embedderId({ ...this.parts, dtype: this.active.dtype }, this.device);
  }

  get dtype(): EmbedderDtype {
    return this.active.dtype;
  }

  get pooling(): Pooling | 'output' {
    return this.active.setup.pooling;
  }

  get prompts(): Required<EmbedderPrompts> {
    return { ...this.active.setup.prompts };
  }

  get maxTokens(): number {
    return this.active.setup.maxTokens;
  }

  get longText(): LongText {
    return this.parts.longText ?? EMBEDDER_DEFAULTS.longText;
  }

  get device(): ActiveDevice {
    return this.active.device;
  }

  get deviceChoice(): DeviceChoice {
    return { ...this.choice };
  }

  /** Documents (the default) and queries get the model's prompt for their role; vectors come back in input order. */
  async embed(texts: string[], role: EmbedRole = 'document'): Promise<Float32Array[]> {
    this.assertOpen();
    if (!Array.isArray(texts) || texts.some((text) => typeof text !== 'string')) {
      throw invalidInput('embed() takes an array of strings');
    }
    if (role !== 'query' && role !== 'document') throw invalidInput("embed() role must be 'query' or 'document'", { role });
    return texts.length === 0 ? [] : this.run(texts, role);
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

  /** One call; if WebGPU fails, the same texts run again on WASM, and every later call stays on WASM. */
  private async run(texts: string[], role: EmbedRole): Promise<Float32Array[]> {
    const model = this.active;
    try {
      return await model.embedBatch(texts, role);
    } catch (error) {
      if (model.device !== 'webgpu') throw toEngramError(error, ErrorCode.EMBEDDER_FAILED, `embedding failed on ${model.device}`);
      await this.failOver(model, error);
      return this.run(texts, role);
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
