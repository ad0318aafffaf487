import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coverLexicalThreads, diversify, hedgeDepth, HEDGE_LEXICAL_HEADS, tagJaccard } from '../../../src/search/diversify.js';
import { mmrSelect } from '../../../src/search/mmr.js';
import type { ScoredCandidate } from '../../../src/search/adjust.js';
import { resolveSearchOptions } from '../../../src/search/options.js';
import { runs } from '../helpers/tier.js';

/** Naive MMR: recompute every max similarity from scratch at every step. */
function naiveMmr(scores: number[], k: number, lambda: number, dup: number, sim: (a: number, b: number) => number) {
  const best = Math.max(0, ...scores);
  const rel = scores.map((s) => (best > 0 ? s / best : 0));
  let remaining = scores.map((_, i) => i);
  const picked: { index: number; mmr: number }[] = [];
  const duplicates: number[] = [];
  while (picked.length < k && remaining.length > 0) {
    let choice = -1;
    let value = -Infinity;
    for (const i of remaining) {
      const novelty = picked.length === 0 ? 0 : Math.max(...picked.map((p) => sim(p.index, i)));
      const mmr = lambda * rel[i]! - (1 - lambda) * novelty;
      if (mmr > value) [choice, value] = [i, mmr];
    }
    picked.push({ index: choice, mmr: value });
    remaining = remaining.filter((i) => i !== choice);
    const dropped = remaining.filter((i) => sim(choice, i) >= dup);
    duplicates.push(...dropped);
    remaining = remaining.filter((i) => !dropped.includes(i));
  }
  return { picked, duplicates };
}

/** Points on a circle: cosine is cos(angle difference), a real similarity geometry. */
const arbCase = fc.record({
  angles: fc.array(fc.double({ min: 0, max: 2 * Math.PI, noNaN: true }), { minLength: 0, maxLength: 40 }),
  k: fc.integer({ min: 0, max: 45 }),
  lambda: fc.double({ min: 0, max: 1, noNaN: true }),
  dup: fc.double({ min: 0.5, max: 1.01, noNaN: true }),
});

/** The eager MMR this module ran before its lazy evaluation: every candidate's max similarity updated after every pick. */
function eagerMmr(scores: readonly number[], k: number, lambda: number, duplicateThreshold: number, similarity: (a: number, b: number) => number, preselected: readonly number[] = []) {
  const best = scores.reduce((max, s) => Math.max(max, s), 0);
  const relevance = scores.map((s) => (best > 0 ? s / best : 0));
  const maxSim = new Float64Array(scores.length).fill(-Infinity);
  const alive = scores.map(() => true);
  const picked: { index: number; mmr: number }[] = [];
  let calls = 0;
  const account = (choice: number) => {
    for (let i = 0; i < scores.length; i++) {
      if (!alive[i]) continue;
      calls++;
      const sim = similarity(choice, i);
      if (sim >= duplicateThreshold) alive[i] = false;
      else if (sim > maxSim[i]!) maxSim[i] = sim;
    }
  };
  for (const index of preselected) alive[index] = false;
  for (const index of preselected) account(index);
  while (picked.length < k) {
    let choice = -1;
    let choiceMmr = -Infinity;
    for (let i = 0; i < scores.length; i++) {
      if (!alive[i]) continue;
      const novelty = picked.length === 0 && preselected.length === 0 ? 0 : maxSim[i]!;
      const mmr = lambda * relevance[i]! - (1 - lambda) * novelty;
      if (mmr > choiceMmr) [choice, choiceMmr] = [i, mmr];
    }
    if (choice < 0) break;
    alive[choice] = false;
    picked.push({ index: choice, mmr: choiceMmr });
    account(choice);
  }
  return { picked, calls };
}

/** Candidates with tied scores and a symmetric similarity drawn from a few values (ties in mmr, duplicates, negatives). */
const arbTies = fc.integer({ min: 0, max: 24 }).chain((n) =>
  fc.record({
    scores: fc.array(fc.constantFrom(1, 0.9, 0.9, 0.5, 0.2, 0), { minLength: n, maxLength: n }),
    pairs: fc.array(fc.constantFrom(-0.4, 0, 0.3, 0.3, 0.6, 0.95, 1), { minLength: (n * (n + 1)) / 2, maxLength: (n * (n + 1)) / 2 }),
    k: fc.integer({ min: 0, max: 26 }),
    lambda: fc.constantFrom(0, 0.3, 0.5, 0.78, 1, 0.999),
    dup: fc.constantFrom(0.6, 0.94, 1, 2),
    preselected: fc.subarray(Array.from({ length: n }, (_, i) => i), { maxLength: Math.min(4, n) }),
  }),
);

