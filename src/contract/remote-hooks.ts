/**
 * The page's language model and re-ranker (`createMemory({ llm, reranker })`), called from the worker: what crosses
 * and the worker's half (the page's half is src/client/page-hooks.ts). Each crosses at `open` as one function behind
 * a Comlink proxy; the worker wraps it back into a `LanguageModel` / `Reranker` for its engine and checks every
 * answer, since it comes from another realm: a completion must be a string or `{ text, promptTokens?,
 * completionTokens? }` with finite counts ≥ 0, a ranking an array of string ids. Anything else is INVALID_INPUT,
 * which the search stage turns into a skipped stage with a note.
 *
 * `signal` does not cross: an AbortSignal cannot be cloned, so the page's call runs to its end even when the stage
 * has given up. The stage's own timeout bounds the wait, and a late answer is dropped.
 */
import type * as Comlink from 'comlink';
import { invalidInput } from '../errors.js';
import { checkCompletion, checkRankedIds } from '../llm/completion.js';
import type { LanguageModel, LlmCompletion, RerankCandidate, Reranker } from '../llm/types.js';

/** The page's `llm.complete`, as the worker calls it: only `maxTokens` and `responseConstraint` (plain data) travel. */
export type PageCompletion = (prompt: string, maxTokens: number | undefined, responseConstraint?: object) => Promise<LlmCompletion>;
/** The page's `reranker`, as the worker calls it. */
export type PageReranker = (query: string, candidates: RerankCandidate[]) => Promise<string[]>;

/** What arrived at `open` for a hook: nothing, or a Comlink proxy (a callable). Anything else is refused. */
export function checkRemoteHook(value: unknown, option: 'llm' | 'reranker'): Comlink.Remote<(...args: never[]) => unknown> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'function') throw invalidInput(`the ${option} hook must arrive as a proxied function, got ${typeof value}`);
  return value as Comlink.Remote<(...args: never[]) => unknown>;
}

/** Worker side: the page's model as the engine's `LanguageModel`. `signal` is ignored (see the top of this file). */
export function languageModelFromPage(remote: Comlink.Remote<PageCompletion>): LanguageModel {
  return {
    async complete(prompt, options) {
      const maxTokens = typeof options?.maxTokens === 'number' ? options.maxTokens : undefined;
      const answer = options?.responseConstraint ? await remote(prompt, maxTokens, options.responseConstraint) : await remote(prompt, maxTokens);
      return checkCompletion(answer, "the page's language model");
    },
  };
}

/** Worker side: the page's re-ranker as the engine's `Reranker`. Only id, text and score cross to the page. */
export function rerankerFromPage(remote: Comlink.Remote<PageReranker>): Reranker {
  return async (query, candidates) => {
    const plain = candidates.map(({ id, text, score }) => ({ id, text, score }));
    return checkRankedIds(await remote(query, plain), "the page's reranker");
  };
}
