/**
 * `createMemory`: the main-thread face of Engram. The database, the indexes and the model live in a Web Worker
 * (worker/index.ts); this file only spawns it, forwards calls through Comlink and keeps callbacks and errors
 * working across the boundary. It touches nothing of the page but `Worker` and `navigator.storage`.
 */
import * as Comlink from 'comlink';
import type { EmbedderOptions } from '../embedder/index.js';
import type { AddOptions, Engine } from '../engine/engine.js';
import { EngramError, ErrorCode, invalidInput } from '../errors.js';
import {
  checkEncryption,
  checkWireDepth,
  closedError,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_OPEN_TIMEOUT_MS,
  DEFAULT_WRITE_TIMEOUT_MS,
  installErrorTransfer,
  timeoutError,
  timeoutFor,
  type CallTimeouts,
  type EncryptionOptions,
  type MemoryStatus,
  type MethodName,
  type RemoteSearchOptions,
  type WireArgs,
  type WireResult,
  type WorkerApi,
} from './protocol.js';
import type { RecordLimits } from '../engine/records.js';
import type { LearningOptions } from '../search/reinforce.js';
import type { LanguageModel, Reranker } from '../llm/types.js';
import { pageCompletion, pageReranker } from './page-hooks.js';
import { checkLanguageModel, checkReranker } from '../llm/completion.js';
import { InFlight } from '../util/in-flight.js';
import type { Progress, SearchResult } from '../types.js';

export type { EncryptionOptions, MemoryStatus, RemoteSearchOptions, StorageKind } from './protocol.js';

export interface MemoryOptions {
  /** Database name (letters, digits, `_`, `-`, `.`). Tabs using the same name share one database. Default `'engram'`. */
  name?: string;
  /** `'auto'` (default): OPFS where the worker can use it, else IndexedDB. `'memory'`: nothing is saved. */
  storage?: 'auto' | 'opfs' | 'idb' | 'memory';
  /** Options for `createEmbedder` (default `{}`: the built-in model), or `null` for lexical search only. */
  embedder?: EmbedderOptions | null;
  /** Default search options of this Memory, merged under each call's. */
  search?: Partial<RemoteSearchOptions>;
  /** Ask the browser not to evict the data (`navigator.storage.persist()`). Default true. */
  persist?: boolean;
  /** A worker running `engram/worker` that you created (extensions, custom bundlers). Default: one is spawned. */
  worker?: Worker;
  /** Milliseconds a read (`search`, `get`, `timeline`, `count`, `export`, `status`) may go unanswered before it rejects with TIMEOUT. Default 30,000. */
  callTimeoutMs?: number;
  /**
   * Milliseconds a write (`add`, `import`, `update`, `remove`, `pin`) may go unanswered before it rejects with
   * TIMEOUT; each progress event of `add`/`import` restarts it. Default 120,000. A write that timed out may still
   * complete (it may have been waiting behind another tab's long write).
   */
  writeTimeoutMs?: number;
  /** Milliseconds `createMemory` may take to open (or join the tab holding the database), and `close()` to finish, before TIMEOUT. Default 120,000. */
  openTimeoutMs?: number;
  /** Errors from the worker (and other tabs) keep their stacks, which name internal files. Default false: code and message only. */
  debug?: boolean;
  /**
   * The engine's record limits (text length, tags, labels, meta size and depth, records per call); each default is
   * in `defaultRecordLimits`. The tab that opens the database applies its own to every tab sharing it, as it does
   * its model. Default `{}`: the defaults.
   */
  limits?: Partial<RecordLimits>;
  /** The constants of learning from use (`LearningOptions`, docs/learning.md); applied like `limits`. Default `{}`. */
  learning?: Partial<LearningOptions>;
  /**
   * The language model the search stages may call (`understand`, `synthesis`, `hyde`, `rerank: { by: 'llm' }`), each
   * only when a search asks for it. It stays in this page (Chrome's `LanguageModel` exists only in pages) and the
   * worker calls `llm.complete` here. Its `signal` cannot cross to the page, so the page's call is never aborted:
   * the stage's own timeout bounds the wait and drops a late answer. The worker checks each answer (a string or
   * `{ text, promptTokens?, completionTokens? }` with finite counts ≥ 0); anything else, like an error, skips the
   * stage with a note in the trace, and the search answers without it. The tab that opens the database applies its
   * own `llm` to every tab sharing it, as it does its model and `limits`: another tab's searches then call this
   * page's model, and this tab's `llm` is unused while another tab holds the database. Default none: no stage calls out.
   */
  llm?: LanguageModel | null;
  /**
   * The app's own re-ranker, for searches with `rerank: { by: 'hook' }`: in this page, called from the worker with
   * the query and the candidates' id, text and score, answering ids best first (an array of strings, else the stage
   * is skipped). Shared across tabs like `llm`. Default none.
   */
  reranker?: Reranker | null;
  /**
   * Encrypt the database at rest with a passphrase, or with the app's own AES-GCM `CryptoKey` (docs/worker.md).
   * It stays in the worker. An encrypted database needs it at every open (KEY_REQUIRED without, WRONG_KEY when it
   * does not unlock); an existing unencrypted one is refused with NOT_ENCRYPTED. No effect with storage 'memory'.
   * Default none: unencrypted.
   */
  encryption?: EncryptionOptions | null;
}