describe('mmrSelect: lazy evaluation', () => {
  it('picks exactly what the eager MMR picks (same indices, same mmr values, same order), ties and preselection included', () => {
    fc.assert(
      fc.property(arbTies, ({ scores, pairs, k, lambda, dup, preselected }) => {
        const sim = (a: number, b: number) => {
          const [lo, hi] = a < b ? [a, b] : [b, a];
          return pairs[(hi * (hi + 1)) / 2 + lo]!;
        };
        const options = { lambda, duplicateThreshold: dup };
        const lazy = mmrSelect(scores, k, options, sim, preselected).picked;
        expect(lazy).toEqual(eagerMmr(scores, k, lambda, dup, sim, preselected).picked);
      }),
      { numRuns: runs(2000) },
    );
  });

  it('matches the eager MMR on real geometry, with fewer similarity calls', () => {
    let lazyCalls = 0;
    let eagerCalls = 0;
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 8, maxLength: 8 }), { minLength: 30, maxLength: 30 }),
        (vectors) => {
          const norm = (v: number[]) => Math.hypot(...v) || 1;
          const sim = (a: number, b: number) => vectors[a]!.reduce((s, x, j) => s + x * vectors[b]![j]!, 0) / (norm(vectors[a]!) * norm(vectors[b]!));
          const scores = vectors.map((_, i) => 1 - i / 40);
          const eager = eagerMmr(scores, 10, 0.78, 0.94, sim);
          const lazy = mmrSelect(scores, 10, { lambda: 0.78, duplicateThreshold: 0.94 }, (a, b) => (lazyCalls++, sim(a, b))).picked;
          eagerCalls += eager.calls;
          expect(lazy).toEqual(eager.picked);
        },
      ),
      { numRuns: runs(100) },
    );
    expect(lazyCalls).toBeLessThan(eagerCalls);
  });
});

describe('diversify: MMR with duplicate drop', () => {
  it('matches the naive MMR on random geometry', () => {
    fc.assert(
      fc.property(arbCase, ({ angles, k, lambda, dup }) => {
        const scores = angles.map((_, i) => 1 / (1 + i)); // best first
        const sim = (a: number, b: number) => Math.cos(angles[a]! - angles[b]!);
        const fast = mmrSelect(scores, k, { lambda, duplicateThreshold: dup }, sim);
        const naive = naiveMmr(scores, k, lambda, dup, sim);
        expect(fast.picked.map((p) => p.index)).toEqual(naive.picked.map((p) => p.index));
        fast.picked.forEach((p, i) => expect(p.mmr).toBeCloseTo(naive.picked[i]!.mmr, 10));
        // Lazy evaluation lists only the near-duplicates it examined: each is one, and the naive MMR drops it too.
        for (const d of fast.duplicates) expect(naive.duplicates).toContain(d);
        expect(fast.picked.length).toBeLessThanOrEqual(k);
        // no two picks are near-duplicates
        for (const a of fast.picked) for (const b of fast.picked) if (a !== b) expect(sim(a.index, b.index)).toBeLessThan(dup);
      }),
      { numRuns: runs(300) },
    );
  });

  it('λ = 1 keeps relevance order; a near-duplicate of the top hit is dropped', () => {
    const scores = [0.05, 0.04, 0.03];
    const sim = (a: number, b: number) => (a + b === 1 ? 0.97 : 0.1); // 0 and 1 are near-duplicates
    const result = mmrSelect(scores, 3, { lambda: 1, duplicateThreshold: 0.94 }, sim);
    expect(result.picked.map((p) => p.index)).toEqual([0, 2]);
    expect(result.duplicates).toEqual([1]);
  });

  it('λ < 1 prefers a novel candidate over a similar, slightly better one', () => {
    // 0 is best; 1 is close to 0 (cos 0.9) and scores 0.95; 2 is unrelated and scores 0.8.
    const scores = [1, 0.95, 0.8];
    const cos = [[1, 0.9, 0], [0.9, 1, 0], [0, 0, 1]];
    const result = mmrSelect(scores, 2, { lambda: 0.78, duplicateThreshold: 0.94 }, (a, b) => cos[a]![b]!);
    expect(result.picked.map((p) => p.index)).toEqual([0, 2]);
    expect(result.picked[0]!.mmr).toBeCloseTo(0.78, 12);
    expect(result.picked[1]!.mmr).toBeCloseTo(0.78 * 0.8, 12);
  });
});

