/**
 * Loading one model on one device through transformers.js `pipeline('feature-extraction')`, and running it.
 * transformers.js is imported lazily: importing the engine must not load ONNX Runtime.
 */
import type { FeatureExtractionPipeline, Tensor } from '@huggingface/transformers';
import { toHex } from '../util/ids.js';
import { EngramError, ErrorCode } from '../errors.js';
import { modelFileUrl, readOptionalFile, type ModelFiles, type ModelLocation, type OptionalFiles } from './model-files.js';
import type { ActiveDevice, EmbedderProgress, EmbedderPrompts, EmbedRole, LongText, Pooling, WasmPaths } from './options.js';
import { IS_NODE } from './platform.js';
import { mergeChunks, outputRows, poolTokens, truncateNormalize } from './pooling.js';
import { chunkIds, padBatch, type Chunk, type Framing } from './sequences.js';
import { poolingModulePath, readSentenceTransformers, type SentenceTransformersSetup } from './st-config.js';
import { tokenCounter, type EncodingTokenizer } from './token-counter.js';

/** Where the model is (`files`: the built-in model's bundler-emitted assets; others come from modelPath), and how to run it. */
export interface LoadRequest extends ModelLocation {
  allowRemote: boolean;
  device: ActiveDevice;
  /** Sequences per model run. */
  batchSize: number;
  /** The caller's settings; each undefined one comes from the model. */
  pooling?: Pooling;
  prompts?: EmbedderPrompts;
  maxTokens?: number;
  longText: LongText;
  dimensions?: number;
  revision?: string;
  wasmPaths?: WasmPaths;
  onProgress?: (progress: EmbedderProgress) => void;
}

/** How a loaded model embeds: the caller's settings over the model's own. */
export interface ModelSetup {
  /** `'output'`: the model's `sentence_embedding` output (its own pooling, Dense layers and normalisation). */
  pooling: Pooling | 'output';
  prompts: Required<EmbedderPrompts>;
  maxTokens: number;
  /** The model's output size; vectors have `dimensions ?? modelDim` values. */
  modelDim: number;
}

/** One loaded pipeline on one device. */
export interface LoadedModel {
  device: ActiveDevice;
  dtype: ModelLocation['dtype'];
  setup: ModelSetup;
  /** Values per vector: `dimensions` when given, else the model's. */
  readonly dim: number;
  /** Unit vectors in input order; `texts` are prompted for `role` (default 'document'), chunked and run in batches. */
  embedBatch(texts: string[], role?: EmbedRole): Promise<Float32Array[]>;
  countTokens(text: string): number;
  dispose(): Promise<void>;
}

/** Without a sentence-transformers `max_seq_length`: the tokenizer's and position table's length, at most this. */
const MAX_TOKENS_CAP = 8192;

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
 * Node: the ONNX Runtime transformers.js runs on, chosen once, before transformers.js is first imported.
 * onnxruntime-node (native) when it loads; otherwise (an app replaced it through npm `overrides` to leave out its
 * 288 MB, or its binary does not load here) onnxruntime-web's WASM build for Node, handed to transformers.js through
 * its own hook, `globalThis[Symbol.for('onnxruntime')]`: the same vectors, embedded more slowly (docs/embedder.md).
 */
type NodeOrt = { kind: 'native' } | { kind: 'wasm'; env: { wasm: { wasmPaths?: unknown } }; wasmFolder: string };
let nodeOrt: NodeOrt | undefined;

