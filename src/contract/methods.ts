/**
 * The Memory API as one table, in the way Comlink's protocol.ts declares its message types once: every engine method
 * a Memory offers, whether it writes, which timeout bounds it, whether it reports progress and what its arguments
 * must look like when they reach the worker. The page's forwarding methods (create-memory.ts), the worker's
 * allowlist and dispatch (worker/host.ts, worker/index.ts) and the timeouts between tabs (worker/leader.ts) are all
 * derived from it, so a new method is one entry here plus its implementation on `Engine`.
 */
import type { Engine } from '../engine/engine.js';
import { ErrorCode, invalidInput, isEngramError } from '../errors.js';
import type { MemoryInput, Progress } from '../types.js';
import { checkSignal } from '../util/abort.js';
import { describeValue } from '../util/describe.js';
import { checkSearchOptionKeys } from '../search/option-keys.js';
import { checkEncryption } from '../util/encryption.js';

/**
 * The shape one argument must have at the worker boundary: enough to refuse what a hand-made call (another script
 * of the origin, an older page) could send before it reaches the engine. The engine still validates in depth. A
 * trailing `?` also accepts undefined.
 */
type Shape = 'string' | 'string?' | 'object' | 'object?' | 'array' | 'object|array' | 'string|array' | 'boolean?';

/**
 * The shape of a method's answer, checked where an answer from another tab arrives (worker/leader.ts): a script
 * posing as the leader tab must not hand the caller a value of another type.
 */
type AnswerShape = 'ids' | 'number' | 'object' | 'object?' | 'array' | 'search';

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
  /** What the answer must look like when it comes back from another tab. */
  readonly answer: AnswerShape;
  /** Runs on the page before a call is posted, for what cannot cross at all (a function in the options). */
  readonly page?: (args: readonly unknown[]) => void;
  /**
   * The arguments hold a secret (a sync key): the call runs only in the worker of the tab that made it, and only when
   * that tab holds the database. It never travels to another tab: a follower refuses it with NOT_LEADER, and a
   * leader refuses it from a follower (worker/leader.ts).
   */
  readonly secret?: true;
  /**
   * Runs in the worker of the tab the call was made in, before the call may travel to another tab's engine: what
   * must be decided once, where the caller is (an add's ids, this tab's search defaults).
   */
  readonly inTab?: (args: readonly unknown[], tab: CallingTab) => unknown[];
  /**
   * Runs in place of the method when the call is re-sent after the tab that first received it went away
   * (worker/leader.ts), for a method whose first try may have been committed.
   */
  readonly retried?: (engine: Engine, args: readonly unknown[], run: () => Promise<unknown>) => Promise<unknown>;
}

/** What `inTab` reads of the tab a call was made in (worker/index.ts). */
export interface CallingTab {
  /** A new memory id. */
  newId(): string;
  /** This tab's default search options (`MemoryOptions.search`) under a call's, or undefined without any. */
  withSearchDefaults(options: unknown): unknown;
}

