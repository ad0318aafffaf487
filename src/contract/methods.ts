/**
 * The Memory API as one table, in the way Comlink's protocol.ts declares its message types once: every engine method
 * a Memory offers, whether it writes, which timeout bounds it, whether it reports progress and what its arguments
 * must look like when they reach the worker. The page's forwarding methods (create-memory.ts), the worker's
 * allowlist and dispatch (worker/host.ts, worker/index.ts) and the timeouts between tabs (worker/leader.ts) are all
 * derived from it and from its worker half (dispatch.ts, keyed by the same names), so a new method is one entry in
 * each plus its implementation on `Engine`.
 */
import type { Engine } from '../engine/engine.js';
import { invalidInput } from '../errors.js';
import { checkSignal } from '../util/abort.js';
import { checkSearchOptionKeys } from '../search/option-keys.js';
import { checkEncryption } from '../util/encryption.js';

/**
 * The shape one argument must have at the worker boundary: enough to refuse what a hand-made call (another script
 * of the origin, an older page) could send before it reaches the engine. The engine still validates in depth. A
 * trailing `?` also accepts undefined.
 */
export type Shape = 'string' | 'string?' | 'object' | 'object?' | 'array' | 'object|array' | 'string|array' | 'boolean?';

/**
 * The shape of a method's answer, checked where an answer from another tab arrives (worker/leader.ts): a script
 * posing as the leader tab must not hand the caller a value of another type.
 */
export type AnswerShape = 'ids' | 'number' | 'object' | 'object?' | 'array' | 'search';

export interface MethodSpec {
  /** 'write': changes memories or their links, through the engine's write queue; the host saves a lexical snapshot after. */
  readonly kind: 'read' | 'write';
  /** Which of the page's `CallTimeouts` bounds a call: `callMs` or `writeMs`. */
  readonly timeout: 'call' | 'write';
  /**
   * The method's last parameter is `{ onProgress }`: the callback travels apart from the arguments (as a Comlink
   * proxy, or as progress messages between tabs) and each event restarts the call's timeout.
   */
  readonly progress: boolean;
  /**
   * The call takes `signal` (an AbortSignal): in the trailing `{ onProgress, signal }` of a method with progress, else
   * in its last argument (its options). The signal stays in the page, which sends `abort(callId)` when it aborts
   * (WorkerApi.abort); the worker that runs the call hands its own signal to the engine (worker/host.ts).
   */
  readonly abortable?: true;
  /** The arguments that travel, by name, in order; optional ones (`?`) come last. */
  readonly args: Readonly<Record<string, Shape>>;
  /** Runs on the page before a call is posted, for what cannot cross at all (a function in the options). */
  readonly page?: (args: readonly unknown[]) => void;
}

export const MEMORY_METHODS = {
  add: { kind: 'write', timeout: 'write', progress: true, abortable: true, args: { input: 'object|array' } },
  search: {
    kind: 'read',
    timeout: 'call',
    progress: false,
    args: { query: 'string', options: 'object?' },
    page: ([, options]) => checkRemoteSearchOptions(options),
  },
  get: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string' } },
  timeline: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string', options: 'object?' } },
  update: { kind: 'write', timeout: 'write', progress: false, args: { id: 'string', patch: 'object' } },
  remove: { kind: 'write', timeout: 'write', progress: false, args: { ids: 'string|array' } },
  pin: { kind: 'write', timeout: 'write', progress: false, args: { id: 'string', pinned: 'boolean?' } },
  count: { kind: 'read', timeout: 'call', progress: false, args: {} },
  export: { kind: 'read', timeout: 'call', progress: false, args: {} },
  import: { kind: 'write', timeout: 'write', progress: true, abortable: true, args: { records: 'array' } },
  related: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string' } },
  link: { kind: 'write', timeout: 'write', progress: false, args: { from: 'string', to: 'string', kind: 'string', options: 'object?' } },
  unlink: { kind: 'write', timeout: 'write', progress: false, args: { from: 'string', to: 'string', kind: 'string?' } },
  why: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string', options: 'object?' } },
  remember: { kind: 'write', timeout: 'write', progress: false, abortable: true, args: { conversation: 'string|array', options: 'object?' } },
  consolidate: { kind: 'write', timeout: 'write', progress: false, abortable: true, args: { options: 'object?' } },
  syncNow: { kind: 'write', timeout: 'write', progress: false, args: {} },
  rotateSyncKey: { kind: 'write', timeout: 'write', progress: false, args: { next: 'object' } },
} as const satisfies { readonly [M in keyof Engine]?: MethodSpec };

