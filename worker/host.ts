import { createEngine } from '../src/engine/engine.js';
import { ErrorCode, toEngramError, type EngramError } from '../src/errors.js';
import type { EmbedderOptions, LocalEmbedder } from '../src/embedder/index.js';
import { deviceStatus, forwardedOptions, type EncryptionOptions, type MemoryStatus, type SetForwardedOptions, type StorageKind, type WireEmbedderOptions } from '../src/contract/protocol.js';
import { isMethodName, type HostOwnMethod, type MethodName } from '../src/contract/methods.js';
import { checkCall, engineArgs, IN_WORKER, isPoll, WRITE_METHODS, type WorkerSide } from '../src/contract/dispatch.js';
import type { LanguageModel, Reranker } from '../src/llm/types.js';
import type { Progress } from '../src/types.js';
import { openStore } from '../src/store/browser/open-store.js';
import { isCurrent, readSnapshot, SnapshotKeeper } from './index-saver.js';

/** Every call a Memory can make of the worker that holds the database: the engine's methods and the host's own (`status`). */
export type HostMethod = MethodName | HostOwnMethod;

export interface Host {
  /**
   * Runs one method on the engine. `retry` marks a call re-sent after the tab that first received it went away:
   * an `add` whose memories are all there already was committed then and is answered with its ids. `method` and
   * `args` come from a page or another tab: a method outside the Memory API, or arguments that do not fit its
   * entry in MEMORY_METHODS (src/contract/methods.ts), are refused with INVALID_INPUT. `signal` reaches the engine
   * for the methods whose entry says `abortable`, never on a retry: a re-sent write may have been committed by its
   * first try, and only running it again tells (an aborted retry would answer ABORTED for what was written).
   */
  call(method: string, args: unknown[], onProgress?: (progress: Progress) => void, retry?: boolean, signal?: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
  /** An idle-locked host (worker/idle-lock.ts): whether it is locked now, opening it again, hearing it lock. */
  readonly locked?: boolean;
  unlock?(dataKey: Uint8Array): Promise<void>;
  onLock?(listener: () => void): void;
}

export type EmbedderLoader = (options: WireEmbedderOptions, onProgress?: EmbedderOptions['onProgress']) => Promise<LocalEmbedder>;

/** The engine options of `MemoryOptions` (`ForwardedOptions`) come as the page gave them, nulls left out. */
export interface HostOptions extends SetForwardedOptions {
  name: string;
  storage: StorageKind;
  embedder: WireEmbedderOptions | null;
  onModelProgress?: EmbedderOptions['onProgress'];
  loadEmbedder: EmbedderLoader;
  /** The page's language model (`MemoryOptions.llm`), already wrapped to check its answers. Default none. */
  llm?: LanguageModel | null;
  /** The page's re-ranker (`MemoryOptions.reranker`), likewise. Default none. */
  reranker?: Reranker | null;
  /** `MemoryOptions.encryption`. Default none: a plain database. */
  encryption?: EncryptionOptions | null;
  /** The data key, when an unlock hands it over instead of `encryption` (the store zeroes it when it closes). */
  dataKey?: Uint8Array | null;
}

/**
 * Opens the store and the engine. The engine starts lexical-only so searches are answered at once; the model
 * loads meanwhile and is attached when ready (the engine then embeds whatever has no vector, in the background).
 */
export async function openHost(options: HostOptions): Promise<Host> {
  let lastError: EngramError | null = null;
  const store = await openStore(options.name, options.storage, options.encryption ?? null, options.dataKey ?? null);
  const onBackgroundError = (error: unknown) => (lastError = toEngramError(error, ErrorCode.STORE_FAILED, 'background work failed'));
  let current = false;
  const engine = await (async () => {
    const indexSnapshot = await readSnapshot(store);
    current = await isCurrent(indexSnapshot, store);
    return createEngine({
      store,
      embedder: null,
      indexSnapshot,
      onBackgroundError,
      llm: options.llm ?? null,
      reranker: options.reranker ?? null,
      ...forwardedOptions(options),
    });
  })().catch(async (error: unknown) => {
    await store.close().catch(() => undefined);
    throw error;
  });
  const snapshots = new SnapshotKeeper(engine, store, onBackgroundError, current);

  // Loading the model (evaluating transformers.js, starting ONNX Runtime) and attaching it (loading every stored
  // vector, building the vector index) hold the worker's only thread. Both wait until the first call has been
  // answered (or a moment has passed), so the page's first search is not held behind them.
  let firstCallAnswered = () => {};
  const firstCall = new Promise<void>((resolve) => (firstCallAnswered = resolve));
  const loadAllowed = Promise.race([firstCall, new Promise<void>((resolve) => setTimeout(resolve, MODEL_GRACE_MS))]);

  let embedder: LocalEmbedder | null = null;
  let ready: MemoryStatus['ready'] = options.embedder ? 'loading' : 'ready';
  if (options.embedder) {
    const embedderOptions = options.embedder;
    void (async () => {
      try {
        await loadAllowed;
        embedder = await options.loadEmbedder(embedderOptions, options.onModelProgress);
        await engine.setEmbedder(embedder);
      } catch (error) {
        lastError = toEngramError(error, ErrorCode.EMBEDDER_FAILED, 'could not load the embedder; search stays lexical');
        ready = { code: lastError.code, message: lastError.message };
        return;
      }
      // Every memory has a vector for the model once its background re-indexing ends.
      ready = await engine.ready.then(
        () => 'ready' as const,
        (error: unknown) => {
          const failure = toEngramError(error, ErrorCode.EMBEDDER_FAILED, 'could not embed the stored memories');
          return { code: failure.code, message: failure.message };
        },
      );
    })();
  }

  const status = async (): Promise<MemoryStatus> => ({
    storage: options.storage,
    persisted: store.persistent && (await navigator.storage?.persisted?.().catch(() => false)) === true,
    embedder: engine.embedder?.id ?? null,
    // Read live: a WebGPU failure mid-run moves the embedder to WASM.
    device: engine.embedder && embedder ? deviceStatus(embedder.deviceChoice) : null,
    indexing: engine.indexing(),
    lexicalIndex: engine.lexicalSource,
    evicted: store.evicted,
    encrypted: store.encrypted,
    locked: false,
    ...(({ memories, core, associations, links, sync }) => ({ memories, count: memories, core, associations, links, ...(sync ? { sync } : {}) }))(await engine.stats()),
    error: lastError && { code: lastError.code, message: lastError.message },
    rejectedMessages: 0, // this host has no channel; leader.ts reports its own count
    leader: true, // likewise: a follower's leader.ts says false
    ready,
  });

  /** The host's own methods (WORKER_METHODS with `runs: 'host'`). */
  const own: { readonly [M in HostOwnMethod]: () => Promise<unknown> } = { status };

  return {
    async call(name, args, onProgress, retry = false, signal) {
      // Only the Memory API runs: without this, a caller could name any engine method (`close`, `setEmbedder`, or
      // internals that write to the store outside the write queue).
      const method = checkCall(name, args);
      try {
        const result = await dispatch(method, args, onProgress, retry, retry ? undefined : signal);
        if (WRITE_METHODS.has(method)) snapshots.changed();
        return result;
      } finally {
        if (!isPoll(method)) firstCallAnswered();
      }
    },
    async close() {
      await snapshots.flush().catch(onBackgroundError);
      await engine.close();
      await (embedder as LocalEmbedder | null)?.dispose();
    },
  };

  async function dispatch(method: HostMethod, args: unknown[], onProgress: ((p: Progress) => void) | undefined, retry: boolean, signal: AbortSignal | undefined): Promise<unknown> {
    if (!isMethodName(method)) return own[method]();
    const spec: WorkerSide = IN_WORKER[method];
    const run = engine[method] as (...a: unknown[]) => Promise<unknown>;
    const call = () => run.apply(engine, engineArgs(method, args, onProgress, signal));
    return retry && spec.retried ? spec.retried(engine, args, call) : call();
  }
}

/** The longest the model waits for the first call before it loads anyway. */
const MODEL_GRACE_MS = 1000;
