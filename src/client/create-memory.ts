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
  checkForwardedOptions,
  checkWireDepth,
  closedError,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_OPEN_TIMEOUT_MS,
  DEFAULT_WRITE_TIMEOUT_MS,
  forwardedOptions,
  installErrorTransfer,
  timeoutError,
  type CallTimeouts,
  type EncryptionOptions,
  type ForwardedOptions,
  type MemoryStatus,
  type RemoteSearchOptions,
  type WorkerApi,
} from '../contract/protocol.js';
import {
  arityOf,
  checkRemoteSearchOptions,
  MEMORY_METHODS,
  METHOD_NAMES,
  takeSignal,
  timeoutFor,
  WORKER_METHOD_NAMES,
  WORKER_METHODS,
  type MethodName,
  type MethodSpec,
  type WireArgs,
  type WireResult,
  type WorkerMethodName,
  type WorkerMethodSpec,
} from '../contract/methods.js';
import { checkSignal, throwIfAborted, unlessAborted } from '../util/abort.js';
import { checkEmbedderOptionKeys } from '../embedder/options.js';
import { checkKnownKeys, keysOf, type KeySet } from '../util/keys.js';
import type { LanguageModel, Reranker } from '../llm/types.js';
import { pageCompletion, pageReranker } from './page-hooks.js';
import { checkLanguageModel, checkReranker } from '../llm/completion.js';
import { InFlight } from '../util/in-flight.js';
import { describeValue } from '../util/describe.js';
import type { Progress, SearchResult } from '../types.js';

export type { EncryptionOptions, ForwardedOptions, MemoryStatus, MemorySyncOptions, RemoteSearchOptions, StorageKind } from '../contract/protocol.js';

/**
 * A Memory's options. The engine options it forwards to the engine of the tab that opens the database (`limits`,
 * `learning`, `lexical`, `consolidation`, `sync`) are `ForwardedOptions`.
 */
export interface MemoryOptions extends Partial<ForwardedOptions> {
  /** Database name (letters, digits, `_`, `-`, `.`). Tabs using the same name share one database. Default `'engram'`. */
  name?: string;
  /** `'auto'` (default): OPFS where the worker can use it, else IndexedDB. `'memory'`: nothing is saved. */
  storage?: 'auto' | 'opfs' | 'idb' | 'memory';
  /** Options for `createEmbedder` (default `{}`: the built-in model), or `null` for lexical search only. */
  embedder?: EmbedderOptions | null;
  /** Default search options of this Memory, merged under each call's. */
  search?: Partial<RemoteSearchOptions>;
  /** Ask the browser not to evict the data (`navigator.storage.persist()`), without waiting for its answer (Firefox asks the user). Default true. */
  persist?: boolean;
  /** A worker running `engram/worker` that you created (extensions, custom bundlers). Default: one is spawned. */
  worker?: Worker;
  /**
   * For a page whose CSP has `require-trusted-types-for 'script'`: the Trusted Types policy that vouches for the
   * worker's script URL when `createMemory` spawns it. A name (allowed by the CSP's `trusted-types` list) makes a
   * policy that passes only that one URL, created once per page; or pass a policy you created. Default: none.
   */
  trustedTypes?: string | ScriptUrlPolicy;
  /** Milliseconds a read (`search`, `get`, `timeline`, `count`, `export`, `related`, `why`, `status`) may go unanswered before it rejects with TIMEOUT. Default 30,000. */
  callTimeoutMs?: number;
  /**
   * Milliseconds a write (`add`, `import`, `update`, `remove`, `pin`, `link`, `unlink`, `remember`, `consolidate`)
   * may go unanswered before it rejects with TIMEOUT; each progress event of `add`/`import` restarts it. Default
   * 120,000. A timed-out `add`, `import`, `remember` or `consolidate` is aborted in the worker as its `signal` would be:
   * it is stored only if it had reached its commit. Another timed-out write may still complete (it may have been
   * waiting behind another tab's long write).
   */
  writeTimeoutMs?: number;
  /** Milliseconds `createMemory` may take to open (or join the tab holding the database), and `close()` to finish, before TIMEOUT. Default 120,000. */
  openTimeoutMs?: number;
  /** Errors from the worker (and other tabs) keep their stacks, which name internal files. Default false: code and message only. */
  debug?: boolean;
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
  /**
   * With `encryption`: after this many milliseconds without a call from any tab (`status` aside), the tab holding the
   * database closes it and forgets its key, and every tab forgets its passphrase; calls then reject with LOCKED until
   * `unlock(passphrase)` (docs/worker.md, "Idle lock"). The tab that opens the database applies its own setting.
   * Default none: never locks.
   */
  lockAfterIdleMs?: number | null;
  /**
   * Aborts opening (spawning the worker, opening the database or joining the tab that holds it): `createMemory`
   * rejects with ABORTED, the worker it spawned is ended (one passed as `worker` is told to close). After the open it
   * does nothing: the model loads in the worker after that, and `close()` ends it. Default none.
   */
  signal?: AbortSignal;
}