/** The engine's API, answered by the worker, plus `status()`. */
export interface Memory
  extends Pick<Engine, 'add' | 'get' | 'timeline' | 'update' | 'remove' | 'pin' | 'count' | 'export' | 'import' | 'related' | 'link' | 'unlink' | 'why'> {
  /** As `Engine.search`; the `boost` hook is in-process only, so it is not an option here. */
  search(query: string, options?: Partial<RemoteSearchOptions>): Promise<SearchResult>;
  status(): Promise<MemoryStatus>;
  /**
   * Re-wraps the database's key for a new passphrase; nothing is re-encrypted. Atomic: after a crash, exactly one
   * of the two passphrases opens it. WRONG_KEY when `current` is not the passphrase, NOT_ENCRYPTED for a database
   * without one.
   */
  changePassphrase(current: string, next: string): Promise<void>;
  /** Closes the database (another tab on the same name takes it over) and ends the worker this call spawned. */
  close(): Promise<void>;
}

/** Spawns the worker, opens the database and resolves when searches can be answered. */
export async function createMemory(options: MemoryOptions = {}): Promise<Memory> {
  installErrorTransfer();
  const { name = 'engram', storage = 'auto', embedder = {}, search = {}, persist = true, debug = false, limits = {}, learning = {}, encryption = null } = options;
  checkRemoteSearchOptions(search);
  if (encryption !== null) checkEncryption(encryption);
  const llm = checkLanguageModel(options.llm);
  const reranker = checkReranker(options.reranker);
  const timeouts: CallTimeouts = {
    callMs: checkTimeout('callTimeoutMs', options.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS),
    writeMs: checkTimeout('writeTimeoutMs', options.writeTimeoutMs, DEFAULT_WRITE_TIMEOUT_MS),
    openMs: checkTimeout('openTimeoutMs', options.openTimeoutMs, DEFAULT_OPEN_TIMEOUT_MS),
  };
  const ownWorker = !options.worker;
  const worker = options.worker ?? new Worker(new URL('../../worker/index.ts', import.meta.url), { type: 'module', name: `engram:${name}` });
  const remote = Comlink.wrap<WorkerApi>(worker);
  // Comlink alone would wait forever on a worker that failed to load or crashed.
  const crashed = new Promise<never>((_, reject) => {
    worker.addEventListener('error', (event) => {
      const reason = event instanceof ErrorEvent && event.message ? event.message : 'the script failed to load';
      reject(new EngramError(ErrorCode.WORKER_FAILED, `the Engram worker failed: ${reason}`));
    });
  });
  crashed.catch(() => undefined);
  const guard = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, crashed]);

  const { onProgress: onModelProgress, ...embedderOptions } = embedder ?? {};
  const persisting = persist && storage !== 'memory' ? requestPersistence() : Promise.resolve();
  try {
    await withTimeout(
      () =>
        guard(
          remote.open(
            { name, storage, embedder: embedder === null ? null : embedderOptions, search, timeouts, debug: debug === true, limits, learning, encryption },
            onModelProgress && Comlink.proxy(onModelProgress),
            llm ? Comlink.proxy(pageCompletion(llm)) : undefined,
            reranker ? Comlink.proxy(pageReranker(reranker)) : undefined,
          ),
        ),
      'open',
      timeouts.openMs,
    );
    await persisting;
  } catch (error) {
    remote[Comlink.releaseProxy]();
    if (ownWorker) worker.terminate();
    throw error;
  }

  let closing: Promise<void> | null = null;
  /** Calls sent and not yet answered: close() waits for them. */
  const inFlight = new InFlight();
  const call = <M extends MethodName>(method: M, args: WireArgs<M>, onProgress?: AddOptions['onProgress']): Promise<WireResult<M>> => {
    if (closing) return Promise.reject(closedError());
    try {
      checkWireDepth(method, args);
    } catch (error) {
      return Promise.reject(error);
    }
    // add and import always report progress to this side, so a long one that is moving does not time out.
    const reportsProgress = method === 'add' || method === 'import';
    const run = withTimeout(
      (progressed) => {
        const relay = reportsProgress
          ? Comlink.proxy((progress: Progress) => {
              progressed();
              onProgress?.(progress);
            })
          : undefined;
        return guard(remote.call(method, args, relay) as Promise<WireResult<M>>);
      },
      method,
      timeoutFor(method, timeouts),
    );
    return inFlight.track(run);
  };

  /** A worker method of its own (not a Memory method through `call`), under the same closing and timeout rules. */
  const direct = <T>(method: string, ms: number, run: () => Promise<T>): Promise<T> =>
    closing ? Promise.reject(closedError()) : inFlight.track(withTimeout(() => guard(run()), method, ms));

  return {
    add: (input, opts) => call('add', [input], opts?.onProgress),
    import: (records, opts) => call('import', [records], opts?.onProgress),
    search: async (query, searchOptions) => {
      checkRemoteSearchOptions(searchOptions);
      return call('search', searchOptions === undefined ? [query] : [query, searchOptions]);
    },
    get: (id) => call('get', [id]),
    timeline: (id, timelineOptions) => call('timeline', timelineOptions === undefined ? [id] : [id, timelineOptions]),
    update: (id, patch) => call('update', [id, patch]),
    remove: (ids) => call('remove', [ids]),
    pin: (id, pinned) => call('pin', pinned === undefined ? [id] : [id, pinned]),
    count: () => call('count', []),
    related: (id) => call('related', [id]),
    link: (from, to, kind, linkOptions) => call('link', linkOptions === undefined ? [from, to, kind] : [from, to, kind, linkOptions]),
    unlink: (from, to, kind) => call('unlink', kind === undefined ? [from, to] : [from, to, kind]),
    why: (id, whyOptions) => call('why', whyOptions === undefined ? [id] : [id, whyOptions]),
    export: () => call('export', []),
    status: () => direct('status', timeouts.callMs, () => remote.status()),
    changePassphrase: (current, next) => direct('changePassphrase', timeouts.writeMs, () => remote.changePassphrase(current, next)),
    close: () => {
      closing ??= (async () => {
        try {
          // Calls already sent are answered first (each ends by its timeout at the latest).
          await inFlight.settled();
          await withTimeout(() => guard(remote.close()), 'close', timeouts.openMs);
        } finally {
          remote[Comlink.releaseProxy]();
          if (ownWorker) worker.terminate();
        }
      })();
      return closing;
    },
  };
}

