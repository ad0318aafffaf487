/**
 * Language models for Engram's LLM stages, each a small adapter with no dependency: Chrome's built-in Prompt API,
 * a WebLLM engine the app created, or any function. Importing this loads and fetches nothing; each adapter touches
 * its model only when a search stage calls it.
 */
export type { LanguageModel, LlmCallOptions, LlmCompletion, RerankCandidate, Reranker } from './types.js';
export { functionModel, type CompletionFunction } from './function-model.js';
export { promptApiModel, type PromptApiModel, type PromptApiModelOptions, type PromptApiAvailability } from './prompt-api.js';
export { webLlmModel, type WebLlmEngine, type WebLlmModelOptions } from './web-llm.js';