/** Every `createMemory` option, checked against `MemoryOptions` at compile time; any other name is refused. */
export const MEMORY_OPTION_KEYS = keysOf<MemoryOptions>({
  name: true,
  storage: true,
  embedder: true,
  search: true,
  persist: true,
  worker: true,
  trustedTypes: true,
  callTimeoutMs: true,
  writeTimeoutMs: true,
  openTimeoutMs: true,
  debug: true,
  llm: true,
  reranker: true,
  encryption: true,
  lockAfterIdleMs: true,
  signal: true,
  limits: true,
  learning: true,
  lexical: true,
  consolidation: true,
  sync: true,
} satisfies KeySet<MemoryOptions>);

/** The engine's API, answered by the worker (the methods of MEMORY_METHODS, src/contract/methods.ts), plus `status()`. */
export interface Memory extends Pick<Engine, Exclude<MethodName, 'search'>> {
  /** As `Engine.search`; the `boost` hook is in-process only, so it is not an option here. */
  search(query: string, options?: Partial<RemoteSearchOptions>): Promise<SearchResult>;
  status(): Promise<MemoryStatus>;
  /**
   * Settles when the model is loaded and every memory has a vector for it (at once with `embedder: null`); rejects
   * with the model's coded error (MODEL_NOT_FOUND, EMBEDDER_FAILED, …) or CLOSED. Read from `status().ready`.
   */
  readonly ready: Promise<void>;
  /**
   * Re-wraps the database's key for a new passphrase; nothing is re-encrypted. Atomic: after a crash, exactly one
   * of the two passphrases opens it. WRONG_KEY when `current` is not the passphrase, NOT_ENCRYPTED for a database
   * without one.
   */
  changePassphrase(current: string, next: string): Promise<void>;
  /**
   * Opens a Memory that locked itself after `lockAfterIdleMs` (`status().locked`): a passphrase, or `{ key }` for an
   * app key. WRONG_KEY when it does not unlock the database (it stays locked); NOT_ENCRYPTED for a plain one. Does
   * nothing more when the Memory is not locked. From any tab: the passphrase stays in this tab's worker.
   */
  unlock(secret: string | EncryptionOptions): Promise<void>;
  /** Closes the database (another tab on the same name takes it over) and ends the worker this call spawned. */
  close(): Promise<void>;
}

/**
 * Spawns the worker, opens the database and resolves when searches can be answered.
 *
 * @example
 * ```ts
 * import { createMemory } from 'engram';
 *
 * const memory = await createMemory({ name: 'notes' }); // OPFS, the built-in model, unencrypted
 * await memory.add({ text: 'Staging moved to eu-west-2', project: 'infra' });
 * const { hits, context } = await memory.search('where is staging hosted?', { project: 'infra' });
 * hits[0]?.explain; // why it ranked there
 * ```
 */
