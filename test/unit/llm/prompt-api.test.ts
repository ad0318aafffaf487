/**
 * promptApiModel against a scripted `LanguageModel` implementing the shape Chrome documents (the Prompt API's IDL:
 * static `availability()` / `create()`, and a session with `prompt(input, { signal })`, `clone`, `destroy`,
 * `measureContextUsage` and `contextUsage`). No real model can run here: Chromium in this environment has the
 * `LanguageModel` global but answers 'unavailable' (test/browser/llm.test.ts checks that path for real). Tokens are
 * counted as words by the script.
 */
import { describe, expect, it } from 'vitest';
import { EngramError } from '../../../src/errors.js';
import { promptApiModel, type PromptApi, type PromptApiAvailability, type PromptApiCreateOptions, type PromptApiSession } from '../../../src/llm/prompt-api.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

interface Script {
  availability?: PromptApiAvailability;
  /** The answer to a prompt; undefined holds the prompt until its signal aborts. */
  answer?: (prompt: string) => string | undefined;
  /** Old Chrome / extension names (`measureInputUsage`, `inputUsage`) instead of the current ones. */
  legacy?: boolean;
  /** No usage members at all. */
  noUsage?: boolean;
  noClone?: boolean;
}

function scriptedPromptApi(script: Script = {}) {
  const log = { availability: 0, creates: [] as PromptApiCreateOptions[], clones: 0, destroyed: 0, prompts: [] as string[], constraints: [] as (object | undefined)[] };
  const makeSession = (initialUsage: number): PromptApiSession => {
    let used = initialUsage;
    const measure = async (input: string) => words(input);
    const session: PromptApiSession & Record<string, unknown> = {
      async prompt(input, options) {
        log.prompts.push(input);
        log.constraints.push(options?.responseConstraint);
        const answer = (script.answer ?? (() => 'one two three'))(input);
        if (answer === undefined) {
          return new Promise<string>((_resolve, reject) => {
            const signal = options?.signal;
            signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')), { once: true });
          });
        }
        used += words(input) + words(answer);
        return answer;
      },
      destroy: () => void log.destroyed++,
    };
    if (!script.noClone) {
      session.clone = async (options?: { signal?: AbortSignal }) => {
        options?.signal?.throwIfAborted();
        log.clones++;
        return makeSession(used);
      };
    }
    if (!script.noUsage) {
      if (script.legacy) {
        session.measureInputUsage = measure;
        Object.defineProperty(session, 'inputUsage', { get: () => used });
      } else {
        session.measureContextUsage = measure;
        Object.defineProperty(session, 'contextUsage', { get: () => used });
      }
    }
    return session;
  };
  const api: PromptApi = {
    async availability() {
      log.availability++;
      return script.availability ?? 'available';
    },
    async create(options = {}) {
      log.creates.push(options);
      const system = options.initialPrompts?.map((p) => p.content).join(' ') ?? '';
      return makeSession(words(system));
    },
  };
  return { api, log };
}

describe('promptApiModel', () => {
  it('touches nothing until the first call, then keeps one session and prompts a clone per call', async () => {
    const { api, log } = scriptedPromptApi();
    const model = promptApiModel({ api, system: 'You expand search queries.' });
    expect(log).toMatchObject({ availability: 0, creates: [] });
    await model.complete('first query', {});
    await model.complete('second query here', {});
    expect(log.availability).toBe(1);
    expect(log.creates).toHaveLength(1);
    expect(log.creates[0]).toMatchObject({
      initialPrompts: [{ role: 'system', content: 'You expand search queries.' }],
      expectedInputs: [{ type: 'text', languages: ['en'] }],
      expectedOutputs: [{ type: 'text', languages: ['en'] }],
    });
    expect(log.clones).toBe(2);
    expect(log.destroyed).toBe(2); // each clone, not the kept session
    expect(log.prompts).toEqual(['first query', 'second query here']);
  });

  it('passes a responseConstraint (JSON schema) to prompt, for structured output, and none when not asked', async () => {
    const { api, log } = scriptedPromptApi({ answer: () => '{"summary":null}' });
    const model = promptApiModel({ api });
    const schema = { type: 'object', properties: { summary: { type: ['string', 'null'] } }, required: ['summary'] };
    await model.complete('summarise', { responseConstraint: schema });
    await model.complete('plain', {});
    expect(log.constraints).toEqual([schema, undefined]);
  });

  it('reports prompt tokens from measureContextUsage and completion tokens from the growth of contextUsage', async () => {
    const { api } = scriptedPromptApi({ answer: () => 'garden hose sprinkler timer' });
    const answer = await promptApiModel({ api, system: 'Be brief please.' }).complete('what waters the lawn', { maxTokens: 50 });
    expect(answer).toEqual({ text: 'garden hose sprinkler timer', promptTokens: 4, completionTokens: 4 });
  });

  it('reads the older names (measureInputUsage, inputUsage) too, and leaves counts out where there are none', async () => {
    const legacy = scriptedPromptApi({ legacy: true, answer: () => 'a b' });
    expect(await promptApiModel({ api: legacy.api }).complete('x y z', {})).toEqual({ text: 'a b', promptTokens: 3, completionTokens: 2 });
    const bare = scriptedPromptApi({ noUsage: true, answer: () => 'a b' });
    expect(await promptApiModel({ api: bare.api }).complete('x y z', {})).toEqual({ text: 'a b' });
  });

  it('without clone, each call gets a session of its own', async () => {
    const { api, log } = scriptedPromptApi({ noClone: true });
    const model = promptApiModel({ api });
    await model.complete('a', {});
    await model.complete('b', {});
    expect(log.creates).toHaveLength(3); // the kept one, then one per call
    expect(log.destroyed).toBe(2);
  });

  it("'unavailable' and a missing API reject with MODEL_NOT_FOUND; a later call asks again", async () => {
    const script: Script = { availability: 'unavailable' };
    const { api, log } = scriptedPromptApi(script);
    const model = promptApiModel({ api });
    const error = await model.complete('q', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngramError);
    expect(error).toMatchObject({ code: 'MODEL_NOT_FOUND' });
    expect(await model.availability()).toBe('unavailable');
    script.availability = 'available';
    expect(await model.complete('q', {})).toMatchObject({ text: 'one two three' });
    expect(log.creates).toHaveLength(1);

    const missing = promptApiModel(); // Node has no LanguageModel global
    expect(await missing.availability()).toBe('unavailable');
    await expect(missing.complete('q', {})).rejects.toMatchObject({ code: 'MODEL_NOT_FOUND' });
  });

  it('the signal aborts the prompt, and the clone is destroyed', async () => {
    const { api, log } = scriptedPromptApi({ answer: () => undefined });
    const controller = new AbortController();
    const pending = promptApiModel({ api }).complete('q', { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(log.destroyed).toBe(1);
  });

  it('ready() creates the session ahead of the first call and reports download progress', async () => {
    const { api, log } = scriptedPromptApi();
    const progress: number[] = [];
    const original = api.create.bind(api);
    api.create = async (options) => {
      const monitor = new EventTarget();
      options?.monitor?.(monitor);
      for (const loaded of [0, 0.5, 1]) monitor.dispatchEvent(Object.assign(new Event('downloadprogress'), { loaded }));
      return original(options);
    };
    const model = promptApiModel({ api, onDownloadProgress: (loaded) => progress.push(loaded) });
    await model.ready();
    expect(log.creates).toHaveLength(1);
    expect(progress).toEqual([0, 0.5, 1]);
    await model.complete('q', {});
    expect(log.creates).toHaveLength(1);
  });
});