function chooseNodeOrt(): NodeOrt {
  if (nodeOrt) return nodeOrt;
  const runtime = globalThis.process as { getBuiltinModule?: (id: string) => unknown };
  const { createRequire } = runtime.getBuiltinModule?.('node:module') as typeof import('node:module');
  const here = createRequire(import.meta.url);
  // Resolved from transformers.js's folder, as transformers.js requires it.
  const fromTransformers = createRequire(here.resolve('@huggingface/transformers'));
  let native: unknown = null;
  try {
    native = fromTransformers('onnxruntime-node');
  } catch {
    // not installed, or its binary does not load: WASM below
  }
  if (typeof (native as { listSupportedBackends?: unknown } | null)?.listSupportedBackends === 'function') return (nodeOrt = { kind: 'native' });
  const entry = here.resolve('onnxruntime-web');
  const ort = here('onnxruntime-web') as { env: { wasm: { wasmPaths?: unknown } } };
  (globalThis as Record<symbol, unknown>)[Symbol.for('onnxruntime')] = ort;
  return (nodeOrt = { kind: 'wasm', env: ort.env, wasmFolder: entry.slice(0, Math.max(entry.lastIndexOf('/'), entry.lastIndexOf('\\')) + 1) });
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

/**
 * transformers.js fetches `<localModelPath><model>/<file>`; a listed file is fetched from its own URL instead, and
 * its bytes are checked against `sha256` when that names the file.
 */
function fetchListedFiles(
  files: ModelFiles,
  prefix: string,
  fetchFile: FetchFile,
  sha256: Readonly<Record<string, string>> = {},
  onMismatch: (error: EngramError) => void = () => undefined,
): FetchFile {
  return async (input, init) => {
    const path = typeof input === 'string' ? input : input.href;
    const file = path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
    const listed = file === undefined ? undefined : files[file];
    const response = await fetchFile(listed ?? input, init);
    const expected = file === undefined ? undefined : sha256[file];
    if (!expected || !response.ok || init?.method === 'HEAD') return response;
    const bytes = await response.arrayBuffer();
    const actual = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
    if (actual !== expected) {
      // transformers.js takes a failed fetch for a missing file and goes on: the load reports this error instead.
      const error = new EngramError(ErrorCode.MODEL_INVALID, `model file ${file} (${listed}) does not have the bytes this Engram was built with`, {
        details: { file, expected, actual },
      });
      onMismatch(error);
      throw error;
    }
    return new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
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
    const ortInNode = IS_NODE ? chooseNodeOrt() : undefined;
    const transformers = await import('@huggingface/transformers');
    // After transformers.js: importing it is what sets the CDN paths (in Node too, for the WASM build).
    if (ortInNode?.kind === 'wasm') ortInNode.env.wasm.wasmPaths = ortInNode.wasmFolder;
    const web = IS_NODE ? undefined : await browserOrt(request.wasmPaths);
    const { env } = transformers;
    const saved = { ...env };
    env.allowLocalModels = true;
    env.localModelPath = request.modelPath;
    env.allowRemoteModels = request.allowRemote;
    // Files from our own origin are in the HTTP cache already; a Cache API copy would outlive a rebuilt model.
    env.useBrowserCache = saved.useBrowserCache && request.allowRemote;
    let mismatch: EngramError | null = null;
    if (request.files) {
      env.fetch = fetchListedFiles(request.files, `${request.modelPath}${request.model}/`, saved.fetch, request.sha256, (error) => (mismatch ??= error));
    }
    const load = () =>
      transformers.pipeline('feature-extraction', request.model, {
        // Through the hook transformers.js names no device of its own: 'auto' lets ONNX Runtime take its WASM backend.
        device: ortInNode?.kind === 'wasm' ? 'auto' : request.device,
        dtype: request.dtype,
        ...(request.revision ? { revision: request.revision } : {}),
        ...(request.onProgress ? { progress_callback: request.onProgress as (info: unknown) => void } : {}),
      }) as Promise<FeatureExtractionPipeline>;
    let pipe: FeatureExtractionPipeline;
    let st: SentenceTransformersSetup;
    try {
      st = await sentenceTransformers({ ...request, ...(request.allowRemote ? { remoteRevision: request.revision ?? 'main' } : {}) });
      pipe = web ? await web.guardedLoad(load, sessionsOf) : await load();
      if (mismatch) throw mismatch;
    } catch (error) {
      throw mismatch ?? (error instanceof EngramError ? error : loadError(error, request));
    } finally {
      env.allowLocalModels = saved.allowLocalModels;
      env.localModelPath = saved.localModelPath;
      env.allowRemoteModels = saved.allowRemoteModels;
      env.useBrowserCache = saved.useBrowserCache;
      env.fetch = saved.fetch;
    }
    let loaded: LoadedModel | undefined;
    try {
      loaded = wrap(pipe, request, st, transformers.Tensor, web);
      const [probe] = await loaded.embedBatch([PROBE_TEXT]);
      const configured = (pipe.model.config as { hidden_size?: number }).hidden_size;
      if (!probe || (loaded.setup.pooling !== 'output' && configured !== undefined && loaded.setup.modelDim !== configured)) {
        throw new Error(`output has ${loaded.setup.modelDim} values per text, config.json says hidden_size ${configured}`);
      }
    } catch (error) {
      await (loaded ?? { dispose: () => pipe.dispose() }).dispose();
      throw error instanceof EngramError ? error : loadError(error, request);
    }
    return loaded;
  });
}

