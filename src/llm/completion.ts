/**
 * Shape checks for what a language model or a re-ranker hands back, where Engram cannot trust it: the answer of an
 * app's function (functionModel) and whatever comes back from the page to the worker (src/client/page-hooks.ts).
 * Anything but the documented shapes is refused with INVALID_INPUT, so a search stage skips it and says why.
 */
import { invalidInput } from '../errors.js';
import type { LlmCompletion } from './types.js';

/** Longest answer text accepted (characters): far past what any stage asks for (`maxTokens`), short of a hang. */
export const MAX_COMPLETION_CHARS = 1_000_000;

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
