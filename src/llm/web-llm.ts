/**
 * `webLlmModel(engine)`: a WebLLM engine (`@mlc-ai/web-llm`, an optional peer: Engram never imports it) as
 * Engram's language model. The app creates and loads the engine (`CreateMLCEngine`, or a worker engine) and owns
 * it; this adapter only calls `engine.chat.completions.create` once per stage call:
 * - the prompt is one user message, after the `system` message when given;
 * - `maxTokens` becomes `max_tokens`; `temperature` (default 0, so the same query expands the same way) and `model`
 *   (for an engine that loaded several) are passed when set;
 * - `signal` calls `engine.interruptGenerate()` (when the engine has it) and the call rejects with the signal's
 *   reason; WebLLM generates one answer at a time, so the interrupt stops this one;
 * - token counts come from `response.usage` (`prompt_tokens`, `completion_tokens`).
 *
 * ```ts
 * import { CreateMLCEngine } from '@mlc-ai/web-llm';
 * const engine = await CreateMLCEngine('Qwen2.5-0.5B-Instruct-q4f16_1-MLC');
 * const memory = await createMemory({ llm: webLlmModel(engine) });
 * ```
 */
import { invalidInput } from '../errors.js';
import { raceAbort } from './abort.js';
import { checkCompletion } from './completion.js';
import type { LanguageModel, LlmCompletion } from './types.js';

/** The part of WebLLM's chat-completion request this adapter sends (OpenAI-style). */
export interface WebLlmRequest {
  messages: { role: 'system' | 'user'; content: string }[];
  max_tokens?: number;
  temperature?: number;
  model?: string;
  stream?: false;
}

/** The part of WebLLM's non-streaming answer this adapter reads. */
export interface WebLlmResponse {
  choices: { message: { content: string | null } }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** WebLLM's `MLCEngine` (or `WebWorkerMLCEngine`), typed by the members used here. */
export interface WebLlmEngine {
  chat: { completions: { create(request: WebLlmRequest): Promise<WebLlmResponse> } };
  interruptGenerate?(): void;
}

export interface WebLlmModelOptions {
  /** A system message before each prompt. Default none. */
  system?: string;
  /** Sampling temperature. Default 0 (the most likely answer). */
  temperature?: number;
  /** Which of the engine's loaded models answers. Default: the engine's own choice. */
  model?: string;
}

/**
 * A WebLLM engine the app created and loaded (see the file's comment); Engram never imports WebLLM.
 *
 * @example
 * ```ts
 * import { CreateMLCEngine } from '@mlc-ai/web-llm';
 *
 * const llm = webLlmModel(await CreateMLCEngine('Qwen2.5-0.5B-Instruct-q4f16_1-MLC'));
 * const memory = await createMemory({ llm });
 * await memory.search('when did we move staging?', { hyde: true });
 * ```
 */
export function webLlmModel(engine: WebLlmEngine, options: WebLlmModelOptions = {}): LanguageModel {
  if (typeof engine?.chat?.completions?.create !== 'function') {
    throw invalidInput('webLlmModel needs a WebLLM engine (an object with chat.completions.create)');
  }
  const { system, temperature = 0, model } = options;
  return {
    async complete(prompt, { maxTokens, signal } = {}) {
      signal?.throwIfAborted();
      const request: WebLlmRequest = {
        messages: [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: prompt }],
        temperature,
        stream: false,
      };
      if (maxTokens !== undefined) request.max_tokens = maxTokens;
      if (model !== undefined) request.model = model;
      const interrupt = () => engine.interruptGenerate?.();
      signal?.addEventListener('abort', interrupt, { once: true });
      try {
        // The engine's own promise may settle later than the abort, or never: the signal's reason answers first.
        return readResponse(await raceAbort(engine.chat.completions.create(request), signal));
      } finally {
        signal?.removeEventListener('abort', interrupt);
      }
    },
  };
}

function readResponse(response: WebLlmResponse): LlmCompletion {
  const text = response?.choices?.[0]?.message?.content;
  const usage = response?.usage;
  return checkCompletion(
    {
      text: text ?? undefined,
      ...(usage?.prompt_tokens !== undefined ? { promptTokens: usage.prompt_tokens } : {}),
      ...(usage?.completion_tokens !== undefined ? { completionTokens: usage.completion_tokens } : {}),
    },
    'the WebLLM engine',
  );
}

