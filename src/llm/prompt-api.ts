/**
 * `promptApiModel(options?)`: Chrome's built-in language model (the Prompt API, global `LanguageModel`, Gemini
 * Nano) as Engram's language model. Nothing is touched until the first `complete` (or `ready()`): then
 * `LanguageModel.availability()` is asked, and `LanguageModel.create()` makes one session, kept for later calls.
 * - Each call prompts a clone of that session (a fresh session where `clone` is missing) and destroys it after,
 *   so calls never see each other's prompts and the context never fills up.
 * - `signal` goes to `clone` and `prompt` (which reject with an AbortError) and ends the wait at once.
 * - `responseConstraint` (a JSON schema) goes to `prompt`, which then answers JSON of that shape.
 * - `maxTokens` has no counterpart: the Prompt API has no output-length limit. The stage's prompt asks for a short
 *   answer and its timeout bounds the call.
 * - Tokens: `promptTokens` from `measureContextUsage(prompt)` (`measureInputUsage` in older Chrome and
 *   extensions); `completionTokens` from how much the session's `contextUsage` (`inputUsage`) grew beyond the
 *   prompt. Left out when the browser has neither (the trace then estimates).
 * - `LanguageModel` exists only in pages (Window), not in workers: with `createMemory({ llm })` the adapter stays
 *   in the page and the worker calls it there. Where the browser has no Prompt API, or says `'unavailable'`,
 *   `complete` rejects with MODEL_NOT_FOUND and the stage is skipped.
 * - Chrome downloads the model on first `create()` (`'downloadable'`) and may ask for a user gesture to start it:
 *   call `ready()` from a click handler to download ahead of the first search (`onDownloadProgress` reports it).
 */
import { EngramError, ErrorCode } from '../errors.js';
import { raceAbort } from './abort.js';
import { checkCompletion } from './completion.js';
import type { LanguageModel } from './types.js';

export type PromptApiAvailability = 'unavailable' | 'downloadable' | 'downloading' | 'available';

/** A Prompt API session, typed by the members used here (newer and older Chrome names). */
export interface PromptApiSession {
  prompt(input: string, options?: { signal?: AbortSignal; responseConstraint?: object }): Promise<string>;
  clone?(options?: { signal?: AbortSignal }): Promise<PromptApiSession>;
  destroy?(): void;
  measureContextUsage?(input: string, options?: { signal?: AbortSignal }): Promise<number>;
  readonly contextUsage?: number;
  /** Older Chrome, and extensions. */
  measureInputUsage?(input: string, options?: { signal?: AbortSignal }): Promise<number>;
  readonly inputUsage?: number;
}

/** What `availability()` and `create()` take (the Prompt API's `LanguageModelCreateCoreOptions`, text only). */
interface PromptApiCoreOptions {
  expectedInputs?: { type: 'text'; languages?: string[] }[];
  expectedOutputs?: { type: 'text'; languages?: string[] }[];
}

export interface PromptApiCreateOptions extends PromptApiCoreOptions {
  initialPrompts?: { role: 'system' | 'user' | 'assistant'; content: string }[];
  monitor?(monitor: EventTarget): void;
  signal?: AbortSignal;
}

/** The `LanguageModel` global, typed by the members used here. */
export interface PromptApi {
  availability(options?: PromptApiCoreOptions): Promise<PromptApiAvailability>;
  create(options?: PromptApiCreateOptions): Promise<PromptApiSession>;
}

export interface PromptApiModelOptions {
  /** A system prompt for every call. Default none. */
  system?: string;
  /** Languages of the prompts and answers (BCP 47), for `expectedInputs` / `expectedOutputs`. Default `['en']`. */
  languages?: string[];
  /** Download progress of the model, 0 to 1 (Chrome's `downloadprogress` events). Default none. */
  onDownloadProgress?(loaded: number): void;
  /** The Prompt API to use. Default `globalThis.LanguageModel`, looked up at the first call. */
  api?: PromptApi;
}

export interface PromptApiModel extends LanguageModel {
  /** What the browser says about the model now; `'unavailable'` also where there is no Prompt API. */
  availability(): Promise<PromptApiAvailability>;
  /** Creates the session (downloading the model if needed); rejects with MODEL_NOT_FOUND where it cannot be had. */
  ready(): Promise<void>;
  /** Destroys the session; a later call creates a new one. */
  destroy(): void;
}

