import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.js';
import { assemble, estimateTokens, formatBlock, SEPARATOR, type AssembleItem } from '../../../src/search/assemble.js';
import { CONTEXT_MMR_LAMBDA, contextOrder, selectAcrossSessions } from '../../../src/search/diverse-sessions.js';
import { mmrSelect } from '../../../src/search/mmr.js';
import { understandByRules } from '../../../src/search/understand.js';
import { runs } from '../helpers/tier.js';

const options = { lambda: 0.78, duplicateThreshold: 0.94 };
// Similarity 0.5 inside a session, 0 across.
const sameSession = (sessions: (string | undefined)[]) => (a: number, b: number) => (sessions[a] !== undefined && sessions[a] === sessions[b] ? 0.5 : 0);

describe('selectAcrossSessions (assembly: diverse)', () => {
  it('takes the best memory of each session before a second one from any session; greedy MMR keeps the one session', () => {
    const scores = [1, 0.95, 0.9, 0.5, 0.3];
    const sessions = ['s1', 's1', 's1', 's2', 's3'];
    expect(selectAcrossSessions(scores, sessions, 3, options, () => 0).map((p) => p.index).sort()).toEqual([0, 3, 4]);
    expect(mmrSelect(scores, 3, options, () => 0).picked.map((p) => p.index)).toEqual([0, 1, 2]);
  });

  it('fills the rest by MMR over all, the first picks counting for novelty', () => {
    const sessions = ['s1', 's1', 's2', 's2'];
    const picks = selectAcrossSessions([1, 0.95, 0.9, 0.5], sessions, 3, options, sameSession(sessions));
    expect(picks.map((p) => p.index)).toEqual([0, 2, 1]);
  });

  it('without sessions is plain MMR', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }), fc.integer({ min: 1, max: 10 }), (scores, k) => {
        const sim = (a: number, b: number) => Math.abs(Math.sin(a * 7 + b * 7)) * 0.9;
        const plain = mmrSelect(scores, k, options, sim).picked.map((p) => p.index);
        expect(selectAcrossSessions(scores, scores.map(() => undefined), k, options, sim).map((p) => p.index)).toEqual(plain);
      }),
    );
  });

  it('returns at most k distinct candidates, every session represented while places last', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ score: fc.double({ min: 0.01, max: 1, noNaN: true }), session: fc.constantFrom('a', 'b', 'c', 'd', undefined) }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 12 }),
        (items, k) => {
          const sessions = items.map((i) => i.session);
          const picks = selectAcrossSessions(items.map((i) => i.score), sessions, k, options, () => 0).map((p) => p.index);
          expect(new Set(picks).size).toBe(picks.length);
          expect(picks.length).toBe(Math.min(k, items.length));
          const distinct = new Set(sessions.filter((s) => s !== undefined));
          expect(new Set(picks.map((i) => sessions[i]).filter((s) => s !== undefined)).size).toBe(Math.min(distinct.size, k));
        },
      ),
    );
  });

  it('mmrSelect with preselected indices never returns them and drops their near-duplicates', () => {
    const sim = (a: number, b: number) => (Math.min(a, b) === 0 && Math.max(a, b) === 1 ? 0.99 : 0);
    const { picked, duplicates } = mmrSelect([1, 0.9, 0.8], 3, options, sim, [0]);
    expect(picked.map((p) => p.index)).toEqual([2]);
    expect(duplicates).toEqual([1]);
  });
});

