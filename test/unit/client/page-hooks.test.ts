/**
 * The page's llm and reranker called from "the worker" through Comlink, on a Node MessageChannel standing in for
 * the worker boundary (the real worker is tested in Chromium, test/browser/llm.test.ts). The page-side model is a
 * scripted function recording its prompts: no real model can run here.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemory } from '../../../src/client/create-memory.js';
import { pageCompletion, pageReranker } from '../../../src/client/page-hooks.js';
import { languageModelFromPage, rerankerFromPage, type PageCompletion, type PageReranker } from '../../../src/contract/remote-hooks.js';
import { EngramError } from '../../../src/errors.js';
import type { LanguageModel, LlmCallOptions } from '../../../src/llm/types.js';
import { acrossBoundary, closeFakeWorkers, fakeWorker } from '../helpers/fake-worker.js';

afterEach(closeFakeWorkers);

function scriptedLlm(answer: (prompt: string) => unknown) {
  const calls: { prompt: string; options: LlmCallOptions }[] = [];
  const llm: LanguageModel = {
    async complete(prompt, options) {
      calls.push({ prompt, options });
      return answer(prompt) as never;
    },
  };
  return { llm, calls };
}

describe('the page language model called from the worker side', () => {
  it('answers text and counts; maxTokens crosses, the signal does not', async () => {
    const { llm, calls } = scriptedLlm(() => ({ text: 'expanded', promptTokens: 11, completionTokens: 3 }));
    const model = languageModelFromPage(acrossBoundary<PageCompletion>(pageCompletion(llm)));
    const controller = new AbortController();
    expect(await model.complete('expand: garden', { maxTokens: 40, signal: controller.signal })).toEqual({ text: 'expanded', promptTokens: 11, completionTokens: 3 });
    expect(calls).toEqual([{ prompt: 'expand: garden', options: { maxTokens: 40 } }]);
  });

  it('a responseConstraint (plain data) crosses to the page with the prompt', async () => {
    const { llm, calls } = scriptedLlm(() => '{"facts":[]}');
    const model = languageModelFromPage(acrossBoundary<PageCompletion>(pageCompletion(llm)));
    const schema = { type: 'object', required: ['facts'] };
    expect(await model.complete('extract', { maxTokens: 10, responseConstraint: schema })).toBe('{"facts":[]}');
    expect(calls).toEqual([{ prompt: 'extract', options: { maxTokens: 10, responseConstraint: schema } }]);
  });

  it.each([
    ['a number', 7],
    ['an object without text', { words: ['a'] }],
    ['a negative count', { text: 'x', completionTokens: -2 }],
    ['an infinite count', { text: 'x', promptTokens: Infinity }],
    ['an array', ['x']],
  ])('refuses %s from the page with INVALID_INPUT', async (_label, answer) => {
    const { llm } = scriptedLlm(() => answer);
    const model = languageModelFromPage(acrossBoundary<PageCompletion>(pageCompletion(llm)));
    const error = await model.complete('q', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngramError);
    expect(error).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it("the page's error reaches the worker side as an error with its message", async () => {
    const { llm } = scriptedLlm(() => {
      throw new Error('model busy');
    });
    const model = languageModelFromPage(acrossBoundary<PageCompletion>(pageCompletion(llm)));
    await expect(model.complete('q', {})).rejects.toThrow('model busy');
  });
});

describe('the page reranker called from the worker side', () => {
  it('gets the query and plain candidates, and its ids come back checked', async () => {
    const seen: unknown[] = [];
    const reranker = rerankerFromPage(
      acrossBoundary<PageReranker>(
        pageReranker((query, candidates) => {
          seen.push({ query, candidates });
          return candidates.map((c) => c.id).reverse();
        }),
      ),
    );
    const candidates = [
      { id: 'a', text: 'first', score: 0.9, extra: { big: 'not sent' } },
      { id: 'b', text: 'second', score: 0.5 },
    ];
    expect(await reranker('q', candidates)).toEqual(['b', 'a']);
    expect(seen).toEqual([{ query: 'q', candidates: [{ id: 'a', text: 'first', score: 0.9 }, { id: 'b', text: 'second', score: 0.5 }] }]);
  });

  it.each([
    ['an object', { ids: ['a'] }],
    ['ids that are numbers', [1, 2]],
    ['null', null],
  ])('refuses %s with INVALID_INPUT', async (_label, answer) => {
    const reranker = rerankerFromPage(acrossBoundary<PageReranker>(pageReranker(() => answer as never)));
    await expect(reranker('q', [{ id: 'a', text: 't', score: 1 }])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});

describe('createMemory({ llm, reranker })', () => {

  it('sends both to the worker at open as callables that reach the page', async () => {
    const { worker, opened } = fakeWorker();
    const { llm, calls } = scriptedLlm(() => 'ok');
    const memory = await createMemory({ worker, storage: 'memory', embedder: null, llm, reranker: () => ['z'] });
    expect(typeof opened.llm).toBe('function');
    expect(typeof opened.reranker).toBe('function');
    expect(await (opened.llm as PageCompletion)('hi', 5)).toBe('ok');
    expect(await (opened.reranker as PageReranker)('q', [])).toEqual(['z']);
    expect(calls).toEqual([{ prompt: 'hi', options: { maxTokens: 5 } }]);
    await memory.close();
  });

  it('sends neither when none is given', async () => {
    const { worker, opened } = fakeWorker();
    const memory = await createMemory({ worker, storage: 'memory', embedder: null });
    expect(opened).toEqual({ llm: undefined, reranker: undefined });
    await memory.close();
  });

  it('refuses an llm without complete, and a reranker that is not a function, with INVALID_INPUT', async () => {
    const { worker } = fakeWorker();
    await expect(createMemory({ worker, storage: 'memory', embedder: null, llm: { answer: () => 'x' } as never })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(createMemory({ worker, storage: 'memory', embedder: null, reranker: ['a'] as never })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
