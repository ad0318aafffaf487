/**
 * Shape checks for the language model and re-ranker an app passes, and for what they hand back where Engram cannot
 * trust it: the answer of an app's function (functionModel) and whatever comes back from the page to the worker
 * (src/contract/remote-hooks.ts).
 * Anything but the documented shapes is refused with INVALID_INPUT, so a search stage skips it and says why.
 */
import { invalidInput } from '../errors.js';
import type { LanguageModel, LlmCompletion, Reranker } from './types.js';

/** Longest answer text accepted (characters): far past what any stage asks for (`maxTokens`), short of a hang. */
const MAX_COMPLETION_CHARS = 1_000_000;

/** The `llm` option of createEngine and createMemory: null/undefined (none) or an object with a `complete` method. */
export function checkLanguageModel(llm: unknown): LanguageModel | null {
  if (llm === undefined || llm === null) return null;
  if (typeof llm !== 'object' || typeof (llm as Partial<LanguageModel>).complete !== 'function') {
    throw invalidInput('llm must be an object with a complete(prompt, options) method (see src/llm for adapters)');
  }
  return llm as LanguageModel;
}

/** The `reranker` option of createEngine and createMemory: null/undefined (none) or a function. */
export function checkReranker(reranker: unknown): Reranker | null {
  if (reranker === undefined || reranker === null) return null;
  if (typeof reranker !== 'function') throw invalidInput('reranker must be a function (query, candidates) → ids');
  return reranker as Reranker;
}

/** A completion as `LanguageModel.complete` must resolve: a string, or `{ text, promptTokens?, completionTokens? }`. */
export function checkCompletion(value: unknown, source: string): LlmCompletion {
  if (typeof value === 'string') return checkText(value, source);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidInput(`${source} answered ${describeValue(value)}: expected a string or { text, promptTokens?, completionTokens? }`);
  }
  const { text, promptTokens, completionTokens } = value as Record<string, unknown>;
  if (typeof text !== 'string') throw invalidInput(`${source} answered an object whose text is ${describeValue(text)}, not a string`);
  const completion: { text: string; promptTokens?: number; completionTokens?: number } = { text: checkText(text, source) };
  if (promptTokens !== undefined) completion.promptTokens = checkCount(promptTokens, 'promptTokens', source);
  if (completionTokens !== undefined) completion.completionTokens = checkCount(completionTokens, 'completionTokens', source);
  return completion;
}

/** A re-ranker's answer: an array of ids (strings), best first. */
export function checkRankedIds(value: unknown, source: string): string[] {
  if (!Array.isArray(value)) throw invalidInput(`${source} answered ${describeValue(value)}: expected an array of ids`);
  const ids: string[] = [];
  for (const id of value as unknown[]) {
    if (typeof id !== 'string') throw invalidInput(`${source} answered an id that is ${describeValue(id)}, not a string`);
    ids.push(id);
  }
  return ids;
}

function checkText(text: string, source: string): string {
  if (text.length > MAX_COMPLETION_CHARS) throw invalidInput(`${source} answered ${text.length} characters, more than ${MAX_COMPLETION_CHARS}`);
  return text;
}

function checkCount(value: unknown, field: string, source: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalidInput(`${source} reported ${field} ${describeValue(value)}: expected a finite number ≥ 0`);
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  return typeof value === 'object' ? 'an object' : typeof value;
}
