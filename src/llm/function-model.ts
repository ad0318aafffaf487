/**
 * `functionModel(fn)`: any async function as Engram's language model, for example a `fetch` to the app's own
 * server. `fn(prompt, { maxTokens, signal })` gets both options as the stage passed them (hand `signal` to `fetch`
 * so an abandoned stage stops the request; send `maxTokens` as the server's output limit) and resolves with the
 * text, or `{ text, promptTokens?, completionTokens? }` when the server reports its token usage (the trace uses
 * them; otherwise it estimates). Anything else is refused with INVALID_INPUT, and the stage skips it. Errors `fn`
 * throws reach the stage as they are.
 *
 * ```ts
 * const llm = functionModel(async (prompt, { maxTokens, signal }) => {
 *   const response = await fetch('/api/complete', { method: 'POST', body: JSON.stringify({ prompt, maxTokens }), signal });
 *   const { text, usage } = await response.json();
 *   return { text, promptTokens: usage.prompt, completionTokens: usage.completion };
 * });
 * ```
 */
import { invalidInput } from '../errors.js';
import { checkCompletion } from './completion.js';
import type { LanguageModel, LlmCallOptions, LlmCompletion } from './types.js';

export type CompletionFunction = (prompt: string, options: LlmCallOptions) => Promise<LlmCompletion> | LlmCompletion;

/**
 * Any function as the language model (see the file's comment for what it receives and may return).
 *
 * @example
 * ```ts
 * const llm = functionModel(async (prompt, { signal }) => (await fetch('/api/complete', { method: 'POST', body: prompt, signal })).text());
 * const engine = await createEngine({ llm });
 * await engine.search('what did I plan for May?', { synthesis: 'llm' });
 * ```
 */
export function functionModel(fn: CompletionFunction): LanguageModel {
  if (typeof fn !== 'function') throw invalidInput(`functionModel needs a function, got ${fn === null ? 'null' : typeof fn}`);
  return {
    async complete(prompt, options) {
      const forwarded: LlmCallOptions = {};
      if (options?.maxTokens !== undefined) forwarded.maxTokens = options.maxTokens;
      if (options?.signal !== undefined) forwarded.signal = options.signal;
      return checkCompletion(await fn(prompt, forwarded), 'the completion function');
    },
  };
}