describe('the diverse context (contextOrder, then the greedy fill in that order)', () => {
  const DAY = Date.UTC(2024, 4, 1);
  // Every block costs the same: "[2024-05-01] " and 27 characters, 10 tokens by the estimate; the separator 1.
  const block = (id: string): AssembleItem => ({ id, text: `${id} ${'x'.repeat(26 - id.length)}`, createdAt: DAY });
  const threeBlocks = 3 * 10 + 2 * 1;

  it('with a tight budget covers threads A, B and C where the greedy fill by score keeps to A', () => {
    const hits = ['a1', 'a2', 'a3', 'b1', 'c1'];
    const sessions = ['A', 'A', 'A', 'B', 'C'];
    const scores = [1, 0.95, 0.9, 0.5, 0.3];
    const items = hits.map(block);
    expect(estimateTokens(formatBlock(items[0]!))).toBe(10);
    const order = contextOrder(scores, sessions, options, sameSession(sessions));
    expect(order).toEqual([0, 3, 4, 1, 2]);
    expect(assemble(order.map((i) => items[i]!), threeBlocks).ids).toEqual(['a1', 'b1', 'c1']);
    expect(assemble(items, threeBlocks).ids).toEqual(['a1', 'a2', 'a3']);
    // With room for more, phase 2 fills it with the rest.
    expect(assemble(order.map((i) => items[i]!), threeBlocks + 11).ids).toEqual(['a1', 'b1', 'c1', 'a2']);
  });

  it('orders each thread\'s best by MMR with CEMS\'s λ 0.6, not the caller\'s diversity λ', () => {
    expect(CONTEXT_MMR_LAMBDA).toBe(0.6);
    // B's best is close to A's, C's is not: λ 0.6 puts C before B, where λ 0.9 would keep score order.
    const sessions = ['A', 'B', 'C'];
    const sim = (a: number, b: number) => (Math.min(a, b) === 0 && Math.max(a, b) === 1 ? 0.8 : 0);
    const scores = [1, 0.9, 0.7];
    expect(contextOrder(scores, sessions, { lambda: 0.9, duplicateThreshold: 0.94 }, sim)).toEqual([0, 2, 1]);
    expect(mmrSelect(scores, 3, { lambda: 0.9, duplicateThreshold: 0.94 }, sim).picked.map((p) => p.index)).toEqual([0, 1, 2]);
  });

  it('places every hit, even one the selection would have taken for a duplicate; no thread means phase 2 only', () => {
    const sessions = ['A', undefined, 'B', undefined];
    const order = contextOrder([1, 0.9, 0.8, 0.7], sessions, options, () => 0.99);
    expect(order.slice(0, 2).sort()).toEqual([0, 2]);
    expect([...order].sort()).toEqual([0, 1, 2, 3]);
  });

  it('never exceeds the budget, and has each thread\'s best before any second memory of a thread when the budget allows', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            score: fc.double({ min: 0, max: 1, noNaN: true }),
            session: fc.constantFrom('a', 'b', 'c', 'd', undefined),
            length: fc.integer({ min: 1, max: 120 }),
            angle: fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }),
          }),
          { maxLength: 25 },
        ),
        fc.integer({ min: 0, max: 200 }),
        fc.constantFrom<(t: string) => number>(estimateTokens, (t) => t.split(' ').length),
        (raw, budget, count) => {
          const hits = [...raw].sort((x, y) => y.score - x.score); // the pipeline's hits: best first
          const items = hits.map((h, i): AssembleItem => ({ id: `m${i}`, text: 'w '.repeat(h.length).trim(), createdAt: DAY }));
          const sessions = hits.map((h) => h.session);
          const sim = (a: number, b: number) => Math.cos(hits[a]!.angle - hits[b]!.angle);
          const order = contextOrder(hits.map((h) => h.score), sessions, options, sim);
          expect([...order].sort((a, b) => a - b)).toEqual(hits.map((_, i) => i));
          const ctx = assemble(order.map((i) => items[i]!), budget, count);
          expect(ctx.tokens).toBeLessThanOrEqual(budget);
          // Each thread's best: its first hit (hits are best first; a tie keeps the earlier one).
          const best = new Set<number>();
          const seen = new Set<string>();
          sessions.forEach((s, i) => {
            if (s !== undefined && !seen.has(s)) (seen.add(s), best.add(i));
          });
          const positions = ctx.ids.map((id) => Number(id.slice(1)));
          const firstOther = positions.findIndex((i) => !best.has(i));
          const bestsIn = positions.filter((i) => best.has(i));
          if (firstOther >= 0) expect(positions.slice(firstOther).some((i) => best.has(i))).toBe(false);
          // A best left out did not fit beside the bests that are in.
          const bestTokens = bestsIn.reduce((n, i) => n + count(formatBlock(items[i]!)), 0) + Math.max(0, bestsIn.length - 1) * count(SEPARATOR);
          for (const i of best) {
            if (bestsIn.includes(i)) continue;
            expect(bestTokens + count(formatBlock(items[i]!)) + (bestsIn.length > 0 ? count(SEPARATOR) : 0)).toBeGreaterThan(budget);
          }
        },
      ),
      { numRuns: runs(300) },
    );
  });
});

