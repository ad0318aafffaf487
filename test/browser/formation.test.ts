/**
 * Memory formation through createMemory in real Chromium: the worker's engine calls the page's language model, a
 * scripted one that reads Engram's real prompts (the numbered turns, the facts with their candidates, the memories
 * to summarise) and answers JSON computed from them. No real model runs here: extraction quality is not tested.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchPersistent, tempProfileDir } from './harness.js';
import { openLab } from './pages/memory-lab.js';

const profile = tempProfileDir();
let context: BrowserContext;
let page: Page;
// The built-in model when it is there; lexical-only otherwise (set ENGRAM_TEST_EMBEDDER=none to force).
const EMBEDDER = process.env.ENGRAM_TEST_EMBEDDER === 'none' ? null : {};

beforeAll(async () => {
  context = await launchPersistent(profile.dir);
  page = await openLab(context);
  // The scripted model, defined once in the page: facts are the user's turns restated ("I live" → "The user lives"),
  // a fact contradicts a candidate about another city it lives in, repeats a candidate it equals, else adds.
  await page.evaluate(() => {
    const w = window as unknown as { scriptedModel: () => { calls: { prompt: string; options: unknown }[]; complete(prompt: string, options: unknown): Promise<string> } };
    w.scriptedModel = () => {
      const { EXTRACT_PROMPT, DECIDE_PROMPT } = window.engram;
      const first = (text: string) => text.slice(0, text.indexOf('\n'));
      const calls: { prompt: string; options: unknown }[] = [];
      return {
        calls,
        async complete(prompt: string, options: unknown) {
          calls.push({ prompt, options });
          if (prompt.startsWith(first(EXTRACT_PROMPT))) {
            const facts = prompt.split('\n').flatMap((line) => {
              const m = /^\[(\d+)\] \([^)]*\) user: I (live|went|moved)(.*)$/.exec(line);
              return m ? [{ text: `The user ${m[2] === 'live' ? 'lives' : m[2]}${m[3]}`, turns: [Number(m[1])] }] : [];
            });
            return JSON.stringify({ facts });
          }
          if (prompt.startsWith(first(DECIDE_PROMPT))) {
            const facts: { index: number; text: string; candidates: { label: string; text: string }[] }[] = [];
            for (const line of prompt.split('\n')) {
              const fact = /^Fact (\d+): (.*)$/.exec(line);
              if (fact) facts.push({ index: Number(fact[1]), text: fact[2]!, candidates: [] });
              const c = /^ {2}(M\d+): (.*)$/.exec(line);
              if (c) facts.at(-1)!.candidates.push({ label: c[1]!, text: c[2]! });
            }
            const decisions = facts.map((f) => {
              const same = f.candidates.find((c) => c.text === f.text);
              if (same) return { fact: f.index, action: 'same', memory: same.label, reason: 'already known' };
              const other = f.candidates.find((c) => /lives in/.test(c.text) && /lives in/.test(f.text));
              if (other) return { fact: f.index, action: 'contradict', memory: other.label, reason: 'another city' };
              return { fact: f.index, action: 'add', memory: null, reason: 'new' };
            });
            return JSON.stringify({ decisions });
          }
          const memories = prompt.split('\n').flatMap((line) => /^\d+\. \([^)]*\) (.*)$/.exec(line)?.slice(1) ?? []);
          return JSON.stringify({ summary: `Summary: ${memories.join(' / ')}` });
        },
      };
    };
  });
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

const T0 = Date.UTC(2026, 10, 20, 10);
const DAY = 86_400_000;

describe('remember through a Memory', () => {
  test('contradiction, repeat, provenance and relative dates, with the page model called from the worker', async () => {
    const outcome = await page.evaluate(
      async ({ embedder, T0, DAY }) => {
        const llm = (window as unknown as { scriptedModel: () => { calls: { prompt: string; options: unknown }[]; complete(p: string, o: unknown): Promise<string> } }).scriptedModel();
        const memory = await window.engram.createMemory({ name: 'formation-remember', storage: 'memory', embedder, llm: llm as never });
        const first = await memory.remember([
          { role: 'user', content: 'I live in Lisbon', at: T0 },
          { role: 'assistant', content: 'Lovely city.', at: T0 + 1000 },
          { role: 'user', content: 'I went to the dentist yesterday and to the cinema last weekend', at: T0 + 2000 },
        ]);
        const second = await memory.remember([{ role: 'user', content: 'I live in Porto now', at: T0 + 10 * DAY }]);
        const repeat = await memory.remember('I live in Porto now', { at: T0 + 11 * DAY, storeTurns: false });
        const lisbon = first.added.find((a) => a.text.includes('Lisbon'))!.id;
        const porto = second.added[0]!.id;
        const plain = await memory.search('where does the user live', { touch: false });
        const deep = await memory.search('where does the user live', { touch: false, deepRecall: true });
        const why = await memory.why(lisbon);
        const dentist = first.added.find((a) => a.text.includes('dentist'))!;
        const dentistRecord = await memory.get(dentist.id);
        const portoRecord = await memory.get(porto);
        const count = await memory.count();
        await memory.close();
        return {
          first, second, repeat, lisbon, porto, count, dentist, dentistAt: dentistRecord!.createdAt, portoAccess: portoRecord!.accessCount,
          plain: plain.hits.map((h) => h.id), deep: deep.hits.map((h) => h.id),
          why: why.memories.map((m) => [m.text, m.kind]),
          constraint: (llm.calls[0]!.options as { responseConstraint?: { required?: string[] } }).responseConstraint?.required,
        };
      },
      { embedder: EMBEDDER, T0, DAY },
    );
    expect(outcome.first.fallback).toBeUndefined();
    expect(outcome.first.turns).toHaveLength(3);
    expect(outcome.first.added.map((a) => a.text)).toEqual(['The user lives in Lisbon', 'The user went to the dentist yesterday and to the cinema last weekend (yesterday = 2026-11-19; last weekend = 2026-11-15)']);
    expect(outcome.dentistAt).toBe(T0 + 2000);
    expect(outcome.second.superseded).toEqual([{ id: outcome.lisbon, by: outcome.porto, reason: 'another city' }]);
    expect(outcome.plain).toContain(outcome.porto);
    expect(outcome.plain).not.toContain(outcome.lisbon);
    expect(outcome.deep).toContain(outcome.lisbon);
    expect(outcome.why).toEqual([['I live in Lisbon', 'turn']]);
    expect(outcome.repeat.added).toEqual([]);
    expect(outcome.repeat.unchanged.map((u) => u.id)).toEqual([outcome.porto]);
    expect(outcome.portoAccess).toBe(1);
    expect(outcome.count).toBe(3 + 2 + 1 + 1); // three turns and two facts, one turn and one fact, nothing for the repeat
    // The JSON schema crossed to the page with the prompt.
    expect(outcome.constraint).toEqual(['facts']);
    expect(outcome.second.tokens.calls).toBe(2);
  });

  test('no model, a throwing, a silent and a garbled model: the turns are stored and the code says why', async () => {
    const outcome = await page.evaluate(async (embedder) => {
      const models: Record<string, unknown> = {
        none: null,
        throws: { complete: async () => Promise.reject(new Error('model crashed')) },
        silent: { complete: () => new Promise(() => {}) },
        garbled: { complete: async () => '{"facts": [' },
      };
      const out: Record<string, { code: string | undefined; added: string[]; turns: number; count: number }> = {};
      for (const [name, llm] of Object.entries(models)) {
        const memory = await window.engram.createMemory({ name: `formation-${name}`, storage: 'memory', embedder, llm: llm as never });
        const result = await memory.remember(
          [
            { role: 'user', content: 'I live in Lisbon' },
            { role: 'assistant', content: 'Noted.' },
          ],
          { timeoutMs: 300, storeTurns: false },
        );
        out[name] = { code: result.fallback?.code, added: result.added.map((a) => a.text), turns: result.turns.length, count: await memory.count() };
        await memory.close();
      }
      return out;
    }, EMBEDDER);
    expect(outcome).toEqual({
      none: { code: 'NO_MODEL', added: ['I live in Lisbon', 'Noted.'], turns: 2, count: 2 },
      throws: { code: 'MODEL_FAILED', added: ['I live in Lisbon', 'Noted.'], turns: 2, count: 2 },
      silent: { code: 'MODEL_TIMEOUT', added: ['I live in Lisbon', 'Noted.'], turns: 2, count: 2 },
      garbled: { code: 'MODEL_UNREADABLE', added: ['I live in Lisbon', 'Noted.'], turns: 2, count: 2 },
    });
  });

  test('bad input is refused with INVALID_INPUT at the worker', async () => {
    const codes = await page.evaluate(async () => {
      const memory = await window.engram.createMemory({ name: 'formation-bad', storage: 'memory', embedder: null });
      const out: string[] = [];
      for (const call of [() => memory.remember(42 as never), () => memory.remember([{ role: 'user' }] as never), () => memory.consolidate({ minCluster: 0 })]) {
        out.push(await call().then(() => 'accepted', (error: { code: string }) => error.code));
      }
      await memory.close();
      return out;
    });
    expect(codes).toEqual(['INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT']);
  });
});

describe('consolidate through a Memory', () => {
  test('without and with the page model, every original stays reachable', async () => {
    const outcome = await page.evaluate(
      async ({ embedder, T0 }) => {
        const records = [
          { id: 'tea-old', text: 'The user drinks green tea every morning', createdAt: T0 },
          { id: 'tea-new', text: 'The user drinks green tea every morning', createdAt: T0 + 1000 },
          { id: 'g1', text: "Grandma's garden has tulips in spring", createdAt: T0 },
          { id: 'g2', text: "Grandma's garden has roses in summer", createdAt: T0 + 1 },
          { id: 'g3', text: "Grandma's garden has orchids in the greenhouse", createdAt: T0 + 2 },
          { id: 'car', text: 'The car insurance renews in March', createdAt: T0 },
        ];
        const plainMemory = await window.engram.createMemory({ name: 'formation-fold', storage: 'memory', embedder });
        await plainMemory.import(records);
        // Folding needs vectors: wait until the built-in model has embedded every memory.
        await plainMemory.ready;
        const fold = await plainMemory.consolidate();
        const oldTea = await plainMemory.get('tea-old');
        await plainMemory.close();

        const llm = (window as unknown as { scriptedModel: () => { complete(p: string, o: unknown): Promise<string> } }).scriptedModel();
        const memory = await window.engram.createMemory({ name: 'formation-summary', storage: 'memory', embedder, llm: llm as never });
        await memory.import(records);
        await memory.ready;
        const summarised = await memory.consolidate({ summarize: true, clusterSimilarity: 0.3 });
        const reachable = await Promise.all(records.map(async (r) => (await memory.get(r.id)) !== null));
        const summary = summarised.summaries[0];
        const why = summary ? await memory.why(summary.id) : null;
        const deep = await memory.search("grandma's garden flowers", { touch: false, deepRecall: true, k: 10, diversity: false });
        const count = await memory.count();
        await memory.close();
        return { fold, oldTea: oldTea!.supersededBy, summarised, reachable, why: why?.edges.map((e) => e.to).sort(), deep: deep.hits.map((h) => h.id), count };
      },
      { embedder: EMBEDDER, T0 },
    );
    expect(outcome.fold.folded).toEqual([{ id: 'tea-old', into: 'tea-new' }]);
    expect(outcome.fold.fallback?.code).toBe('NO_MODEL');
    expect(outcome.oldTea).toBe('tea-new');
    expect(outcome.summarised.fallback).toBeUndefined();
    expect(outcome.summarised.summaries).toHaveLength(1);
    const from = outcome.summarised.summaries[0]!.from;
    expect([...from].sort()).toEqual(['g1', 'g2', 'g3']);
    expect(outcome.why).toEqual(['g1', 'g2', 'g3']);
    expect(outcome.reachable.every(Boolean)).toBe(true);
    expect(outcome.deep).toEqual(expect.arrayContaining(['g1', 'g2', 'g3']));
    expect(outcome.count).toBe(7);
  });

  test('the idle schedule (MemoryOptions.consolidation) folds by itself once writes pause', async () => {
    const supersededBy = await page.evaluate(
      async ({ embedder, T0 }) => {
        const memory = await window.engram.createMemory({ name: 'formation-idle', storage: 'memory', embedder, consolidation: { idleMs: 100, options: { summarize: false } } });
        await memory.ready; // the vectors first: a fold needs them
        await memory.import([
          { id: 'a', text: 'The user drinks green tea every morning', createdAt: T0 },
          { id: 'b', text: 'The user drinks green tea every morning', createdAt: T0 + 1000 },
          // Others, so that calibration has a baseline (two identical memories alone make every cosine the mean).
          { id: 'c', text: 'The car insurance renews in March', createdAt: T0 },
          { id: 'd', text: "Grandma's garden has tulips in spring", createdAt: T0 },
        ]);
        await memory.ready;
        const deadline = Date.now() + 10_000;
        let mark: string | undefined;
        while (mark === undefined && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          mark = (await memory.get('a'))?.supersededBy;
        }
        await memory.close();
        return mark;
      },
      { embedder: EMBEDDER, T0 },
    );
    expect(supersededBy).toBe('b');
  });
});
