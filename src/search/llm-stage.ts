/**
 * One call of a search stage to the language model, never allowed to fail the search: an error, a timeout or an
 * answer of the wrong shape becomes `{ ok: false, note }`, and the stage is skipped. Token counts are the model's
 * when it reports them, else estimated from the text, so the trace always sums something real.
 */
import { ErrorCode, isEngramError } from '../errors.js';
import { raceAbort } from '../llm/abort.js';
import { abortedError, type CallAbort } from '../util/abort.js';
import { checkCompletion } from '../llm/completion.js';
import type { LanguageModel } from '../llm/types.js';
import { estimateTokens } from './assemble.js';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/** What a language-model stage may use: the model (null when this search may not call one), why not, and its time limit. */
export interface LlmAccess {
  llm: LanguageModel | null;
  /** Why `llm` is null, for the stage's note. */
  unavailable: string;
  timeoutMs: number;
}

/** What a stage reports to the trace besides its result. */
export interface StageOutcome {
  usage?: TokenUsage | undefined;
  note?: string | undefined;
}

/** Why a call gave nothing usable: no model reached, no answer in time, a failure, or an answer that could not be read. */
export type LlmFailure = 'unavailable' | 'timeout' | 'failed' | 'unreadable';

type LlmAnswer<T> =
  | { ok: true; value: T; usage: TokenUsage }
  /** No `usage` when no model was reached (MODEL_NOT_FOUND): the trace counts no call and no tokens. */
  | { ok: false; note: string; failure: LlmFailure; usage?: TokenUsage };

interface LlmStageCall<T> {
  prompt: string;
  maxTokens: number;
  timeoutMs: number;
  /** Reads the answer; throws (any error) when it is malformed. */
  parse(text: string): T;
  /** Passed to `complete` as is (the Prompt API's `responseConstraint`, a JSON schema the answer must follow). */
  responseConstraint?: object;
  /**
   * The calling method's signal (memory formation): handed to the model with the timeout's, and when it aborts the
   * call throws that method's ABORTED error instead of answering `{ ok: false }`.
   */
  abort?: CallAbort;
}

/** Calls `llm` once with a timeout, and reads the answer with `parse`. */
export async function askLlm<T>(llm: LanguageModel, call: LlmStageCall<T>): Promise<LlmAnswer<T>> {
  const promptEstimate = estimateTokens(call.prompt);
  const unanswered: TokenUsage = { promptTokens: promptEstimate, completionTokens: 0 };
  const settled = await settleWithin((signal) => llm.complete(call.prompt, call.responseConstraint ? { maxTokens: call.maxTokens, signal, responseConstraint: call.responseConstraint } : { maxTokens: call.maxTokens, signal }), call.timeoutMs, call.abort?.signal);
  if (settled.kind === 'aborted') throw abortedError(call.abort!.method, call.abort!.signal);
  if (settled.kind === 'timeout') return { ok: false, failure: 'timeout', note: `the language model did not answer within ${call.timeoutMs} ms`, usage: unanswered };
  if (settled.kind === 'error') {
    // A model that is not there (no Prompt API, none picked) read no prompt: no call, no tokens.
    if (isEngramError(settled.error, ErrorCode.MODEL_NOT_FOUND)) return { ok: false, failure: 'unavailable', note: `no language model: ${errorText(settled.error)}` };
    return { ok: false, failure: 'failed', note: `the language model failed: ${errorText(settled.error)}`, usage: unanswered };
  }
  let completion: { text: string; promptTokens?: number; completionTokens?: number };
  try {
    const checked = checkCompletion(settled.value, 'the language model');
    completion = typeof checked === 'string' ? { text: checked } : checked;
  } catch (error) {
    return { ok: false, failure: 'unreadable', note: `the language model answered something other than text (${errorText(error)})`, usage: unanswered };
  }
  const usage: TokenUsage = {
    promptTokens: completion.promptTokens ?? promptEstimate,
    completionTokens: completion.completionTokens ?? estimateTokens(completion.text),
  };
  try {
    return { ok: true, value: call.parse(completion.text), usage };
  } catch (error) {
    return { ok: false, failure: 'unreadable', note: `the language model's answer could not be read: ${errorText(error)}`, usage };
  }
}

type Settled<T> = { kind: 'value'; value: T } | { kind: 'error'; error: unknown } | { kind: 'timeout' } | { kind: 'aborted' };

/**
 * Runs `start` and settles within `timeoutMs`: its value, its error, `timeout`, or `aborted` once the caller's
 * `signal` aborts (at once if it already has, without starting). The signal handed to `start` is aborted on either,
 * so a model that honours it stops working for a stage that gave up.
 */
export async function settleWithin<T>(start: (signal: AbortSignal) => Promise<T> | T, timeoutMs: number, signal?: AbortSignal): Promise<Settled<T>> {
  if (signal?.aborted) return { kind: 'aborted' };
  const controller = new AbortController();
  const timedOut = new Error('timeout');
  const timer = setTimeout(() => controller.abort(timedOut), timeoutMs);
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // Started inside a promise, so a synchronous throw of `start` settles as its error.
    const running = Promise.resolve().then(() => start(controller.signal));
    return { kind: 'value', value: await raceAbort(running, controller.signal) };
  } catch (error) {
    return signal?.aborted ? { kind: 'aborted' } : error === timedOut ? { kind: 'timeout' } : { kind: 'error', error };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

export function errorText(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/^Engram: /, '');
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