describe("the search's context with assembly 'diverse' and 'auto'", () => {
  const NOW = Date.UTC(2024, 5, 1);
  // Thread A matches best; every text is 40 characters, so each block costs the same 14 tokens (estimate).
  const memories = [
    { id: 'a1', text: 'Tim read books: books about books, Dune.', meta: { thread: 'A' } },
    { id: 'a2', text: 'Tim read books about sailing with Emma..', meta: { thread: 'A' } },
    { id: 'a3', text: 'Tim read books on the train to work.....', meta: { thread: 'A' } },
    { id: 'b1', text: 'Tim finished a novel he read in a week..', meta: { thread: 'B' } },
    { id: 'c1', text: 'At the library Tim chose what to read...', meta: { thread: 'C' } },
  ];
  const tight = 3 * 14 + 2;
  const search = async (query: string, assembly: 'greedy' | 'diverse' | 'auto') => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(memories.map((m) => ({ ...m, createdAt: NOW })));
    return engine.search(query, { k: 5, tokenBudget: tight, assembly, neighbours: false, touch: false });
  };
  const threads = (ids: string[]) => ids.map((id) => id[0]!.toUpperCase());

  it('greedy fills the budget with thread A; diverse with A, B and C, hits still best first', async () => {
    expect(memories.every((m) => estimateTokens(formatBlock({ ...m, createdAt: NOW })) === 14)).toBe(true);
    const greedy = await search('Tim read books', 'greedy');
    expect(threads(greedy.hits.map((h) => h.id))).toEqual(['A', 'A', 'A', 'B', 'C'].slice(0, greedy.hits.length));
    expect(threads(greedy.context.ids)).toEqual(['A', 'A', 'A']);
    const diverse = await search('Tim read books', 'diverse');
    expect(diverse.hits.map((h) => h.id)).toEqual(greedy.hits.map((h) => h.id));
    expect(threads(diverse.context.ids)).toEqual(['A', 'B', 'C']);
    expect(diverse.context.tokens).toBeLessThanOrEqual(tight);
    expect(diverse.trace.stages.find((s) => s.name === 'assemble')!.note).toMatch(/best of each thread first/);
    expect(greedy.trace.stages.find((s) => s.name === 'assemble')!.note).toBeUndefined();
  });

  it("'auto' assembles diversely for an aggregation question only", async () => {
    const aggregation = await search('What books has Tim read?', 'auto');
    expect(aggregation.trace.understanding.type).toBe('aggregation');
    expect(threads(aggregation.context.ids)).toEqual(['A', 'B', 'C']);
    const factual = await search('Tim read books', 'auto');
    expect(factual.trace.understanding.type).toBe('factual');
    expect(threads(factual.context.ids)).toEqual(['A', 'A', 'A']);
  });
});

describe("the search's hits with assembly 'cover'", () => {
  const NOW = Date.UTC(2024, 5, 1);
  // a1 matches best and lends neighbour support to a2 and a3, which match nothing; b1 matches, in another thread.
  const memories = [
    { id: 'a1', text: 'Tim read books about sailing all summer', meta: { thread: 'A' }, createdAt: NOW - 5000 },
    { id: 'a2', text: 'Yes, he loved them, especially the maps', meta: { thread: 'A' }, createdAt: NOW - 4000 },
    { id: 'a3', text: 'The harbour was cold that morning', meta: { thread: 'A' }, createdAt: NOW - 3000 },
    { id: 'b1', text: 'Later Tim read a novel on the train', meta: { thread: 'B' }, createdAt: NOW - 2000 },
    { id: 'c1', text: 'The bakery opens at seven', meta: { thread: 'C' }, createdAt: NOW - 1000 },
  ];

  it("greedy's hits stay in the thread that lends; 'cover' and 'hedge' also reach the thread keyword search reaches, and say so", async () => {
    const engine = await createEngine({ clock: () => NOW, embedder: null });
    await engine.add(memories);
    const search = (assembly: 'greedy' | 'cover' | 'hedge') => engine.search('Tim read books', { k: 3, assembly, touch: false });
    const greedy = await search('greedy');
    expect(greedy.hits.map((h) => h.id)).toEqual(['a1', 'a2', 'a3']);
    expect(greedy.hits.find((h) => h.id === 'b1')).toBeUndefined();
    const cover = await search('cover');
    expect(cover.hits.map((h) => h.id)).toEqual(['a1', 'a2', 'b1']);
    expect(cover.hits[2]!.explain.covers).toEqual({ thread: 'B', lexicalRank: 2 });
    expect(cover.trace.stages.find((s) => s.name === 'diversify')!.note).toBe("cover: 1 placed for threads the lexical leg's first 3 reached");
    // Thread A holds every candidate but one: 'hedge' covers only the lexical leg's first 2, which reach B.
    const hedge = await search('hedge');
    expect(hedge.hits.map((h) => h.id)).toEqual(['a1', 'a2', 'b1']);
    expect(hedge.trace.stages.find((s) => s.name === 'diversify')!.note).toBe("hedge: 1 placed for threads the lexical leg's first 2 reached");
    await engine.close();
  });
});

describe('understand by rules', () => {
  it.each([
    'What books has Tim read?',
    'Which cities have they visited?',
    'How many times did we discuss the budget?',
    'What kinds of music does she like?',
    'List every restaurant we tried',
    'What hobbies does he have?',
  ])('reads %s as aggregation', (q) => expect(understandByRules(q).type).toBe('aggregation'));
  it.each([
    ['When did Caroline go to the support group?', 'temporal'],
    ['What is the wifi password?', 'factual'],
    ['What kind of pot did they make?', 'factual'],
    ['Can you recommend a lens for my vlog?', 'preference'],
    ['src/auth/middleware.ts', 'identifier'],
  ])('reads %s as %s', (q, type) => expect(understandByRules(q).type).toBe(type));
  it('grades complexity by signals and length', () => {
    expect(understandByRules('wifi password').complexity).toBe('simple');
    expect(understandByRules('when did we first list the budget items').complexity).toBe('complex');
    expect(understandByRules('what did the doctor say about the test results').complexity).toBe('moderate');
  });
});