/**
 * The worker's own methods, in the same table: a Memory member that is not an engine call. Each has its own method
 * on the worker (`WorkerApi`), runs in the worker of the tab it was called in, and from there either travels like
 * an engine call to the tab holding the database (`runs: 'host'`) or runs right there (`runs: 'tab'`: a passphrase
 * never travels to another tab).
 */
export interface WorkerMethodSpec {
  /** Which of the page's `CallTimeouts` bounds a call. */
  readonly timeout: 'call' | 'write';
  /** 'host': through `call` to the tab holding the database, where the host answers it (the allowlist has it). 'tab': in this tab's worker only. */
  readonly runs: 'host' | 'tab';
  /** The arguments the page passes on, by name, in order. */
  readonly args: Readonly<Record<string, Shape>>;
  /** What the answer must look like when it comes back from another tab; absent: any object. */
  readonly answer?: AnswerShape;
  /** Runs on the page before the call is posted: checks the arguments and gives those that travel. */
  readonly page?: (args: readonly unknown[]) => unknown[];
  /**
   * A poll: answered even while the database is locked (worker/idle-lock.ts), counted as no use (neither the idle
   * lock's clock nor the model's wait for a first call starts on it), and each tab adds its own part of the answer
   * (worker/leader.ts: its count of ignored messages, whether it leads).
   */
  readonly poll?: true;
  /**
   * Reaches the tab holding the database only as the data key, sealed for that tab alone (worker/leader.ts), under
   * this timeout; the page's passphrase or key never leaves its tab.
   */
  readonly sealed?: { readonly timeout: 'call' | 'write' };
}

export const WORKER_METHODS = {
  // Also reports this tab's own worker, whichever tab answered the rest.
  status: { timeout: 'call', runs: 'host', args: {}, poll: true },
  changePassphrase: { timeout: 'write', runs: 'tab', args: { current: 'string', next: 'string' } },
  // Checked in this tab's worker against the key record; another tab gets the data key sealed.
  unlock: { timeout: 'write', runs: 'tab', args: { secret: 'object' }, page: ([secret]) => [checkedSecret(secret)], sealed: { timeout: 'call' } },
} as const satisfies { readonly [M in 'status' | 'changePassphrase' | 'unlock']: WorkerMethodSpec };

/** `unlock`'s argument: a passphrase, or `{ passphrase }` / `{ key }`. */
function checkedSecret(secret: unknown): unknown {
  const given = typeof secret === 'string' ? { passphrase: secret } : secret;
  checkEncryption(given);
  return given;
}

/** The engine methods a Memory offers. */
export type MethodName = keyof typeof MEMORY_METHODS;
/** The methods whose entry says 'write'. */
export type WriteMethod = { [M in MethodName]: (typeof MEMORY_METHODS)[M]['kind'] extends 'write' ? M : never }[MethodName];
/** The methods that take `{ onProgress }` after their arguments. */
export type ProgressMethod = { [M in MethodName]: (typeof MEMORY_METHODS)[M]['progress'] extends true ? M : never }[MethodName];

/** The arguments of `M` that travel to the worker (a progress callback travels separately). */
export type WireArgs<M extends MethodName> = M extends ProgressMethod ? [Parameters<Engine[M]>[0]] : Parameters<Engine[M]>;
export type WireResult<M extends MethodName> = Awaited<ReturnType<Engine[M]>>;

export const METHOD_NAMES = Object.keys(MEMORY_METHODS) as MethodName[];

/** The worker's own methods (WORKER_METHODS). */
export type WorkerMethodName = keyof typeof WORKER_METHODS;
/** Those the host answers, through `call` like the engine's. */
export type HostOwnMethod = { [M in WorkerMethodName]: (typeof WORKER_METHODS)[M]['runs'] extends 'host' ? M : never }[WorkerMethodName];

