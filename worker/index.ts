/// <reference lib="webworker" />
/**
 * The Engram worker: `createMemory` (src/client/create-memory.ts) spawns it and talks to it through Comlink. It
 * owns the database (or joins the tab that does, see leader.ts) and answers the Memory API.
 */
import * as Comlink from 'comlink';
import { EngramError, ErrorCode } from '../src/errors.js';
import { mergeSearchOptions } from '../src/search/options.js';
import { newId } from '../src/util/ids.js';
import {
  closedError,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_OPEN_TIMEOUT_MS,
  DEFAULT_WRITE_TIMEOUT_MS,
  installErrorTransfer,
  setErrorStacks,
  type CallTimeouts,
  checkEncryption,
  forwardedOptions,
  type WorkerApi,
  type WorkerOpenOptions,
} from '../src/contract/protocol.js';
import { isMethodName } from '../src/contract/methods.js';
import { checkCall, IN_WORKER, type CallingTab, type WorkerSide } from '../src/contract/dispatch.js';
import { checkRemoteHook, languageModelFromPage, rerankerFromPage, type PageCompletion, type PageReranker } from '../src/contract/remote-hooks.js';
import { InFlight } from '../src/util/in-flight.js';
import { openHost, type EmbedderLoader, type Host } from './host.js';
import { joinGroup } from './leader.js';
import { whileNoTabHolds } from './salvage-lock.js';
import { changePassphrase, deriveEarly, notEncrypted, tabProofKey, unlock } from '../src/store/browser/keyring.js';
import { LockingHost } from './idle-lock.js';
import { resolveStorage } from '../src/store/browser/open-store.js';
import { checkDatabaseName } from '../src/store/browser/browser-store.js';
import { salvageDatabase } from '../src/store/browser/salvage-read.js';

installErrorTransfer();

const loadEmbedder: EmbedderLoader = async (options, onProgress) => {
  const { createEmbedder } = await import('../src/embedder/index.js');
  return createEmbedder({ ...options, ...(onProgress ? { onProgress } : {}) });
};

let host: Host | null = null;
let opening: Promise<void> | null = null;
let closed = false;
let searchDefaults: WorkerOpenOptions['search'] = {};
/** The stored database once open (`id`: `storage:name`, its key record's id); null for 'memory'. */
let storedDatabase: { id: string; name: string } | null = null;
/**
 * This worker's passphrase or key (`MemoryOptions.encryption`): forgotten when the database locks after idle, so
 * neither it nor the key derived from it (keyring.ts caches that per options object) outlives the lock here.
 */
let secret: WorkerOpenOptions['encryption'] = null;
/** The page's llm and reranker proxies (each holds a MessagePort to the page): released at close. */
let pageHooks: unknown[] = [];
/** Calls received and not yet answered: close() lets them finish first. */
const inFlight = new InFlight();
/** The signals of the calls under way, by the page's call id (`WorkerApi.abort`). */
const aborts = new Map<number, AbortController>();

/** The page's timeouts; a page that sent none (an older client) gets the defaults. */
function timeoutsOf(options: Partial<WorkerOpenOptions>): CallTimeouts {
  const pick = (value: unknown, fallback: number) => (typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : fallback);
  return {
    callMs: pick(options.timeouts?.callMs, DEFAULT_CALL_TIMEOUT_MS),
    writeMs: pick(options.timeouts?.writeMs, DEFAULT_WRITE_TIMEOUT_MS),
    openMs: pick(options.timeouts?.openMs, DEFAULT_OPEN_TIMEOUT_MS),
  };
}

/** The host `open` made, for a call to run on; refuses calls before open and after close. */
function requireHost(): Host {
  if (closed) throw closedError();
  if (!host) throw new EngramError(ErrorCode.WORKER_FAILED, 'the worker is not open yet: call open() first');
  return host;
}

/** This tab, as the methods' `inTab` steps read it (src/contract/dispatch.ts). */
const callingTab: CallingTab = {
  newId,
  withSearchDefaults: (options) => (Object.keys(searchDefaults).length > 0 ? mergeSearchOptions(searchDefaults, options as object) : undefined),
};

