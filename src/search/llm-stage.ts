/**
 * One call of a search stage to the language model, never allowed to fail the search: an error, a timeout or an
 * answer of the wrong shape becomes `{ ok: false, note }`, and the stage is skipped. Token counts are the model's
 * when it reports them, else estimated from the text (`estimated: true`), so the trace always sums something real.
 */
import { ErrorCode, isEngramError } from '../errors.js';
import { checkCompletion } from '../llm/completion.js';
import type { LanguageModel } from '../llm/types.js';
import { estimateTokens } from './assemble.js';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export const NO_TOKENS: Readonly<TokenUsage> = Object.freeze({ promptTokens: 0, completionTokens: 0 });

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

export type LlmAnswer<T> =
  | { ok: true; value: T; usage: TokenUsage; estimated: boolean }
  /** No `usage` when no model was reached (MODEL_NOT_FOUND): the trace counts no call and no tokens. */
  | { ok: false; note: string; usage?: TokenUsage; estimated: boolean };

export interface LlmStageCall<T> {
  prompt: string;
  maxTokens: number;
  timeoutMs: number;
  /** Aborted when the whole search is abandoned. */
  signal?: AbortSignal;
  /** Reads the answer; throws (any error) when it is malformed. */
  parse(text: string): T;
}

/** Calls `llm` once with a timeout, and reads the answer with `parse`. */
export async function askLlm<T>(llm: LanguageModel, call: LlmStageCall<T>): Promise<LlmAnswer<T>> {
  const promptEstimate = estimateTokens(call.prompt);
  const unanswered = { promptTokens: promptEstimate, completionTokens: 0 };
  const settled = await settleWithin((signal) => llm.complete(call.prompt, { maxTokens: call.maxTokens, signal }), call.timeoutMs, call.signal);
  if (settled.kind === 'timeout') return failed(`the language model did not answer within ${call.timeoutMs} ms`, unanswered, true);
  if (settled.kind === 'error') {
    // A model that is not there (no Prompt API, none picked) read no prompt: no call, no tokens.
    if (isEngramError(settled.error, ErrorCode.MODEL_NOT_FOUND)) return { ok: false, note: `no language model: ${describe(settled.error)}`, estimated: false };
    return failed(`the language model failed: ${describe(settled.error)}`, unanswered, true);
  }
  let completion: { text: string; promptTokens?: number; completionTokens?: number };
  try {
    const checked = checkCompletion(settled.value, 'the language model');
    completion = typeof checked === 'string' ? { text: checked } : checked;
  } catch (error) {
    return failed(`the language model answered something other than text (${describe(error)})`, unanswered, true);
  }
  const estimated = completion.promptTokens === undefined || completion.completionTokens === undefined;
  const usage: TokenUsage = {
    promptTokens: completion.promptTokens ?? promptEstimate,
    completionTokens: completion.completionTokens ?? estimateTokens(completion.text),
  };
  try {
    return { ok: true, value: call.parse(completion.text), usage, estimated };
  } catch (error) {
    return failed(`the language model's answer could not be read: ${describe(error)}`, usage, estimated);
  }
}

export type Settled<T> = { kind: 'value'; value: T } | { kind: 'error'; error: unknown } | { kind: 'timeout' };

/**
 * Runs `start` and settles within `timeoutMs`: its value, its error, or `timeout`. The signal handed to `start` is
 * aborted on the timeout and when `outer` is, so a model that honours it stops working for a search that is over.
 */
export async function settleWithin<T>(start: (signal: AbortSignal) => Promise<T> | T, timeoutMs: number, outer?: AbortSignal): Promise<Settled<T>> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<{ kind: 'timeout' }>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
  });
  try {
    const running = (async (): Promise<Settled<T>> => {
      try {
        return { kind: 'value', value: await start(controller.signal) };
      } catch (error) {
        return { kind: 'error', error };
      }
    })();
    const settled = await Promise.race([running, timedOut]);
    if (settled.kind === 'timeout') controller.abort(new Error('timeout'));
    return settled;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
}

function failed(note: string, usage: TokenUsage, estimated: boolean): LlmAnswer<never> {
  return { ok: false, note, usage, estimated };
}

export function describe(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/^Engram: /, '');
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
