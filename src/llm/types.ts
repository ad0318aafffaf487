/**
 * The language model Engram may call during a search, and the app's own re-ranker. Both are optional: with
 * neither, no search stage calls out, and nothing is loaded or fetched.
 */

/** What `complete` resolves with: the text, or the text with the token counts the model reported. */
export type LlmCompletion = string | { text: string; promptTokens?: number; completionTokens?: number };

export interface LlmCallOptions {
  /** Longest answer the stage can use. */
  maxTokens?: number;
  /** Aborted when the stage gives up (its timeout) or the search ends. In a Memory it does not cross to the page. */
  signal?: AbortSignal;
  /**
   * A JSON schema the answer must follow, where the model can enforce one (the Prompt API's `responseConstraint`);
   * other models ignore it, and the caller still checks the answer. Plain data: it crosses to the page.
   */
  responseConstraint?: object;
}

/** Any text-completion model: Chrome's Prompt API, WebLLM, or a function calling the app's own server (src/llm/adapters). */
export interface LanguageModel {
  complete(prompt: string, options: LlmCallOptions): Promise<LlmCompletion>;
}

/** A candidate as the `reranker` hook sees it. */
export interface RerankCandidate {
  id: string;
  text: string;
  /** The score so far (fused, adjusted), best first. */
  score: number;
}

/**
 * The app's own re-ranker (search option `rerank: { by: 'hook' }`): returns the candidates' ids best first. Ids it
 * leaves out keep their order after the ones it names; unknown ids are ignored.
 */
export type Reranker = (query: string, candidates: RerankCandidate[]) => Promise<string[]> | string[];