describe('diversify: redundancy with tags', () => {
  const scored = (id: string, score: number, tags: string[]): ScoredCandidate => ({
    candidate: { id, fused: score, rank: { lexical: 1, vector: null }, legScore: { lexical: score, vector: null } },
    record: { id, text: `text of ${id}`, createdAt: 0, priority: 1, pinned: false, tags, accessCount: 0 },
    penalty: 1, recency: 1, boost: 1, quality: 0, score,
  });

  it('Jaccard of tag sets', () => {
    expect(tagJaccard(['a', 'b'], ['b', 'c'])).toBeCloseTo(1 / 3, 12);
    expect(tagJaccard(['a', 'a'], ['a'])).toBe(1);
    expect(tagJaccard([], [])).toBe(0);
  });

  it('counts max(similarity, tagWeight × tag Jaccard) as redundancy, so a same-tag runner-up yields to a different one', () => {
    // Without vectors, texts are similar only when identical: the tags decide.
    const candidates = [scored('a', 1, ['travel', 'lisbon']), scored('b', 0.95, ['travel', 'lisbon']), scored('c', 0.8, ['work'])];
    const pick = (tagWeight: number) => diversify(candidates, resolveSearchOptions({ k: 2, diversity: { lambda: 0.5, duplicateThreshold: 0.94, tagWeight } }), null, 0).map((s) => s.record.id);
    // λ·rel − (1−λ)·redundancy: b = 0.5·0.95 − 0.5·0.35 = 0.3 < c = 0.5·0.8 = 0.4.
    expect(pick(0.35)).toEqual(['a', 'c']);
    expect(pick(0)).toEqual(['a', 'b']);
  });

  it('leaves memories without a shared tag as they were, negative similarities included', () => {
    // Three untagged candidates whose (raw) similarities are negative: the tag term must not lift them to 0.
    const vectors = new Map([
      ['a', Float32Array.from([1, 0])],
      ['b', Float32Array.from([-0.6, 0.8])],
      ['c', Float32Array.from([-0.6, -0.8])],
    ]);
    const index = { get: (id: string) => vectors.get(id) } as unknown as Parameters<typeof diversify>[2];
    const candidates = [scored('a', 1, []), scored('b', 0.5, []), scored('c', 0.49, [])];
    const pick = (tagWeight: number) =>
      diversify(candidates, resolveSearchOptions({ k: 3, diversity: { lambda: 0.5, duplicateThreshold: 0.94, tagWeight } }), index, 0).map((s) => [s.record.id, s.mmr]);
    expect(pick(0.35)).toEqual(pick(0));
  });
});

