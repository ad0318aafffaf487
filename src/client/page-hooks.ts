/**
 * The page's half of its language model and re-ranker hooks: the functions that cross to the worker at `open`
 * (their types and the worker's half are in src/contract/remote-hooks.ts).
 */
import type { PageCompletion, PageReranker } from '../contract/remote-hooks.js';
import type { LanguageModel, Reranker } from '../llm/types.js';

/** Page side: the function that crosses for `llm` (wrapped in `Comlink.proxy` by the caller). */
export function pageCompletion(llm: LanguageModel): PageCompletion {
  return async (prompt, maxTokens, responseConstraint) =>
    llm.complete(prompt, { ...(typeof maxTokens === 'number' ? { maxTokens } : {}), ...(isObject(responseConstraint) ? { responseConstraint } : {}) });
}

/** Page side: the function that crosses for `reranker`. */
export function pageReranker(reranker: Reranker): PageReranker {
  return async (query, candidates) => reranker(query, candidates);
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