/**
 * Chrome's built-in model (see the file's comment); touches nothing until the first call or `ready()`.
 *
 * @example
 * ```ts
 * const llm = promptApiModel({ system: 'Answer briefly.' });
 * button.onclick = () => llm.ready(); // Chrome may want a user gesture to download the model
 * const memory = await createMemory({ llm });
 * await memory.search('gift ideas for grandma', { understand: 'llm', synthesis: 'llm' });
 * ```
 */
export function promptApiModel(options: PromptApiModelOptions = {}): PromptApiModel {
  const { system, languages = ['en'], onDownloadProgress } = options;
  const core: PromptApiCoreOptions = {
    expectedInputs: [{ type: 'text', languages }],
    expectedOutputs: [{ type: 'text', languages }],
  };
  const createOptions: PromptApiCreateOptions = {
    ...core,
    ...(system ? { initialPrompts: [{ role: 'system', content: system }] } : {}),
    ...(onDownloadProgress
      ? {
          monitor: (monitor: EventTarget) =>
            monitor.addEventListener('downloadprogress', (event) => onDownloadProgress((event as Event & { loaded: number }).loaded)),
        }
      : {}),
  };
  let session: Promise<PromptApiSession> | null = null;

  const api = (): PromptApi | undefined => options.api ?? (globalThis as { LanguageModel?: PromptApi }).LanguageModel;

  const openSession = (): Promise<PromptApiSession> => {
    if (session) return session;
    const opening = (async () => {
      const prompter = api();
      if (!prompter) throw unavailable('this browser has no Prompt API (LanguageModel; it exists only in pages, not in workers)');
      const availability = await prompter.availability(core);
      if (availability === 'unavailable') throw unavailable(`the browser says its language model is unavailable for ${languages.join(', ')}`);
      return prompter.create(createOptions);
    })();
    session = opening;
    // A failed open is not kept: the model may be there by the next call (downloaded, enabled).
    opening.catch(() => forget(opening));
    return opening;
  };
  const forget = (stale: Promise<PromptApiSession>) => {
    if (session === stale) session = null;
  };

  return {
    async availability() {
      const prompter = api();
      return prompter ? prompter.availability(core) : 'unavailable';
    },
    async ready() {
      await openSession();
    },
    destroy() {
      const current = session;
      session = null;
      void current?.then((open) => open.destroy?.()).catch(() => undefined);
    },
    async complete(prompt, { signal, responseConstraint } = {}) {
      const opening = openSession();
      const base = await raceAbort(opening, signal);
      // Each call on its own copy, so calls do not share a conversation.
      const fresh = await (base.clone ? base.clone(signal ? { signal } : {}) : api()!.create({ ...createOptions, ...(signal ? { signal } : {}) })).catch(
        (error: unknown) => {
          // A session the browser ended (model updated, memory pressure) is made anew by the next call.
          if (!signal?.aborted) forget(opening);
          throw error;
        },
      );
      try {
        const promptTokens = await measure(fresh, prompt, signal);
        const before = usageOf(fresh);
        // Structured output where the caller asks for it (memory formation's JSON answers).
        const text = await fresh.prompt(prompt, { ...(signal ? { signal } : {}), ...(responseConstraint ? { responseConstraint } : {}) });
        const after = usageOf(fresh);
        const grown = after !== undefined && before !== undefined && promptTokens !== undefined ? after - before - promptTokens : undefined;
        return checkCompletion(
          {
            text,
            ...(promptTokens !== undefined ? { promptTokens } : {}),
            ...(grown !== undefined && grown >= 0 ? { completionTokens: grown } : {}),
          },
          "Chrome's Prompt API",
        );
      } finally {
        fresh.destroy?.();
      }
    },
  };
}

/** The prompt's size in tokens, where the browser can say; a failed measurement only costs the count. */
async function measure(session: PromptApiSession, prompt: string, signal: AbortSignal | undefined): Promise<number | undefined> {
  const measurer = session.measureContextUsage ?? session.measureInputUsage;
  if (!measurer) return undefined;
  try {
    const tokens = await measurer.call(session, prompt, signal ? { signal } : {});
    return typeof tokens === 'number' && Number.isFinite(tokens) && tokens >= 0 ? tokens : undefined;
  } catch {
    signal?.throwIfAborted();
    return undefined;
  }
}

function usageOf(session: PromptApiSession): number | undefined {
  const used = session.contextUsage ?? session.inputUsage;
  return typeof used === 'number' && Number.isFinite(used) ? used : undefined;
}

function unavailable(reason: string): EngramError {
  return new EngramError(ErrorCode.MODEL_NOT_FOUND, `Chrome's Prompt API cannot answer: ${reason}`);
}