/**
 * Search options cross to the worker as plain data, so the `boost` hook (a function) cannot: refused in a Memory's
 * default search options and in each search's, with the same INVALID_INPUT, like options that are not an object.
 */
function checkRemoteSearchOptions(searchOptions: object | undefined): void {
  if (searchOptions === undefined) return;
  if (typeof searchOptions !== 'object' || searchOptions === null || Array.isArray(searchOptions)) {
    throw invalidInput(`search options must be an object, got ${searchOptions === null ? 'null' : typeof searchOptions}`);
  }
  if ('boost' in searchOptions) {
    throw invalidInput('search option boost runs only in-process (createEngine): a Memory searches in a worker');
  }
}

/** A timeout option: a positive number of milliseconds (at most setTimeout's limit), or the default. */
function checkTimeout(option: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value > 0) || value > 2 ** 31 - 1) {
    throw invalidInput(`${option} must be a positive number of milliseconds up to ${2 ** 31 - 1}, got ${String(value)}`);
  }
  return value;
}

/**
 * Runs `start` and rejects with TIMEOUT if it has not settled within `ms`; the `progressed` callback handed to
 * `start` restarts the clock. The worker keeps its own clock for calls it forwards to another tab.
 */
function withTimeout<T>(start: (progressed: () => void) => Promise<T>, method: string, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => reject(timeoutError(method, ms, 'the Engram worker')), ms);
    };
    arm();
    start(arm).then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}

/** Best effort: the browser may say no (or ask the user); the data is kept either way until it needs the space. */
async function requestPersistence(): Promise<void> {
  try {
    if (typeof navigator !== 'undefined' && navigator.storage?.persist && !(await navigator.storage.persisted())) {
      await navigator.storage.persist();
    }
  } catch {
    // Not available in this context (e.g. inside a worker).
  }
}
