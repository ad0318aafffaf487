/**
 * Cancelling a long call with an `AbortSignal`: the signal checked, the call's coded ABORTED error, and a wait that
 * ends as soon as the signal aborts.
 */
import { EngramError, ErrorCode, invalidInput } from '../errors.js';
import { describeValue } from './describe.js';

/** Races `work` against `signal`: rejects with the signal's reason as soon as it aborts, and leaves no listener behind. */
export async function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A call's signal and its name, for its ABORTED error. */
export interface CallAbort {
  signal: AbortSignal | undefined;
  method: string;
}

/** INVALID_INPUT unless `signal` is undefined or an AbortSignal (a plain object would never abort). */
export function checkSignal(signal: unknown, method: string): AbortSignal | undefined {
  if (signal === undefined) return undefined;
  if (typeof AbortSignal === 'undefined' || !(signal instanceof AbortSignal)) throw invalidInput(`${method} option signal must be an AbortSignal, got ${describeValue(signal)}`);
  return signal;
}

/** The ABORTED error of `method` (`details.method`); a write's message says nothing of it was stored. */
export function abortedError(method: string, signal?: AbortSignal): EngramError {
  const reason: unknown = signal?.reason;
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
  const why = timedOut ? ' (its signal timed out)' : '';
  const stored = OPENS.has(method) ? '' : ': nothing of it was stored';
  return new EngramError(ErrorCode.ABORTED, `${method}() was aborted${why}${stored}`, { cause: reason, details: { method } });
}

/** The calls that open something rather than write. */
const OPENS: ReadonlySet<string> = new Set(['createEmbedder', 'createMemory']);

/** Throws `method`'s ABORTED error when `signal` has aborted. */
export function throwIfAborted(signal: AbortSignal | undefined, method: string): void {
  if (signal?.aborted) throw abortedError(method, signal);
}

/** `work`, or `method`'s ABORTED error as soon as `signal` aborts (what `work` does after that is its own concern). */
export async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined, method: string): Promise<T> {
  if (!signal) return work;
  try {
    return await raceAbort(work, signal);
  } catch (error) {
    if (signal.aborted && error === signal.reason) throw abortedError(method, signal);
    throw error;
  }
}

/**
 * `task`, queued by `enqueue` (a write queue's `run`): while it waits for its turn, an abort rejects at once with
 * `method`'s ABORTED error (the task, when its turn comes, must see the signal and write nothing); once it runs, its
 * own checks decide, so a task past its commit is never answered as aborted. An already aborted signal queues nothing.
 */
export function queuedUnlessAborted<T>(enqueue: (task: () => Promise<T>) => Promise<T>, task: () => Promise<T>, signal: AbortSignal | undefined, method: string): Promise<T> {
  if (!signal) return enqueue(task);
  if (signal.aborted) return Promise.reject(abortedError(method, signal));
  let started = false;
  const run = enqueue(() => {
    started = true;
    return task();
  });
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (!started) reject(abortedError(method, signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    run.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