describe("assembly 'cover': the hits reach every thread the lexical leg's first k reach", () => {
  const candidate = (id: string, score: number, lexical: number | null, thread: string | undefined): ScoredCandidate => ({
    candidate: { id, fused: score, rank: { lexical, vector: null }, legScore: { lexical: lexical === null ? null : 1 / lexical, vector: null } },
    record: { id, text: id, createdAt: 0, priority: 1, pinned: false, tags: [], accessCount: 0, ...(thread === undefined ? {} : { meta: { thread } }) },
    penalty: 1, recency: 1, boost: 1, quality: 0, score,
  });
  const threadsOf = (list: readonly ScoredCandidate[]) => new Set(list.flatMap((s) => (s.record.meta?.thread === undefined ? [] : [String(s.record.meta.thread)])));

  /** Candidates best first, some in a thread (a few threads), some with a lexical rank (a permutation). */
  const arbCandidates = fc.integer({ min: 1, max: 30 }).chain((n) =>
    fc.record({
      threads: fc.array(fc.option(fc.constantFrom('A', 'B', 'C', 'D', 'E', 'F'), { nil: undefined, freq: 4 }), { minLength: n, maxLength: n }),
      lexicalOrder: fc.shuffledSubarray([...Array(n).keys()]),
      k: fc.integer({ min: 1, max: 12 }),
    }),
  );

  it('covers every lexical thread, keeps k distinct hits, and replaces only when a thread is missing', () => {
    fc.assert(
      fc.property(arbCandidates, ({ threads, lexicalOrder, k }) => {
        const lexicalRank = new Map(lexicalOrder.map((index, rank) => [index, rank + 1]));
        const all = threads.map((thread, i) => candidate(`m${i}`, 1 - i / 100, lexicalRank.get(i) ?? null, thread));
        const hits = all.slice(0, k);
        const covered = coverLexicalThreads(hits, all, k);
        const wanted = threadsOf(all.filter((s) => s.candidate.rank.lexical !== null && s.candidate.rank.lexical <= k));
        // Naive reference: the covered hits' threads include every wanted thread.
        const reached = threadsOf(covered);
        for (const thread of wanted) expect(reached.has(thread)).toBe(true);
        expect(covered).toHaveLength(hits.length);
        expect(new Set(covered.map((s) => s.record.id)).size).toBe(covered.length);
        // Each placed hit names its thread and lexical rank, and was not a hit before; every other hit was.
        const before = new Set(hits.map((s) => s.record.id));
        for (const s of covered) {
          if (s.covers) {
            expect(before.has(s.record.id)).toBe(false);
            expect(s.covers).toEqual({ thread: s.record.meta?.thread, lexicalRank: s.candidate.rank.lexical });
          } else expect(before.has(s.record.id)).toBe(true);
        }
        // Nothing changes when the hits already reach every wanted thread.
        if ([...wanted].every((thread) => threadsOf(hits).has(thread))) expect(covered).toEqual(hits);
      }),
      { numRuns: runs(500) },
    );
  });

  it('takes the place of the lowest-scored hit of a thread with another hit first', () => {
    const all = [
      candidate('a1', 0.9, null, 'A'),
      candidate('a2', 0.8, null, 'A'),
      candidate('x', 0.7, null, undefined),
      candidate('a3', 0.6, null, 'A'),
      candidate('b', 0.1, 1, 'B'),
    ];
    const covered = coverLexicalThreads(all.slice(0, 4), all, 4);
    expect(covered.map((s) => s.record.id)).toEqual(['a1', 'a2', 'x', 'b']);
    expect(covered[3]!.covers).toEqual({ thread: 'B', lexicalRank: 1 });
  });

  it('through diversify: the placed hits sort by score with the rest', () => {
    const all = [candidate('a1', 0.9, 2, 'A'), candidate('a2', 0.8, null, 'A'), candidate('b', 0.1, 1, 'B')];
    const picked = diversify(all, resolveSearchOptions({ k: 2, assembly: 'cover' }), null, 0, false, 2);
    expect(picked.map((s) => [s.record.id, s.covers?.thread])).toEqual([['a1', undefined], ['b', 'B']]);
  });
});

describe("assembly 'hedge': how deep the cover goes", () => {
  const candidate = (id: string, score: number, lexical: number | null, thread: string | undefined): ScoredCandidate => ({
    candidate: { id, fused: score, rank: { lexical, vector: null }, legScore: { lexical: lexical === null ? null : 1 / lexical, vector: null } },
    record: { id, text: id, createdAt: 0, priority: 1, pinned: false, tags: [], accessCount: 0, ...(thread === undefined ? {} : { meta: { thread } }) },
    penalty: 1, recency: 1, boost: 1, quality: 0, score,
  });
  const list = (threads: (string | undefined)[]) => threads.map((t, i) => candidate(`m${i}`, 1 - i / 100, null, t));

  it('all k for an aggregation question, or when the best thread holds under 40% of the first 10 candidates', () => {
    const spread = list(['A', 'A', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'A', 'A']);
    const packed = list(['A', 'A', 'A', 'A', 'C', 'D', 'E', 'F', 'G', 'H']);
    expect(hedgeDepth(spread, false, 10)).toBe(10);
    expect(hedgeDepth(packed, false, 10)).toBe(HEDGE_LEXICAL_HEADS);
    expect(hedgeDepth(packed, true, 10)).toBe(10);
    expect(hedgeDepth(packed, false, 2)).toBe(2);
    // No thread: nothing to cover, whatever the depth.
    expect(hedgeDepth(list([undefined, 'A']), false, 10)).toBe(HEDGE_LEXICAL_HEADS);
  });

  it('through diversify: a packed top keeps its thread and still reaches the best lexical thread', () => {
    const all = [
      candidate('a1', 0.9, 4, 'A'), candidate('a2', 0.8, null, 'A'), candidate('a3', 0.7, null, 'A'), candidate('a4', 0.6, null, 'A'),
      candidate('b', 0.2, 1, 'B'), candidate('c', 0.1, 2, 'C'),
    ];
    const options = resolveSearchOptions({ k: 4, assembly: 'hedge' });
    const picked = diversify(all, options, null, 0, false, hedgeDepth(all, false, options.k));
    expect(picked.map((s) => s.record.id)).toEqual(['a1', 'a2', 'b', 'c']);
    expect(picked.filter((s) => s.covers).map((s) => s.covers!.lexicalRank)).toEqual([1, 2]);
  });
});