export const WORKER_METHOD_NAMES = Object.keys(WORKER_METHODS) as WorkerMethodName[];

/** True for a key of the table itself (not one inherited from Object.prototype, such as `constructor`). */
export function isMethodName(method: unknown): method is MethodName {
  return typeof method === 'string' && Object.hasOwn(MEMORY_METHODS, method);
}

function isWorkerMethodName(method: unknown): method is WorkerMethodName {
  return typeof method === 'string' && Object.hasOwn(WORKER_METHODS, method);
}

/** The worker table's entry of `method`, or undefined for an engine method or a name outside the table. */
export function workerSpec(method: string): WorkerMethodSpec | undefined {
  return isWorkerMethodName(method) ? WORKER_METHODS[method] : undefined;
}

/**
 * The page's side of `signal`: the call's signal (checked: INVALID_INPUT for anything but an AbortSignal) and the
 * arguments without it, since an AbortSignal cannot be cloned. `args` are the declared ones, `trailing` what follows
 * them (`{ onProgress, signal }` of a method with progress).
 */
export function takeSignal(method: MethodName, args: unknown[], trailing: unknown): { args: unknown[]; signal: AbortSignal | undefined } {
  const spec: MethodSpec = MEMORY_METHODS[method];
  if (!spec.abortable) return { args, signal: undefined };
  if (spec.progress) return { args, signal: checkSignal((trailing as { signal?: unknown } | null | undefined)?.signal, method) };
  const { max } = SIGNATURES[method];
  const options = args[max - 1];
  if (typeof options !== 'object' || options === null || !('signal' in options)) return { args, signal: undefined };
  const { signal, ...rest } = options as { signal?: unknown };
  const sent = args.slice();
  sent[max - 1] = rest;
  return { args: sent, signal: checkSignal(signal, method) };
}

/** How long a call may go unanswered, as the page chose (plain data, sent to the worker at open). */
export interface CallTimeouts {
  /** Methods of timeout 'call', and `status`. */
  callMs: number;
  /** Methods of timeout 'write', and `changePassphrase`; restarted by each progress event of a method with progress. */
  writeMs: number;
  /** Opening (a follower waits for the leader, which may be rebuilding a large index) and closing. */
  openMs: number;
}

/** The timeout for one call of `method`, as its entry says; anything outside the table gets the read timeout. */
export function timeoutFor(method: string, timeouts: CallTimeouts): number {
  const timeout = isMethodName(method) ? MEMORY_METHODS[method].timeout : (workerSpec(method)?.timeout ?? 'call');
  return timeouts[`${timeout}Ms`];
}

/** Each method's arguments as `checkCall` reads them, worked out once: their shapes in order, and how many may travel. */
export const SIGNATURES = Object.fromEntries(
  METHOD_NAMES.map((method) => {
    const args = Object.entries<Shape>(MEMORY_METHODS[method].args);
    return [method, { args, min: args.filter(([, shape]) => !shape.endsWith('?')).length, max: args.length }];
  }),
) as Record<MethodName, { args: [string, Shape][]; min: number; max: number }>;

/** How many arguments of `method` travel: at least the required ones, at most all of them. */
export function arityOf(method: MethodName): { min: number; max: number } {
  const { min, max } = SIGNATURES[method];
  return { min, max };
}

/**
 * Search options cross to the worker as plain data, so the `boost` hook (a function) cannot: refused in a Memory's
 * default search options and in each search's, with the same INVALID_INPUT, like options that are not an object.
 */
export function checkRemoteSearchOptions(searchOptions: unknown): void {
  if (searchOptions === undefined) return;
  if (typeof searchOptions !== 'object' || searchOptions === null || Array.isArray(searchOptions)) {
    throw invalidInput(`search options must be an object, got ${searchOptions === null ? 'null' : typeof searchOptions}`);
  }
  if ('boost' in searchOptions) {
    throw invalidInput('search option boost runs only in-process (createEngine): a Memory searches in a worker');
  }
  checkSearchOptionKeys(searchOptions);
}
