/**
 * Loading one model on one device through transformers.js `pipeline('feature-extraction')`, and running it.
 * transformers.js is imported lazily: importing the engine must not load ONNX Runtime.
 */
import type { FeatureExtractionPipeline, Tensor } from '@huggingface/transformers';
import { EngramError, ErrorCode } from '../errors.js';
import { modelFileUrl, type ModelFiles, type ModelLocation } from './model-files.js';
import type { ActiveDevice, EmbedderProgress, Pooling, WasmPaths } from './options.js';
import { IS_NODE } from './platform.js';
import { tokenCounter, type EncodingTokenizer } from './token-counter.js';

/** Where the model is (`files`: the built-in model's bundler-emitted assets; others come from modelPath), and how to run it. */
interface LoadRequest extends ModelLocation {
  allowRemote: boolean;
  device: ActiveDevice;
  pooling: Pooling;
  wasmPaths?: WasmPaths;
  onProgress?: (progress: EmbedderProgress) => void;
}

/** One loaded pipeline on one device. */
export interface LoadedModel {
  device: ActiveDevice;
  dim: number;
  /** One model run: L2-normalised mean-pooled vectors, in input order. */
  embedBatch(texts: string[]): Promise<Float32Array[]>;
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

type OrtWeb = typeof import('./ort-web.js');
let ortWeb: Promise<OrtWeb> | undefined;

/**
 * The browser glue, once. ONNX Runtime reads the WASM paths when transformers.js creates its first session, so the
 * first embedder's paths win. transformers.js points them at a CDN when it is imported, unless they are set; without
 * paths, ONNX Runtime loads its WASM through its own `new URL(file, import.meta.url)`, which the app's bundler emits
 * and serves from the app's origin. So the CDN paths are removed, and only the caller's own paths are set.
 */
function browserOrt(wasmPaths: WasmPaths | undefined): Promise<OrtWeb> {
  ortWeb ??= import('./ort-web.js').then((module) => {
    const current = module.ortEnv.wasm.wasmPaths;
    if (wasmPaths) module.ortEnv.wasm.wasmPaths = wasmPaths;
    else if (current !== undefined && JSON.stringify(current).includes('cdn.jsdelivr.net')) delete module.ortEnv.wasm.wasmPaths;
    return module;
  });
  return ortWeb;
}

/**
 * transformers.js keeps where to look for models in its global `env`. Loads run one at a time, each with its own
 * settings, and put back what was there, so two embedders (or the app's own transformers.js use) never mix paths.
 */
let loadQueue: Promise<unknown> = Promise.resolve();

function serialised<T>(task: () => Promise<T>): Promise<T> {
  const result = loadQueue.then(task, task);
  loadQueue = result.catch(() => undefined);
  return result;
}

/** The model's folder, or its config file's URL when its files are listed one by one; for messages. */
function modelLocation(request: ModelLocation): string {
  return request.files ? modelFileUrl(request, 'config.json') : modelFileUrl(request, '');
}

type FetchFile = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** transformers.js fetches `<localModelPath><model>/<file>`; a listed file is fetched from its own URL instead. */
function fetchListedFiles(files: ModelFiles, prefix: string, fetchFile: FetchFile): FetchFile {
  return (input, init) => {
    const path = typeof input === 'string' ? input : input.href;
    const listed = path.startsWith(prefix) ? files[path.slice(prefix.length)] : undefined;
    return fetchFile(listed ?? input, init);
  };
}

/**
 * The ONNX sessions behind a pipeline: `model.sessions` is not part of transformers.js's typed API, and the only
 * such field read here. Checked on every load, so a transformers.js that moved it fails loudly, not silently.
 */
function sessionsOf(pipe: FeatureExtractionPipeline): Record<string, unknown> {
  const sessions: unknown = (pipe.model as { sessions?: unknown } | undefined)?.sessions;
  if (typeof sessions !== 'object' || sessions === null) {
    throw new EngramError(ErrorCode.MODEL_INVALID, 'this transformers.js version has no pipeline.model.sessions; Engram pins the version it was tested with');
  }
  return sessions as Record<string, unknown>;
}

/** Short text run once at load: it checks the model really runs and yields its output size, and warms up shaders. */
const PROBE_TEXT = 'engram warm-up';

export function loadModel(request: LoadRequest): Promise<LoadedModel> {
  return serialised(async () => {
    const transformers = await import('@huggingface/transformers');
    // After transformers.js: importing it is what sets the CDN paths.
    const web = IS_NODE ? undefined : await browserOrt(request.wasmPaths);
    const { env } = transformers;
    const saved = { ...env };
    env.allowLocalModels = true;
    env.localModelPath = request.modelPath;
    env.allowRemoteModels = request.allowRemote;
    // Files from our own origin are in the HTTP cache already; a Cache API copy would outlive a rebuilt model.
    env.useBrowserCache = saved.useBrowserCache && request.allowRemote;
    if (request.files) env.fetch = fetchListedFiles(request.files, `${request.modelPath}${request.model}/`, saved.fetch);
    const load = () =>
      transformers.pipeline('feature-extraction', request.model, {
        device: request.device,
        dtype: request.dtype,
        ...(request.onProgress ? { progress_callback: request.onProgress as (info: unknown) => void } : {}),
      }) as Promise<FeatureExtractionPipeline>;
    let pipe: FeatureExtractionPipeline;
    try {
      pipe = web ? await web.guardedLoad(load, sessionsOf) : await load();
    } catch (error) {
      throw loadError(error, request);
    } finally {
      env.allowLocalModels = saved.allowLocalModels;
      env.localModelPath = saved.localModelPath;
      env.allowRemoteModels = saved.allowRemoteModels;
      env.useBrowserCache = saved.useBrowserCache;
      env.fetch = saved.fetch;
    }
    const loaded = wrap(pipe, request, web);
    try {
      const [probe] = await loaded.embedBatch([PROBE_TEXT]);
      const configured = (pipe.model.config as { hidden_size?: number }).hidden_size;
      if (!probe || (configured !== undefined && probe.length !== configured)) {
        throw new Error(`output has ${probe?.length} values per text, config.json says hidden_size ${configured}`);
      }
      loaded.dim = probe.length;
    } catch (error) {
      await loaded.dispose();
      throw error instanceof EngramError ? error : loadError(error, request);
    }
    return loaded;
  });
}

function wrap(pipe: FeatureExtractionPipeline, { device, pooling }: LoadRequest, web: OrtWeb | undefined): LoadedModel {
  const sessions = sessionsOf(pipe);
  return {
    device,
    dim: 0,
    // The pipeline's own steps (tokenizer → model → pooling), with our pooling: transformers.js's mean_pooling and
    // normalize convert a BigInt mask value per element, which dominated the built-in model's run time.
    async embedBatch(texts) {
      const inputs = pipe.tokenizer(texts, { padding: true, truncation: true });
      let outputs: Record<string, Tensor | undefined>;
      try {
        outputs = await pipe.model(inputs);
      } catch (error) {
        throw (web?.takeRunError(sessions) ?? error) as Error;
      }
      const hidden = outputs.last_hidden_state ?? outputs.token_embeddings;
      if (!hidden) throw (web?.takeRunError(sessions) ?? new Error('the model returned no last_hidden_state')) as Error;
      return poolNormalized(hidden.to('float32'), inputs.attention_mask as Tensor, pooling);
    },
    countTokens: tokenCounter(pipe.tokenizer as unknown as EncodingTokenizer),
    dispose: async () => {
      await pipe.dispose();
    },
  };
}

/**
 * 'mean': the mean over the tokens the attention mask keeps (padding excluded); 'cls': the first token's state.
 * Then L2 normalisation, summing in float64. A text with no known token (all [UNK] or empty) pools to a zero
 * vector and stays zeros: cosine 0 to anything.
 */
function poolNormalized(hidden: Tensor, mask: Tensor, pooling: Pooling): Float32Array[] {
  const [batch, sequence, dim] = hidden.dims as [number, number, number];
  const data = hidden.data as Float32Array;
  const keep = mask.data as ArrayLike<number | bigint>;
  const vectors: Float32Array[] = [];
  const sum = new Float64Array(dim);
  for (let b = 0; b < batch; b++) {
    sum.fill(0);
    for (let s = 0; s < (pooling === 'cls' ? 1 : sequence); s++) {
      if (Number(keep[b * sequence + s]) === 0) continue;
      const offset = (b * sequence + s) * dim;
      for (let d = 0; d < dim; d++) sum[d]! += data[offset + d] as number;
    }
    let squares = 0;
    for (let d = 0; d < dim; d++) squares += sum[d]! * sum[d]!;
    const norm = Math.sqrt(squares);
    const vector = new Float32Array(dim);
    if (norm > 0 && Number.isFinite(norm)) for (let d = 0; d < dim; d++) vector[d] = sum[d]! / norm;
    vectors.push(vector);
  }
  return vectors;
}

function isNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'ModelFileNotFoundError' || /not found|could not locate|no such file|ENOENT|\b404\b/i.test(error.message);
}

function loadError(error: unknown, request: LoadRequest): EngramError {
  const where = modelLocation(request);
  const reason = error instanceof Error ? error.message : String(error);
  const details = { model: request.model, path: where, device: request.device, dtype: request.dtype };
  if (isNotFound(error)) {
    const remote = request.allowRemote ? ' nor on the Hugging Face Hub' : ' (remote loading is off; pass allowRemote: true to download)';
    return new EngramError(ErrorCode.MODEL_NOT_FOUND, `model "${request.model}" not found at ${where}${remote}: ${reason}`, {
      cause: error,
      details,
    });
  }
  return new EngramError(ErrorCode.MODEL_INVALID, `model "${request.model}" at ${where} could not be loaded (${request.dtype} on ${request.device}): ${reason}`, {
    cause: error,
    details,
  });
}
