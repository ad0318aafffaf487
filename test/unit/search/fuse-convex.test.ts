import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuse, fuseConvex, fuseRrf, type LegResult } from '../../../src/search/fuse.js';
import { scored } from '../helpers/legs.js';

describe('fuse: convex combination of normalised scores', () => {
  it('min-max normalises each leg (the lexical one from half its weakest score) and weighs the legs by their share', () => {
    const fused = fuseConvex(
      [
        scored('lexical', [['a', 12], ['b', 7], ['c', 2]], 0.8),
        scored('vector', [['b', 0.9], ['d', 0.7], ['a', 0.5]], 0.2),
      ],
      { topRankBonus: false },
    );
    const by = Object.fromEntries(fused.map((c) => [c.id, c.fused]));
    // Lexical floor 1 (half of 2), span 11: the weakest match keeps 1/11 rather than 0.
    expect(by.a).toBeCloseTo(0.8 * 1 + 0.2 * 0, 12);
    expect(by.b).toBeCloseTo(0.8 * (6 / 11) + 0.2 * 1, 12);
    expect(by.c).toBeCloseTo(0.8 * (1 / 11), 12);
    expect(by.d).toBeCloseTo(0.2 * 0.5, 12);
    expect(fused.map((c) => c.id)).toEqual(['a', 'b', 'd', 'c']);
    expect(fused[1]).toMatchObject({ rank: { lexical: 2, vector: 1 }, legScore: { lexical: 7, vector: 0.9 } });
  });

  it('keeps the weight of a leg that returned nothing out of the shares, and a one-item leg scores 1', () => {
    const fused = fuseConvex([scored('lexical', [], 0.8), scored('vector', [['v', 0.3]], 0.2)], { topRankBonus: false });
    expect(fused).toEqual([{ id: 'v', fused: 1, rank: { lexical: null, vector: 1 }, legScore: { lexical: null, vector: 0.3 } }]);
    expect(fuseConvex([], { topRankBonus: false })).toEqual([]);
  });

  it('adds the CEMS top-rank bonus per leg when asked', () => {
    const fused = fuseConvex([scored('lexical', [['a', 3], ['b', 2], ['c', 1]])], { topRankBonus: true });
    expect(fused.map((c) => c.fused)).toEqual([1 + 0.05, 0.6 + 0.02, 0.2 + 0.02]);
  });

  it('dispatches on the method', () => {
    const legs = [scored('lexical', [['a', 3], ['b', 1]]), scored('vector', [['b', 0.9]])];
    expect(fuse(legs, { fusion: 'rrf', rrfK: 60, topRankBonus: false })).toEqual(fuseRrf(legs, { rrfK: 60, topRankBonus: false }));
    expect(fuse(legs, { fusion: 'convex', rrfK: 60, topRankBonus: false })).toEqual(fuseConvex(legs, { topRankBonus: false }));
  });

  it('equals the naive formula for any legs, sorted best first (property)', () => {
    const legItems = fc.uniqueArray(fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), score: fc.double({ min: -5, max: 5, noNaN: true }) }), {
      selector: (item) => item.id,
      maxLength: 6,
    });
    fc.assert(
      fc.property(legItems, legItems, fc.double({ min: 0, max: 3, noNaN: true }), fc.double({ min: 0, max: 3, noNaN: true }), (lex, vec, wl, wv) => {
        // Lexical scores are BM25's, never negative.
        lex = lex.map((item) => ({ ...item, score: Math.abs(item.score) }));
        const sort = (items: { id: string; score: number }[]) => items.slice().sort((x, y) => y.score - x.score);
        const legs: LegResult[] = [
          { leg: 'lexical', weight: wl, items: sort(lex) },
          { leg: 'vector', weight: wv, items: sort(vec) },
        ];
        const fused = fuseConvex(legs, { topRankBonus: false });
        const total = (lex.length ? wl : 0) + (vec.length ? wv : 0);
        for (const candidate of fused) {
          let expected = 0;
          for (const { leg, weight, items } of legs) {
            const hit = items.find((item) => item.id === candidate.id);
            if (!hit) continue;
            const scores = items.map((item) => item.score);
            const max = Math.max(...scores);
            const floor = Math.min(...scores) * (leg === 'lexical' ? 0.5 : 1);
            expected += (total > 0 ? weight / total : 0) * (max > floor ? (hit.score - floor) / (max - floor) : 1);
          }
          expect(candidate.fused).toBeCloseTo(expected, 9);
        }
        expect(new Set(fused.map((c) => c.id))).toEqual(new Set([...lex, ...vec].map((item) => item.id)));
        for (let i = 1; i < fused.length; i++) expect(fused[i - 1]!.fused).toBeGreaterThanOrEqual(fused[i]!.fused);
      }),
    );
  });
});
