/**
 * createMemory({ llm, reranker }) in real Chromium: the language model and the re-ranker live in the page and the
 * worker's search stages call them through Comlink. The page's model is a scripted function recording its prompts
 * and answering fixed text with fixed token counts: no real model can run here (Chromium's own Prompt API is
 * present but says 'unavailable', which the last test checks for real).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchPersistent, tempProfileDir } from './harness.js';
import { openLab } from './pages/memory-lab.js';

const profile = tempProfileDir();
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  context = await launchPersistent(profile.dir);
  page = await openLab(context);
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

const NOTES = [
  { id: 'timer', text: 'The watering timer on the back porch is set to six in the morning' },
  { id: 'lawn', text: 'Lawn care: mow every Saturday and rake the leaves in October' },
  { id: 'bike', text: 'Bike tyres were pumped to 4 bar before the trip' },
];

describe('a page language model called from the worker', () => {
  test('synthesis: the page is prompted, its queries are searched and its token counts are in the trace', async () => {
    const outcome = await page.evaluate(async (notes) => {
      const prompts: string[] = [];
      const llm = {
        async complete(prompt: string) {
          prompts.push(prompt);
          return { text: 'watering timer\nporch sprinkler schedule', promptTokens: 120, completionTokens: 9 };
        },
      };
      const memory = await window.engram.createMemory({ name: 'llm-synthesis', storage: 'memory', embedder: null, llm });
      await memory.add(notes);
      const result = await memory.search('lawn care routine', { synthesis: 'llm', k: 3 });
      await memory.close();
      return { prompts, hits: result.hits.map((hit) => ({ id: hit.id, lists: hit.explain.lists })), trace: result.trace };
    }, NOTES);

    expect(outcome.prompts).toHaveLength(1);
    expect(outcome.prompts[0]).toContain('lawn care routine');
    const synthesize = outcome.trace.stages.find((stage) => stage.name === 'synthesize');
    expect(synthesize).toMatchObject({ promptTokens: 120, completionTokens: 9 });
    expect(outcome.trace.totalTokens).toBe(129);
    expect(outcome.trace.queries).toEqual([
      expect.objectContaining({ text: 'lawn care routine', source: 'original' }),
      expect.objectContaining({ text: 'watering timer', source: 'llm', weight: 1 }),
      expect.objectContaining({ text: 'porch sprinkler schedule', source: 'llm', weight: 1 }),
    ]);
    // The original query does not find the timer note; the page's queries do (both name it: "timer", "porch").
    const timer = outcome.hits.find((hit) => hit.id === 'timer');
    expect(timer?.lists?.ranks).toEqual([null, 1, 1]);
  });

  test('a page model that throws, answers the wrong shape or never answers does not fail the search', async () => {
    const outcome = await page.evaluate(async (notes) => {
      const behaviours: Record<string, () => Promise<unknown>> = {
        throws: async () => {
          throw new Error('the model exploded');
        },
        'wrong shape': async () => ({ text: 'watering timer', promptTokens: -5 }),
        silent: () => new Promise(() => {}),
      };
      const results: Record<string, { hits: string[]; note: string | undefined; queries: number; tokens: number }> = {};
      for (const [name, behaviour] of Object.entries(behaviours)) {
        const memory = await window.engram.createMemory({ name: `llm-fail-${name.replace(' ', '-')}`, storage: 'memory', embedder: null, llm: { complete: behaviour } as never });
        await memory.add(notes);
        const result = await memory.search('lawn care routine', { synthesis: 'llm', llmTimeoutMs: 500, k: 3 });
        await memory.close();
        results[name] = {
          hits: result.hits.map((hit) => hit.id),
          note: result.trace.stages.find((stage) => stage.name === 'synthesize')?.note,
          queries: result.trace.queries.length,
          tokens: result.trace.completionTokens,
        };
      }
      return results;
    }, NOTES);

    for (const result of Object.values(outcome)) {
      expect(result.hits[0]).toBe('lawn'); // the original query still answers
      expect(result.queries).toBe(1);
      expect(result.tokens).toBe(0);
    }
    expect(outcome.throws?.note).toContain('the model exploded');
    // The worker's shape check refused it (INVALID_INPUT), before the stage could read it.
    expect(outcome['wrong shape']?.note).toContain("the page's language model reported promptTokens -5");
    // The signal cannot reach the page: the stage's own timeout ended the wait.
    expect(outcome.silent?.note).toContain('within 500 ms');
  });

  test("rerank { by: 'hook' } runs the page's reranker on the candidates and follows its order", async () => {
    const outcome = await page.evaluate(async (notes) => {
      const calls: { query: string; candidates: { id: string; text: string; score: number }[] }[] = [];
      const reranker = (query: string, candidates: { id: string; text: string; score: number }[]) => {
        calls.push({ query, candidates });
        return candidates.map((candidate) => candidate.id).reverse();
      };
      const memory = await window.engram.createMemory({ name: 'llm-rerank', storage: 'memory', embedder: null, reranker });
      await memory.add(notes.map((note) => ({ ...note, text: `${note.text} (garden notes)` })));
      const plain = await memory.search('garden notes', { k: 3 });
      const reranked = await memory.search('garden notes', { k: 3, rerank: { by: 'hook', inputLimit: 40 } });
      await memory.close();
      return {
        calls,
        plain: plain.hits.map((hit) => hit.id),
        reranked: reranked.hits.map((hit) => ({ id: hit.id, rerank: hit.explain.rerank })),
        note: reranked.trace.stages.find((stage) => stage.name === 'rerank')?.note,
      };
    }, NOTES);

    expect(outcome.calls).toHaveLength(1);
    expect(outcome.calls[0]?.query).toBe('garden notes');
    expect(outcome.calls[0]?.candidates.map((c) => c.id)).toEqual(outcome.plain);
    expect(outcome.reranked.map((hit) => hit.id)).toEqual([...outcome.plain].reverse());
    expect(outcome.reranked[0]?.rerank).toMatchObject({ by: 'hook', to: 1 });
  });

  test("the tab that opens the database lends its model to a tab that joins it", async () => {
    const second = await openLab(context);
    try {
      await page.evaluate(async (notes) => {
        const prompts: string[] = [];
        (window as unknown as { leaderPrompts: string[] }).leaderPrompts = prompts;
        const llm = { complete: async (prompt: string) => (prompts.push(prompt), { text: 'watering timer', promptTokens: 50, completionTokens: 3 }) };
        window.memories.leader = await window.engram.createMemory({ name: 'llm-shared', embedder: null, llm });
        await window.memories.leader.add(notes);
      }, NOTES);
      const joined = await second.evaluate(async () => {
        // This tab's own model is unused while the first tab holds the database.
        const own: string[] = [];
        const memory = await window.engram.createMemory({ name: 'llm-shared', embedder: null, llm: { complete: async (prompt: string) => (own.push(prompt), 'bike') } });
        const result = await memory.search('lawn care routine', { synthesis: 'llm', k: 3 });
        await memory.close();
        return { own, hits: result.hits.map((hit) => hit.id), totalTokens: result.trace.totalTokens };
      });
      const leaderPrompts = await page.evaluate(() => (window as unknown as { leaderPrompts: string[] }).leaderPrompts);
      expect(leaderPrompts).toHaveLength(1);
      expect(leaderPrompts[0]).toContain('lawn care routine');
      expect(joined.own).toEqual([]);
      expect(joined.totalTokens).toBe(53);
      expect(joined.hits).toContain('timer');
    } finally {
      await page.evaluate(() => window.memories.leader?.close());
      await second.close();
    }
  });
});

describe("Chromium's own Prompt API", () => {
  test("promptApiModel in this Chromium: LanguageModel is there but 'unavailable', and the search answers without it", async () => {
    // A string, so vitest does not rewrite the page's dynamic import as its own.
    await page.evaluate("import('/src/llm/index.ts').then((adapters) => { window.engramLlm = adapters; })");
    const outcome = await page.evaluate(async (notes) => {
      const { promptApiModel } = (window as unknown as { engramLlm: typeof import('../../src/llm/index.js') }).engramLlm;
      const llm = promptApiModel();
      const memory = await window.engram.createMemory({ name: 'llm-prompt-api', storage: 'memory', embedder: null, llm });
      await memory.add(notes);
      const result = await memory.search('lawn care routine', { synthesis: 'llm', k: 3 });
      await memory.close();
      return {
        hasGlobal: typeof (globalThis as { LanguageModel?: unknown }).LanguageModel === 'function',
        availability: await llm.availability(),
        hits: result.hits.map((hit) => hit.id),
        note: result.trace.stages.find((stage) => stage.name === 'synthesize')?.note,
      };
    }, NOTES);

    expect(outcome.hasGlobal).toBe(true);
    expect(outcome.availability).toBe('unavailable');
    expect(outcome.hits[0]).toBe('lawn');
    expect(outcome.note).toContain('language model is unavailable');
  });
});
