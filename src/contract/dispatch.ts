/**
 * The worker's half of the method table (methods.ts): for each engine method what only a worker reads (the shape of
 * its answer from another tab, whether it holds a secret, its steps in the calling tab and on a retry), keyed by the
 * same names, and what the worker derives from both (the allowlist, the writes, the check of a call as it arrives).
 * Apart from methods.ts so that the page, which imports that table, does not ship what it never runs.
 */
import type { Engine } from '../engine/engine.js';
import { ErrorCode, invalidInput, isEngramError } from '../errors.js';
import type { MemoryInput, Progress } from '../types.js';
import { describeValue } from '../util/describe.js';
import {
  isMethodName,
  MEMORY_METHODS,
  METHOD_NAMES,
  SIGNATURES,
  timeoutFor,
  WORKER_METHOD_NAMES,
  WORKER_METHODS,
  workerSpec,
  type AnswerShape,
  type CallTimeouts,
  type HostOwnMethod,
  type MethodName,
  type MethodSpec,
  type Shape,
} from './methods.js';

export interface WorkerSide {
  /** What the answer must look like when it comes back from another tab. */
  readonly answer: AnswerShape;
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

/** Every method of MEMORY_METHODS, and no other: the mapped type asks for each name, `satisfies` refuses any other. */
export const IN_WORKER = {
  // Ids are given in the calling tab, so that a call re-sent to another tab's worker cannot add twice.
  add: { answer: 'ids', inTab: ([input], tab) => [withIds(input, tab)], retried: retriedAdd },
  search: {
    answer: 'search',
    inTab: (args, tab) => {
      const options = tab.withSearchDefaults(args[1]);
      return options === undefined ? [...args] : [args[0], options];
    },
  },
  get: { answer: 'object?' },
  timeline: { answer: 'object' },
  update: { answer: 'object' },
  remove: { answer: 'number' },
  pin: { answer: 'object' },
  count: { answer: 'number' },
  export: { answer: 'array' },
  import: { answer: 'ids' },
  related: { answer: 'array' },
  link: { answer: 'object' },
  unlink: { answer: 'number' },
  why: { answer: 'object' },
  remember: { answer: 'object' },
  consolidate: { answer: 'object' },
  syncNow: { answer: 'object' },
  rotateSyncKey: { answer: 'object', secret: true },
} as const satisfies { readonly [M in MethodName]: WorkerSide };

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

/** Methods whose worker-side entry says `secret`: run only where they were called, in the tab holding the database. */
export const SECRET_METHODS: ReadonlySet<string> = new Set<string>(METHOD_NAMES.filter((method) => (IN_WORKER[method] as WorkerSide).secret === true));


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


/** The timeout of `method` from one tab to the tab holding the database: a sealed method's own, else `timeoutFor`'s. */
export function timeoutBetweenTabs(method: string, timeouts: CallTimeouts): number {
  const sealed = workerSpec(method)?.sealed;
  return sealed ? timeouts[`${sealed.timeout}Ms`] : timeoutFor(method, timeouts);
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
  const answer = isMethodName(method) ? IN_WORKER[method].answer : workerSpec(method)?.answer;
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

