import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mmrSelect } from '../../../src/search/diversify.js';

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
        expect(fast.duplicates.slice().sort()).toEqual(naive.duplicates.slice().sort());
        expect(fast.picked.length).toBeLessThanOrEqual(k);
        // no two picks are near-duplicates
        for (const a of fast.picked) for (const b of fast.picked) if (a !== b) expect(sim(a.index, b.index)).toBeLessThan(dup);
      }),
      { numRuns: 300 },
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
