import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuseRrf, topRankBonus, type LegResult } from '../../../src/search/fuse.js';
import { runs } from '../helpers/tier.js';

const leg = (name: 'lexical' | 'vector', ids: string[], weight = 1): LegResult => ({
  leg: name,
  weight,
  items: ids.map((id, i) => ({ id, score: 100 - i })),
});

/** Rank lists where the document sits at the given 1-based rank (null: absent). */
function placed(target: string, rank: number | null, length: number): string[] {
  const ids = Array.from({ length }, (_, i) => `filler-${target}-${i}`);
  if (rank !== null) ids.splice(rank - 1, 0, target);
  return ids;
}

describe('fuse: Reciprocal Rank Fusion', () => {
  it("reproduces the seeds' worked numbers (k = 60, weights 1/1)", () => {
    const a = fuseRrf([leg('lexical', placed('A', 1, 20)), leg('vector', placed('A', 4, 20))], { rrfK: 60, topRankBonus: false });
    const b = fuseRrf([leg('lexical', placed('B', 12, 20)), leg('vector', placed('B', 1, 20))], { rrfK: 60, topRankBonus: false });
    const rrfA = a.find((c) => c.id === 'A')!.fused;
    const rrfB = b.find((c) => c.id === 'B')!.fused;
    expect(rrfA).toBeCloseTo(1 / 61 + 1 / 64, 12);
    expect(rrfA.toFixed(4)).toBe('0.0320');
    expect(rrfB.toFixed(4)).toBe('0.0303');
    expect(rrfA).toBeGreaterThan(rrfB);
    const both = fuseRrf([leg('lexical', ['A', 'x', 'y', 'z', 'w', 'v', 'u', 't', 's', 'r', 'q', 'B']), leg('vector', ['B', 'p', 'o', 'A'])], {
      rrfK: 60,
      topRankBonus: false,
    });
    expect(both[0]!.id).toBe('A');
    expect(both[0]!.rank).toEqual({ lexical: 1, vector: 4 });
    expect(both[1]!.id).toBe('B');
    expect(both[1]!.rank).toEqual({ lexical: 12, vector: 1 });
  });

  it('keeps ranks and leg scores, null for a leg that did not return the memory', () => {
    const [only] = fuseRrf([leg('lexical', []), leg('vector', ['v'])], { rrfK: 60, topRankBonus: false });
    expect(only).toEqual({ id: 'v', fused: 1 / 61, rrf: 1 / 61, rank: { lexical: null, vector: 1 }, legScore: { lexical: null, vector: 100 } });
  });

  it('applies weights and the CEMS top-rank bonus (+0.05 rank 1, +0.02 ranks 2–3, per leg)', () => {
    expect([1, 2, 3, 4].map(topRankBonus)).toEqual([0.05, 0.02, 0.02, 0]);
    const fused = fuseRrf([leg('lexical', ['a', 'b', 'c', 'd'], 2), leg('vector', ['b', 'a'], 0.5)], { rrfK: 10, topRankBonus: true });
    const byId = Object.fromEntries(fused.map((c) => [c.id, c.fused]));
    expect(byId.a).toBeCloseTo(2 / 11 + 0.05 + 0.5 / 12 + 0.02, 12);
    expect(byId.b).toBeCloseTo(2 / 12 + 0.02 + 0.5 / 11 + 0.05, 12);
    expect(byId.c).toBeCloseTo(2 / 13 + 0.02, 12);
    expect(byId.d).toBeCloseTo(2 / 14, 12);
    // a leg with weight 0 contributes nothing, bonus included
    const muted = fuseRrf([leg('lexical', ['a'], 0)], { rrfK: 60, topRankBonus: true });
    expect(muted[0]!.fused).toBe(0);
  });

  it('equals the naive formula for any pair of rank lists, sorted best first', () => {
    const ids = fc.uniqueArray(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'.split('')), { maxLength: 26 });
    fc.assert(
      fc.property(ids, ids, fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 3, noNaN: true }), fc.double({ min: 0, max: 3, noNaN: true }), fc.boolean(),
        (lex, vec, rrfK, wl, wv, bonus) => {
          const fused = fuseRrf([leg('lexical', lex, wl), leg('vector', vec, wv)], { rrfK, topRankBonus: bonus });
          const naive = (id: string) => {
            let sum = 0;
            for (const [list, w] of [[lex, wl], [vec, wv]] as const) {
              const r = list.indexOf(id) + 1;
              if (r > 0) sum += w / (rrfK + r) + (bonus && w > 0 ? (r === 1 ? 0.05 : r <= 3 ? 0.02 : 0) : 0);
            }
            return sum;
          };
          expect(new Set(fused.map((c) => c.id))).toEqual(new Set([...lex, ...vec]));
          for (const c of fused) {
            expect(c.fused).toBeCloseTo(naive(c.id), 10);
            expect(c.rank.lexical).toBe(lex.includes(c.id) ? lex.indexOf(c.id) + 1 : null);
            expect(c.rank.vector).toBe(vec.includes(c.id) ? vec.indexOf(c.id) + 1 : null);
          }
          for (let i = 1; i < fused.length; i++) expect(fused[i - 1]!.fused).toBeGreaterThanOrEqual(fused[i]!.fused);
        }),
      { numRuns: runs(300) },
    );
  });
});
