/**
 * webLlmModel against a scripted engine implementing the documented shape of WebLLM's MLCEngine
 * (`chat.completions.create` with OpenAI-style messages and `usage`, and `interruptGenerate`). No real model can run
 * here (no GPU, no weights), so the engine answers from a script and records what it was sent.
 */
import { describe, expect, it } from 'vitest';
import { EngramError } from '../../../src/errors.js';
import { webLlmModel, type WebLlmEngine, type WebLlmRequest, type WebLlmResponse } from '../../../src/llm/web-llm.js';

/** Answers each request with `reply(request)`, or holds it until interrupted when `hold` is set. */
function scriptedEngine(reply: (request: WebLlmRequest) => WebLlmResponse, hold = false) {
  const requests: WebLlmRequest[] = [];
  let interrupts = 0;
  let release: (() => void) | null = null;
  const engine: WebLlmEngine = {
    chat: {
      completions: {
        async create(request) {
          requests.push(structuredClone(request));
          if (hold) await new Promise<void>((resolve) => (release = resolve));
          return reply(request);
        },
      },
    },
    interruptGenerate() {
      interrupts++;
      release?.();
    },
  };
  return { engine, requests, interrupts: () => interrupts };
}

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

describe('webLlmModel', () => {
  it('sends one user message (after the system one), max_tokens and temperature; reads text and usage', async () => {
    const scripted = scriptedEngine((request) => ({
      choices: [{ message: { content: 'alpha beta' } }],
      usage: { prompt_tokens: words(request.messages.map((m) => m.content).join(' ')), completion_tokens: 2 },
    }));
    const model = webLlmModel(scripted.engine, { system: 'Be brief.', model: 'tiny-q4' });
    const answer = await model.complete('expand the query garden tools', { maxTokens: 64 });
    expect(answer).toEqual({ text: 'alpha beta', promptTokens: 7, completionTokens: 2 });
    expect(scripted.requests).toEqual([
      {
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'expand the query garden tools' },
        ],
        max_tokens: 64,
        temperature: 0,
        model: 'tiny-q4',
        stream: false,
      },
    ]);
  });

  it('leaves max_tokens out when the stage gives none, and counts out when the engine reports no usage', async () => {
    const scripted = scriptedEngine(() => ({ choices: [{ message: { content: 'ok' } }] }));
    const answer = await webLlmModel(scripted.engine).complete('q', {});
    expect(answer).toEqual({ text: 'ok' });
    expect(scripted.requests[0]).not.toHaveProperty('max_tokens');
    expect(scripted.requests[0]?.messages).toEqual([{ role: 'user', content: 'q' }]);
  });

  it('an aborted signal interrupts the generation and rejects with its reason', async () => {
    const scripted = scriptedEngine(() => ({ choices: [{ message: { content: 'late' } }] }), true);
    const controller = new AbortController();
    const pending = webLlmModel(scripted.engine).complete('q', { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('timeout'));
    await expect(pending).rejects.toThrow('timeout');
    expect(scripted.interrupts()).toBe(1);
  });

  it('an already-aborted signal never starts a generation', async () => {
    const scripted = scriptedEngine(() => ({ choices: [{ message: { content: 'x' } }] }));
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await expect(webLlmModel(scripted.engine).complete('q', { signal: controller.signal })).rejects.toThrow('gone');
    expect(scripted.requests).toHaveLength(0);
  });

  it('an answer without text, or with a bad usage count, is INVALID_INPUT', async () => {
    for (const response of [{ choices: [] }, { choices: [{ message: { content: null } }] }, { choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: -3 } }]) {
      const error = await webLlmModel(scriptedEngine(() => response as WebLlmResponse).engine)
        .complete('q', {})
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngramError);
      expect(error).toMatchObject({ code: 'INVALID_INPUT' });
    }
  });

  it('refuses something that is not an engine', () => {
    expect(() => webLlmModel({} as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