export const MEMORY_METHODS = {
  // Ids are given in the calling tab, so that a call re-sent to another tab's worker cannot add twice.
  add: { kind: 'write', timeout: 'write', progress: true, abortable: true, args: { input: 'object|array' }, answer: 'ids', inTab: ([input], tab) => [withIds(input, tab)], retried: retriedAdd },
  search: {
    kind: 'read',
    timeout: 'call',
    progress: false,
    args: { query: 'string', options: 'object?' },
    answer: 'search',
    page: ([, options]) => checkRemoteSearchOptions(options),
    inTab: (args, tab) => {
      const options = tab.withSearchDefaults(args[1]);
      return options === undefined ? [...args] : [args[0], options];
    },
  },
  get: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string' }, answer: 'object?' },
  timeline: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string', options: 'object?' }, answer: 'object' },
  update: { kind: 'write', timeout: 'write', progress: false, args: { id: 'string', patch: 'object' }, answer: 'object' },
  remove: { kind: 'write', timeout: 'write', progress: false, args: { ids: 'string|array' }, answer: 'number' },
  pin: { kind: 'write', timeout: 'write', progress: false, args: { id: 'string', pinned: 'boolean?' }, answer: 'object' },
  count: { kind: 'read', timeout: 'call', progress: false, args: {}, answer: 'number' },
  export: { kind: 'read', timeout: 'call', progress: false, args: {}, answer: 'array' },
  import: { kind: 'write', timeout: 'write', progress: true, abortable: true, args: { records: 'array' }, answer: 'ids' },
  related: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string' }, answer: 'array' },
  link: { kind: 'write', timeout: 'write', progress: false, args: { from: 'string', to: 'string', kind: 'string', options: 'object?' }, answer: 'object' },
  unlink: { kind: 'write', timeout: 'write', progress: false, args: { from: 'string', to: 'string', kind: 'string?' }, answer: 'number' },
  why: { kind: 'read', timeout: 'call', progress: false, args: { id: 'string', options: 'object?' }, answer: 'object' },
  remember: { kind: 'write', timeout: 'write', progress: false, abortable: true, args: { conversation: 'string|array', options: 'object?' }, answer: 'object' },
  consolidate: { kind: 'write', timeout: 'write', progress: false, abortable: true, args: { options: 'object?' }, answer: 'object' },
  syncNow: { kind: 'write', timeout: 'write', progress: false, args: {}, answer: 'object' },
  rotateSyncKey: { kind: 'write', timeout: 'write', progress: false, args: { next: 'object' }, answer: 'object', secret: true },
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

/** Every input without an id gets one. */
function withIds(input: unknown, tab: CallingTab): unknown {
  const give = (item: unknown) => (typeof item === 'object' && item !== null && !('id' in item) ? { ...item, id: tab.newId() } : item);
  return Array.isArray(input) ? input.map(give) : give(input);
}

/**
 * An add re-sent after a handover runs as any add: the engine's duplicate check, inside its write queue, sees
 * whether the first try was committed. A DUPLICATE_ID refusal with every id stored is that first try, answered
 * with its ids. Every id is checked, because one of them may have been stored before by another call (that add
 * then fails as a duplicate, as it should, instead of being answered as done).
 */
async function retriedAdd(engine: Engine, args: readonly unknown[], run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (error) {
    const ids = idsOf(args[0]);
    if (!isEngramError(error, ErrorCode.DUPLICATE_ID) || !ids || ids.length === 0) throw error;
    for (const id of ids) if ((await engine.get(id)) === null) throw error;
    return ids;
  }
}

function idsOf(input: unknown): string[] | null {
  const list = Array.isArray(input) ? input : [input];
  const ids = list.map((item: unknown) => (typeof item === 'object' && item !== null ? (item as MemoryInput).id : undefined));
  return ids.every((id): id is string => typeof id === 'string') ? ids : null;
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
function workerSpec(method: string): WorkerMethodSpec | undefined {
  return isWorkerMethodName(method) ? WORKER_METHODS[method] : undefined;
}

/** True for a poll (its entry says `poll`): answered while locked, counted as no use, completed by each tab. */
export function isPoll(method: string): boolean {
  return workerSpec(method)?.poll === true;
}

/** True for a method whose entry says `sealed`: it reaches the tab holding the database only as a sealed data key. */
export function isSealed(method: string): boolean {
  return workerSpec(method)?.sealed !== undefined;
}

/**
 * The only methods a worker runs for a caller (its page or another tab): the Memory API and the worker's own that
 * the host answers (`status`). Anything else the engine has (`close`, `setEmbedder`, its internals) is refused with
 * INVALID_INPUT.
 */
export const CALLABLE_METHODS: ReadonlySet<string> = new Set<string>([...METHOD_NAMES, ...WORKER_METHOD_NAMES.filter((method) => WORKER_METHODS[method].runs === 'host')]);

/**
 * Methods that change memories or their links: they go through the engine's write queue (so they may wait behind
 * another tab's long write), and the host schedules a lexical snapshot save after each (worker/index-saver.ts), also
 * after those that leave the index as it was (`link`, `unlink`, a `pin`).
 */
export const WRITE_METHODS: ReadonlySet<string> = new Set<string>(METHOD_NAMES.filter((method) => MEMORY_METHODS[method].kind === 'write'));

/** Methods whose entry says `secret`: run only where they were called, in the tab holding the database. */
export const SECRET_METHODS: ReadonlySet<string> = new Set<string>(METHOD_NAMES.filter((method) => (MEMORY_METHODS[method] as MethodSpec).secret === true));

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

/**
 * The worker's side: the arguments `engine[method]` is called with, the worker's own `signal` put back where the
 * page took the caller's from; `onProgress` goes in the trailing options of a method with progress.
 */
export function engineArgs(method: MethodName, args: readonly unknown[], onProgress: ((progress: Progress) => void) | undefined, signal: AbortSignal | undefined): unknown[] {
  const spec: MethodSpec = MEMORY_METHODS[method];
  const { max } = SIGNATURES[method];
  const given = signal && spec.abortable ? { signal } : {};
  // `{ onProgress }` goes after every declared argument, those left out included.
  if (spec.progress) return [...Array.from({ length: max }, (_, i) => args[i]), { onProgress, ...given }];
  if (!signal || !spec.abortable) return [...args];
  const padded = Array.from({ length: max }, (_, i) => args[i]);
  padded[max - 1] = { ...(padded[max - 1] as object | undefined), signal };
  return padded;
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

/** The timeout of `method` from one tab to the tab holding the database: a sealed method's own, else `timeoutFor`'s. */
export function timeoutBetweenTabs(method: string, timeouts: CallTimeouts): number {
  const sealed = workerSpec(method)?.sealed;
  return sealed ? timeouts[`${sealed.timeout}Ms`] : timeoutFor(method, timeouts);
}

/** Each method's arguments as `checkCall` reads them, worked out once: their shapes in order, and how many may travel. */
const SIGNATURES = Object.fromEntries(
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

const SHAPES: Record<Shape, { test: (value: unknown) => boolean; says: string }> = {
  string: { test: (v) => typeof v === 'string', says: 'a string' },
  'string?': { test: (v) => v === undefined || typeof v === 'string', says: 'a string or undefined' },
  object: { test: (v) => isObject(v), says: 'an object' },
  'object?': { test: (v) => v === undefined || isObject(v), says: 'an object or undefined' },
  array: { test: (v) => Array.isArray(v), says: 'an array' },
  'object|array': { test: (v) => Array.isArray(v) || isObject(v), says: 'an object or an array' },
  'string|array': { test: (v) => typeof v === 'string' || Array.isArray(v), says: 'a string or an array' },
  'boolean?': { test: (v) => v === undefined || typeof v === 'boolean', says: 'a boolean or undefined' },
};

const ANSWERS: Record<AnswerShape, (value: unknown) => boolean> = {
  ids: (v) => Array.isArray(v) && v.every((id) => typeof id === 'string'),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  object: (v) => isObject(v),
  'object?': (v) => v === null || isObject(v),
  array: (v) => Array.isArray(v) && v.every(isObject),
  search: (v) => isObject(v) && Array.isArray((v as { hits?: unknown }).hits) && (v as { hits: unknown[] }).hits.every(isObject) && isObject((v as { context?: unknown }).context),
};

/** True when `value` has the shape of an answer of `method` (anything else answers an object). Not a deep check. */
export function isAnswerOf(method: string, value: unknown): boolean {
  const answer = isMethodName(method) ? MEMORY_METHODS[method].answer : workerSpec(method)?.answer;
  return answer ? ANSWERS[answer](value) : isObject(value);
}

function isObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * INVALID_INPUT unless `method` is in CALLABLE_METHODS and `args` has the arity and shapes its table entry gives.
 * Runs in the worker where a call arrives (worker/index.ts) and where it runs (worker/host.ts).
 */
export function checkCall(method: unknown, args: unknown): MethodName | HostOwnMethod {
  if (typeof method !== 'string' || !CALLABLE_METHODS.has(method)) {
    throw invalidInput(`${typeof method === 'string' ? `"${method.slice(0, 40)}"` : typeof method} is not a Memory method`, { method: String(method).slice(0, 40) });
  }
  if (!Array.isArray(args)) throw invalidInput(`the arguments of ${method}() must be an array`);
  if (!isMethodName(method)) return method as HostOwnMethod; // the host's own take no arguments and ignore any
  const { args: shapes, min, max } = SIGNATURES[method];
  if (args.length < min || args.length > max) {
    const takes = min === max ? `${min}` : `${min} to ${max}`;
    throw invalidInput(`${method}() takes ${takes} argument${max === 1 ? '' : 's'}, got ${args.length}`, { method });
  }
  shapes.forEach(([name, shape], i) => {
    if (!SHAPES[shape].test(args[i])) throw invalidInput(`${method}(): ${name} must be ${SHAPES[shape].says}, got ${describeValue(args[i])}`, { method });
  });
  return method;
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