export async function createMemory(options: MemoryOptions = {}): Promise<Memory> {
  installErrorTransfer();
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput(`createMemory options must be an object, got ${describeValue(options)}`);
  checkKnownKeys(options, MEMORY_OPTION_KEYS, { aliases: { database: 'name', db: 'name', dbname: 'name', model: 'embedder', timeoutms: 'callTimeoutMs', passphrase: 'encryption' } });
  if (!options.worker && typeof Worker === 'undefined') {
    throw new EngramError(ErrorCode.WORKER_FAILED, "createMemory runs in a browser (it spawns a Web Worker, and this runtime has no Worker): in Node, import { createEngine, openNodeStore } from 'engram/node'", { details: { runtime: 'no Worker' } });
  }
  const { name = 'engram', storage = 'auto', embedder = {}, search = {}, persist = true, debug = false, encryption = null } = options;
  const openSignal = checkSignal(options.signal, 'createMemory');
  checkRemoteSearchOptions(search);
  if (embedder !== null) checkEmbedderOptionKeys(embedder);
  if (embedder !== null && typeof embedder === 'object' && 'signal' in embedder) {
    throw invalidInput("createMemory: embedder.signal has no effect (the model loads in the worker after the open): pass signal to createMemory, which covers the open", { key: 'embedder.signal', suggestion: 'signal' });
  }
  checkForwardedOptions(options);
  if (encryption !== null) checkEncryption(encryption);
  const lockAfterIdleMs = options.lockAfterIdleMs == null ? null : checkTimeout('lockAfterIdleMs', options.lockAfterIdleMs, 0);
  if (lockAfterIdleMs !== null && (encryption === null || storage === 'memory')) throw invalidInput('lockAfterIdleMs needs encryption and a stored database: a lock forgets the key, and only an encrypted database has one');
  const llm = checkLanguageModel(options.llm);
  const reranker = checkReranker(options.reranker);
  throwIfAborted(openSignal, 'createMemory');
  const timeouts: CallTimeouts = {
    callMs: checkTimeout('callTimeoutMs', options.callTimeoutMs, DEFAULT_CALL_TIMEOUT_MS),
    writeMs: checkTimeout('writeTimeoutMs', options.writeTimeoutMs, DEFAULT_WRITE_TIMEOUT_MS),
    openMs: checkTimeout('openTimeoutMs', options.openTimeoutMs, DEFAULT_OPEN_TIMEOUT_MS),
  };
  const ownWorker = !options.worker;
  const worker = options.worker ?? spawnWorker(name, options.trustedTypes);
  const remote = Comlink.wrap<WorkerApi>(worker);
  const crashed = workerCrash(worker);
  const guard = <T>(promise: Promise<T>): Promise<T> => Promise.race([promise, crashed]);

  const { onProgress: onModelProgress, ...embedderOptions } = embedder ?? {};
  // Asked, never awaited: Firefox answers navigator.storage.persist() only when the user answers its permission
  // prompt, which may be never (and is never in a headless or automated browser). Awaiting it held createMemory
  // forever, past openTimeoutMs, whose clock covers only the worker's open. `status().persisted` says the outcome.
  if (persist && storage !== 'memory') void requestPersistence();
  try {
    await withTimeout(
      () =>
        guard(
          unlessAborted(
            remote.open(
              { name, storage, embedder: embedder === null ? null : embedderOptions, search, timeouts, debug: debug === true, encryption, lockAfterIdleMs, ...forwardedOptions(options) },
              onModelProgress && Comlink.proxy(onModelProgress),
              llm ? Comlink.proxy(pageCompletion(llm)) : undefined,
              reranker ? Comlink.proxy(pageReranker(reranker)) : undefined,
            ),
            openSignal,
            'createMemory',
          ),
        ),
      'open',
      timeouts.openMs,
    );
  } catch (error) {
    // A worker the app passed is the app's to end: told to close (after its open settles), so it holds no database.
    if (!ownWorker && openSignal?.aborted) void remote.close().catch(() => undefined);
    remote[Comlink.releaseProxy]();
    if (ownWorker) worker.terminate();
    throw error;
  }

  let closing: Promise<void> | null = null;
  /** Calls sent and not yet answered: close() waits for them. */
  const inFlight = new InFlight();
  /** The number of the last call sent, which `remote.abort` names. */
  let callIds = 0;
  const call = <M extends MethodName>(method: M, args: WireArgs<M>, onProgress?: AddOptions['onProgress'], signal?: AbortSignal): Promise<WireResult<M>> => {
    if (closing) return Promise.reject(closedError());
    try {
      checkWireDepth(method, args);
      throwIfAborted(signal, method);
    } catch (error) {
      return Promise.reject(error);
    }
    // A method with progress always reports it to this side, so a long call that is moving does not time out.
    const reportsProgress = MEMORY_METHODS[method].progress;
    const callId = ++callIds;
    // The worker stops the call where it still can, and answers ABORTED, or the value of a call past its commit.
    const abort = () => void remote.abort(callId).catch(() => undefined);
    signal?.addEventListener('abort', abort, { once: true });
    const run = withTimeout(
      (progressed) => {
        const relay = reportsProgress
          ? Comlink.proxy((progress: Progress) => {
              progressed();
              onProgress?.(progress);
            })
          : undefined;
        return guard(remote.call(method, args, relay, callId) as Promise<WireResult<M>>);
      },
      method,
      timeoutFor(method, timeouts),
      abort,
    );
    return inFlight.track(run.finally(() => signal?.removeEventListener('abort', abort)));
  };

  /** A worker method of its own (not a Memory method through `call`), under the same closing and timeout rules. */
  const direct = <T>(method: string, ms: number, run: () => Promise<T>): Promise<T> =>
    closing ? Promise.reject(closedError()) : inFlight.track(withTimeout(() => guard(run()), method, ms));

  /** The Memory method `method`, as its table entry describes it. */
  const forward = (method: MethodName) => {
    const spec: MethodSpec = MEMORY_METHODS[method];
    const { min, max } = arityOf(method);
    return (...given: unknown[]): Promise<unknown> => {
      // The declared arguments only (extra ones are dropped), less trailing optional ones left undefined.
      const args = Array.from({ length: max }, (_, i) => given[i]);
      while (args.length > min && args.at(-1) === undefined) args.pop();
      try {
        spec.page?.(args);
      } catch (error) {
        return Promise.reject(error);
      }
      // `{ onProgress, signal }` follows the arguments (or `signal` is in the options): both stay on this side.
      const onProgress = spec.progress ? (given[max] as AddOptions | null | undefined)?.onProgress : undefined;
      let sent: { args: unknown[]; signal: AbortSignal | undefined };
      try {
        sent = takeSignal(method, args, given[max]);
      } catch (error) {
        return Promise.reject(error);
      }
      return call(method, sent.args as WireArgs<MethodName>, onProgress, sent.signal);
    };
  };
  const methods = Object.fromEntries(METHOD_NAMES.map((method) => [method, forward(method)])) as unknown as Pick<Memory, MethodName>;
  /** The worker's own method `method` (WORKER_METHODS), as its entry describes it. */
  const own = (method: WorkerMethodName) => {
    const spec: WorkerMethodSpec = WORKER_METHODS[method];
    const arity = Object.keys(spec.args).length;
    return (...given: unknown[]): Promise<unknown> => {
      let args: unknown[];
      try {
        args = spec.page ? spec.page(given) : given.slice(0, arity);
      } catch (error) {
        return Promise.reject(error);
      }
      return direct(method, timeoutFor(method, timeouts), () => (remote[method] as (...a: unknown[]) => Promise<unknown>)(...args));
    };
  };
  const owns = Object.fromEntries(WORKER_METHOD_NAMES.map((method) => [method, own(method)])) as unknown as Pick<Memory, WorkerMethodName>;
  const status = owns.status;
  let ready: Promise<void> | undefined;

  return {
    ...methods,
    // Made on first read only: an unread promise that rejects would be an unhandled rejection.
    get ready() {
      return (ready ??= whenReady(status, () => closing !== null));
    },
    // `status`, `changePassphrase` and `unlock`: the worker's own methods, from the same table.
    ...owns,
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

/** Rejects with WORKER_FAILED when `worker` fails to load or crashes: Comlink alone would wait forever on it. */
export function workerCrash(worker: Worker): Promise<never> {
  const crashed = new Promise<never>((_, reject) => {
    worker.addEventListener('error', (event) => {
      const reason = event instanceof ErrorEvent && event.message ? event.message : 'the script failed to load';
      reject(new EngramError(ErrorCode.WORKER_FAILED, `the Engram worker failed: ${reason}`));
    });
  });
  crashed.catch(() => undefined);
  return crashed;
}

/** How often `ready` asks the worker: the model takes seconds to load, so a fifth of one is soon enough. */
const READY_POLL_MS = 200;

/** Polls `status().ready` (a status poll survives a leader handover, which loads the model again in the new tab). */
async function whenReady(status: () => Promise<MemoryStatus>, closed: () => boolean): Promise<void> {
  for (;;) {
    if (closed()) throw new EngramError(ErrorCode.CLOSED, 'ready: the memory was closed');
    const { ready } = await status();
    if (ready === 'ready') return;
    if (ready !== 'loading') throw new EngramError(ready.code, ready.message);
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
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
 * Runs `start` and rejects with TIMEOUT if it has not settled within `ms`, then calls `onTimeout` (which aborts the
 * call in the worker); the `progressed` callback handed to `start` restarts the clock. The worker keeps its own
 * clock for calls it forwards to another tab.
 */
export function withTimeout<T>(start: (progressed: () => void) => Promise<T>, method: string, ms: number, onTimeout?: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        reject(timeoutError(method, ms, 'the Engram worker'));
        onTimeout?.();
      }, ms);
    };
    arm();
    start(arm).then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}

/**
 * Best effort: the browser may say no, or ask the user and settle only when they answer (Firefox), so nothing
 * waits for it. The data is kept either way until the browser needs the space.
 */
async function requestPersistence(): Promise<void> {
  try {
    if (typeof navigator !== 'undefined' && navigator.storage?.persist && !(await navigator.storage.persisted())) {
      await navigator.storage.persist();
    }
  } catch {
    // Not available in this context (e.g. inside a worker).
  }
}

/** The part of a Trusted Types policy that `trustedTypes` uses (TypeScript's DOM lib does not declare the API yet). */
export interface ScriptUrlPolicy {
  createScriptURL(input: string): unknown;
}

const policies = new Map<string, ScriptUrlPolicy>();
/** The worker script URLs this module spawned: the only ones a policy it made vouches for. */
const workerScripts = new Set<string>();

/**
 * The worker, spawned from the package's own script: through a Trusted Types policy when the page names one.
 * Bundlers find the worker by the literal expression below (a Worker of a URL relative to import.meta.url) and
 * rewrite its URL, so it stays as it is; a policy applies by swapping the global `Worker` for that synchronous call.
 */
export function spawnWorker(name: string, trustedTypes: MemoryOptions['trustedTypes']): Worker {
  const policy = typeof trustedTypes === 'string' ? namedPolicy(trustedTypes) : trustedTypes;
  if (policy !== undefined && typeof policy?.createScriptURL !== 'function') throw invalidInput('trustedTypes must be a policy name or a policy with createScriptURL');
  const scope = globalThis as { Worker: typeof Worker };
  const Native = scope.Worker;
  if (policy) {
    scope.Worker = class extends Native {
      constructor(url: string | URL, options?: WorkerOptions) {
        // The constructor takes a TrustedScriptURL where Trusted Types exist; TypeScript only knows string | URL.
        workerScripts.add(String(url));
        super(policy!.createScriptURL(String(url)) as string, options);
      }
    };
  }
  try {
    return new Worker(new URL('../../worker/index.ts', import.meta.url), { type: 'module', name: `engram:${name}` });
  } catch (error) {
    if (error instanceof TypeError && !policy && (globalThis as { trustedTypes?: unknown }).trustedTypes) {
      throw new EngramError(
        ErrorCode.WORKER_FAILED,
        `the page refused the worker's script URL (${error.message}): with Trusted Types required, name a policy its CSP allows, createMemory({ trustedTypes: 'name' })`,
      );
    }
    throw new EngramError(ErrorCode.WORKER_FAILED, `the Engram worker could not be started: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    scope.Worker = Native;
  }
}

/**
 * A policy named `policyName`, made once per page (a CSP may refuse a second of one name). It never leaves this
 * module, and vouches only for the worker scripts this module spawns.
 */
function namedPolicy(policyName: string): ScriptUrlPolicy | undefined {
  const factory = (globalThis as { trustedTypes?: { createPolicy(name: string, rules: { createScriptURL(input: string): string }): ScriptUrlPolicy } }).trustedTypes;
  if (!factory) return undefined; // no Trusted Types in this browser: a plain URL is accepted
  let policy = policies.get(policyName);
  if (!policy) {
    try {
      policy = factory.createPolicy(policyName, {
        createScriptURL(input) {
          if (!workerScripts.has(input)) throw new TypeError(`${policyName}: refusing script URL ${input}`);
          return input;
        },
      });
    } catch (error) {
      throw new EngramError(ErrorCode.WORKER_FAILED, `could not create the Trusted Types policy "${policyName}" (is it in the CSP's trusted-types list?): ${error instanceof Error ? error.message : String(error)}`);
    }
    policies.set(policyName, policy);
  }
  return policy;
}