/** The model's sentence-transformers config files (each may be missing), read and checked. */
async function sentenceTransformers(location: OptionalFiles): Promise<SentenceTransformersSetup> {
  const json = async (file: string): Promise<unknown> => {
    const text = await readOptionalFile(location, file);
    if (text === null) return null;
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new EngramError(ErrorCode.MODEL_INVALID, `model "${location.model}": ${file} is not JSON`, { cause: error, details: { model: location.model, file } });
    }
  };
  const [modules, config, bertConfig] = await Promise.all([json('modules.json'), json('config_sentence_transformers.json'), json('sentence_bert_config.json')]);
  const poolingPath = poolingModulePath(modules);
  const pooling = poolingPath === undefined ? null : await json(`${poolingPath}/config.json`);
  return readSentenceTransformers(location.model, { modules, pooling, config, bertConfig });
}

/** What this reads of a transformers.js tokenizer beyond `encode`. */
interface PaddingTokenizer extends EncodingTokenizer {
  padding_side?: string;
  pad_token_id?: number;
  model_max_length?: number;
}

function wrap(pipe: FeatureExtractionPipeline, request: LoadRequest, st: SentenceTransformersSetup, TensorOf: typeof Tensor, web: OrtWeb | undefined): LoadedModel {
  const sessions = sessionsOf(pipe);
  const tokenizer = pipe.tokenizer as unknown as PaddingTokenizer;
  const outputNames = sessionOutputs(sessions);
  const hasOutput = outputNames.includes('sentence_embedding');
  if (request.pooling === undefined && st.dense && !hasOutput) {
    throw new EngramError(
      ErrorCode.MODEL_INVALID,
      `model "${request.model}": modules.json has a Dense module but the ONNX model no sentence_embedding output holding it, which Engram cannot do`,
      { details: { model: request.model, outputs: outputNames } },
    );
  }
  const pooling: ModelSetup['pooling'] = request.pooling ?? (hasOutput ? 'output' : (st.pooling ?? 'mean'));
  const prompts = { query: request.prompts?.query ?? st.prompts.query, document: request.prompts?.document ?? st.prompts.document };
  const positions = (pipe.model.config as { max_position_embeddings?: number }).max_position_embeddings;
  const maxTokens = request.maxTokens ?? st.maxSeqLength ?? Math.min(MAX_TOKENS_CAP, finiteOr(tokenizer.model_max_length), finiteOr(positions));
  const framing = framingOf(tokenizer);
  const padSide = tokenizer.padding_side === 'left' ? 'left' : 'right';
  const padId = tokenizer.pad_token_id ?? 0;
  const promptIds = new Map<string, number[]>();
  const promptTokens = (prompt: string): number[] => {
    let ids = promptIds.get(prompt);
    if (!ids) promptIds.set(prompt, (ids = prompt === '' ? [] : tokenizer.encode(prompt, { add_special_tokens: false })));
    return ids;
  };
  const setup: ModelSetup = { pooling, prompts, maxTokens, modelDim: 0 };

  /** One model run over sequences that fit: a unit vector each, `dimensions` long. */
  const run = async (sequences: number[][]): Promise<Float64Array[]> => {
    const { ids, mask, length } = padBatch(sequences, padId, padSide);
    const dims = [sequences.length, length];
    let outputs: Record<string, Tensor | undefined>;
    try {
      outputs = await pipe.model({ input_ids: new TensorOf('int64', ids, dims), attention_mask: new TensorOf('int64', mask, dims) });
    } catch (error) {
      throw (web?.takeRunError(sessions) ?? error) as Error;
    }
    const wanted = pooling === 'output' ? 'sentence_embedding' : 'last_hidden_state';
    const output = pooling === 'output' ? outputs.sentence_embedding : (outputs.last_hidden_state ?? outputs.token_embeddings);
    if (!output) throw (web?.takeRunError(sessions) ?? new Error(`the model returned no ${wanted}`)) as Error;
    const values = output.to('float32');
    const data = values.data as Float32Array;
    const rows = pooling === 'output' ? outputRows(data, values.dims) : poolTokens(data, values.dims, mask, pooling);
    setup.modelDim = values.dims.at(-1) as number;
    if (request.dimensions !== undefined && request.dimensions > setup.modelDim) {
      throw new EngramError(ErrorCode.INVALID_INPUT, `embedder dimensions ${request.dimensions} is more than the model's ${setup.modelDim}`, {
        details: { dimensions: request.dimensions, modelDim: setup.modelDim },
      });
    }
    return rows.map((row) => truncateNormalize(row, request.dimensions ?? setup.modelDim));
  };

  return {
    device: request.device,
    dtype: request.dtype,
    setup,
    get dim() {
      return request.dimensions ?? setup.modelDim;
    },
    // The pipeline's steps (tokenizer → model → pooling), ours: transformers.js truncates away the final special
    // token, and its mean_pooling converts a BigInt mask value per element (it dominated the built-in model's time).
    async embedBatch(texts, role = 'document') {
      const prompt = prompts[role];
      const head = promptTokens(prompt);
      const chunked: Chunk[][] = texts.map((text) => {
        const ids = tokenizer.encode(prompt + text, { add_special_tokens: true });
        const shared = head.length > 0 && head.every((id, i) => ids[framing.prefix + i] === id) ? head.length : 0;
        const chunks = chunkIds(ids, framing, maxTokens, shared);
        return request.longText === 'truncate' ? chunks.slice(0, 1) : chunks;
      });
      // Sequences sorted by length before batching: each batch pads to its longest.
      const all = chunked.flatMap((chunks, text) => chunks.map((chunk, index) => ({ text, index, ids: chunk.ids })));
      all.sort((a, b) => a.ids.length - b.ids.length);
      const vectors: Float64Array[][] = chunked.map((chunks) => new Array<Float64Array>(chunks.length));
      for (let start = 0; start < all.length; start += request.batchSize) {
        const batch = all.slice(start, start + request.batchSize);
        const rows = await run(batch.map((sequence) => sequence.ids));
        batch.forEach((sequence, i) => ((vectors[sequence.text] as Float64Array[])[sequence.index] = rows[i] as Float64Array));
      }
      return vectors.map((chunks, text) => mergeChunks(chunks, (chunked[text] as Chunk[]).map((chunk) => chunk.weight)));
    },
    countTokens: tokenCounter(tokenizer),
    dispose: async () => {
      await pipe.dispose();
    },
  };
}

function finiteOr(value: number | undefined, fallback = MAX_TOKENS_CAP): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** How many special tokens the tokenizer adds before and after a text, found by encoding one word with and without. */
function framingOf(tokenizer: EncodingTokenizer): Framing {
  const bare = tokenizer.encode('a', { add_special_tokens: false });
  const framed = tokenizer.encode('a', { add_special_tokens: true });
  const at = framed.findIndex((_, i) => bare.every((id, k) => framed[i + k] === id));
  return at < 0 ? { prefix: 0, suffix: 0 } : { prefix: at, suffix: framed.length - at - bare.length };
}

/** The ONNX session's output names (ONNX Runtime's `outputNames`, in Node and on the web alike). */
function sessionOutputs(sessions: Record<string, unknown>): string[] {
  const names = (sessions.model as { outputNames?: unknown } | undefined)?.outputNames;
  if (!Array.isArray(names)) {
    throw new EngramError(ErrorCode.MODEL_INVALID, 'this transformers.js version has no pipeline.model.sessions.model.outputNames; Engram pins the version it was tested with');
  }
  return names as string[];
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