/** A callback from the page arrives as a Comlink proxy holding a MessagePort: free it once the call is over. */
function releaseCallback(callback: unknown): void {
  (callback as Partial<Comlink.Remote<unknown>> | undefined)?.[Comlink.releaseProxy]?.();
}

const api: WorkerApi = {
  async open(options, onModelProgress, pageLlm, pageReranker) {
    if (opening) throw new EngramError(ErrorCode.INVALID_INPUT, 'this worker is already open: use one worker per createMemory');
    pageHooks = [pageLlm, pageReranker];
    opening = (async () => {
      // The page's hooks, wrapped so the engine sees a LanguageModel / Reranker whose answers are shape-checked.
      const llmRemote = checkRemoteHook(pageLlm, 'llm') as Comlink.Remote<PageCompletion> | null;
      const rerankerRemote = checkRemoteHook(pageReranker, 'reranker') as Comlink.Remote<PageReranker> | null;
      const llm = llmRemote && languageModelFromPage(llmRemote);
      const reranker = rerankerRemote && rerankerFromPage(rerankerRemote);
      checkDatabaseName(options.name);
      const encryption = options.encryption ?? null;
      if (encryption !== null) checkEncryption(encryption);
      // Only `secret` holds it from here on, so a lock can forget it.
      options.encryption = null;
      secret = encryption;
      const lockAfterIdleMs = options.lockAfterIdleMs ?? null;
      if (lockAfterIdleMs !== null && !(typeof lockAfterIdleMs === 'number' && lockAfterIdleMs > 0 && lockAfterIdleMs <= 2 ** 31 - 1)) {
        throw new EngramError(ErrorCode.INVALID_INPUT, 'lockAfterIdleMs must be a positive number of milliseconds');
      }
      setErrorStacks(options.debug === true);
      searchDefaults = options.search;
      // The key derivation starts before the storage is even resolved: it is the slow part of an encrypted open.
      if (encryption !== null) {
        for (const kind of options.storage === 'auto' ? (['opfs', 'idb'] as const) : [options.storage]) {
          if (kind !== 'memory') deriveEarly(`${kind}:${options.name}`, encryption);
        }
      }
      const storage = await resolveStorage(options.storage);
      // A missing model refuses the Memory now; otherwise it would quietly search lexically (see checkEmbedderModel).
      if (options.embedder) await (await import('../src/embedder/index.js')).checkEmbedderModel(options.embedder);
      // Runs in whichever tab opens the database (now, or later when it takes over): that tab's hooks serve every tab.
      const openWith = (dataKey: Uint8Array | null) =>
        openHost({ name: options.name, storage, embedder: options.embedder, ...forwardedOptions(options), onModelProgress, loadEmbedder, llm, reranker, encryption: dataKey ? null : secret, dataKey });
      // An encrypted database can lock; a tab whose passphrase a lock made it forget takes over locked.
      const start = () => (storage === 'memory' || encryption === null ? openWith(null) : LockingHost.open(openWith, lockAfterIdleMs, storage, secret === null));
      // An in-memory database belongs to this worker alone; a stored one is shared by every tab of the origin.
      if (storage === 'memory') {
        host = await start();
        return;
      }
      const database = { id: `${storage}:${options.name}`, name: options.name };
      // Leader and followers of an encrypted database prove to each other that they hold its data key; a tab
      // without the right key (or with one for a plain database) cannot join: KEY_REQUIRED, WRONG_KEY, NOT_ENCRYPTED.
      const auth = async () => {
        const dataKey = await unlock(database.id, database.name, secret);
        try {
          return dataKey && (await tabProofKey(dataKey));
        } finally {
          dataKey?.fill(0);
        }
      };
      host = await joinGroup(`engram:${storage}:${options.name}`, start, { timeouts: timeoutsOf(options), debug: options.debug === true, auth, onLocked: () => (secret = null) });
      storedDatabase = database;
    })();
    try {
      await opening;
    } catch (error) {
      // This worker cannot open again: its hooks will never be called.
      for (const hook of pageHooks.splice(0)) releaseCallback(hook);
      throw error;
    }
  },

  async call(method, args, onProgress, callId) {
    const target = requireHost();
    // Checked here, before the method's own step in this tab reads the arguments, and again where the call runs
    // (host.ts), which also refuses what another tab sends.
    const name = checkCall(method, args);
    const spec: WorkerSide | undefined = isMethodName(name) ? IN_WORKER[name] : undefined;
    const wire = spec?.inTab ? spec.inTab(args, callingTab) : args;
    // Registered before the first await: an abort posted right after the call finds it.
    const id = Number.isSafeInteger(callId) && !aborts.has(callId!) ? callId! : undefined;
    const controller = new AbortController();
    if (id !== undefined) aborts.set(id, controller);
    try {
      return (await inFlight.track(target.call(method, wire, onProgress, false, controller.signal))) as never;
    } finally {
      if (id !== undefined) aborts.delete(id);
      releaseCallback(onProgress);
    }
  },

  async abort(callId) {
    aborts.get(callId)?.abort();
  },

  async status() {
    return (await inFlight.track(requireHost().call('status', []))) as Awaited<ReturnType<WorkerApi['status']>>;
  },

  async changePassphrase(current, next) {
    requireHost();
    if (!storedDatabase) throw new EngramError(ErrorCode.NOT_ENCRYPTED, 'an in-memory database is never encrypted');
    await inFlight.track(changePassphrase(storedDatabase.id, storedDatabase.name, current, next));
  },

  async unlock(given) {
    const target = requireHost();
    checkEncryption(given);
    const database = storedDatabase;
    if (!database || !target.unlock) throw new EngramError(ErrorCode.NOT_ENCRYPTED, 'this memory is not encrypted: it never locks');
    await inFlight.track(
      (async () => {
        // Checked here, against the key record: a wrong passphrase is WRONG_KEY in the tab that typed it.
        const dataKey = await unlock(database.id, database.name, given);
        if (!dataKey) throw notEncrypted(database.name);
        await target.unlock!(dataKey);
        secret = given;
      })(),
    );
  },

  async salvage(options) {
    // A worker either opens a Memory or salvages: a salvage must not run on a database this worker holds.
    if (opening || closed) throw new EngramError(ErrorCode.INVALID_INPUT, 'salvage runs in a worker of its own, never one that opened a Memory');
    closed = true;
    checkDatabaseName(options.name);
    const encryption = options.encryption ?? null;
    if (encryption !== null) checkEncryption(encryption);
    if (options.storage !== 'auto' && options.storage !== 'opfs' && options.storage !== 'idb') throw new EngramError(ErrorCode.INVALID_INPUT, 'salvage: storage must be auto, opfs or idb');
    const storage = await resolveStorage(options.storage);
    if (storage === 'memory') throw new EngramError(ErrorCode.INVALID_INPUT, 'salvage: an in-memory database is never stored');
    return whileNoTabHolds(`engram:${storage}:${options.name}`, () => salvageDatabase(options.name, storage, encryption));
  },

  async close() {
    if (closed) return;
    closed = true;
    await opening?.catch(() => undefined);
    // Calls already received are answered before the database closes (each ends by its timeout at the latest).
    await inFlight.settled();
    try {
      await host?.close();
    } finally {
      host = null;
      for (const hook of pageHooks.splice(0)) releaseCallback(hook);
    }
  },
};

/**
 * Exposed once per worker. A bundler puts the code this entry shares with its lazy chunks (the wa-sqlite VFS, the
 * embedder) in the entry's own file, and the chunks import it from there. WebKit (WebKitGTK 2.50, Safari) does not
 * count a module worker's top-level script as loaded: the first chunk that imports it evaluates this module a second
 * time, with state of its own. That copy used to expose a second API, never opened, on the same port: both answered
 * every message and the faster won, so in a production build an `add` right after `open` was refused with
 * WORKER_FAILED "the worker is not open yet". Only the first copy answers now.
 */
const EXPOSED = Symbol.for('engram.worker.exposed');
const scope = globalThis as typeof globalThis & { [EXPOSED]?: true };
if (!scope[EXPOSED]) {
  scope[EXPOSED] = true;
  Comlink.expose(api);
}
