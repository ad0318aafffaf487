import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { coverage, proximity, rerankByRules, type QueryTerms } from '../../../src/search/rerank-rules.js';
import { runs } from '../helpers/tier.js';

const query = (sequence: string[], idf: [string, number][]): QueryTerms => ({ sequence, idf: new Map(idf) });

describe('rerank-rules: the features', () => {
  it('coverage is the idf-weighted share of the indexed query terms the memory holds', () => {
    const q = query(['garden', 'irrig', 'schedul', 'zzz'], [['garden', 1], ['irrig', 2], ['schedul', 3]]);
    expect(coverage(q, new Set(['irrig', 'schedul', 'water']))).toBeCloseTo(5 / 6, 12);
    expect(coverage(q, new Set(['zzz']))).toBe(0); // a term the index does not hold counts for nothing
    expect(coverage(query(['zzz'], []), new Set(['zzz']))).toBe(0);
  });

  it('proximity is the share of ordered consecutive query pairs found at most `window` apart, in order', () => {
    const q = query(['databas', 'migrat', 'plan'], []);
    expect(proximity(q, ['databas', 'migrat'], 2)).toBe(0.5);
    expect(proximity(q, ['databas', 'x', 'migrat', 'plan'], 2)).toBe(1);
    expect(proximity(q, ['databas', 'x', 'y', 'migrat'], 2)).toBe(0); // too far apart
    expect(proximity(q, ['migrat', 'databas'], 2)).toBe(0); // wrong order
    expect(proximity(query(['databas'], []), ['databas'], 2)).toBe(0);
  });

  it('uses the terms as the lexical index processes them (stop words, stemming)', () => {
    const index = new LexicalIndex();
    index.addAll([{ id: 'm', text: 'We planned the database migrations', tags: [], priority: 1, pinned: false, createdAt: 0, accessCount: 0 }]);
    const q = { sequence: index.textTerms('the database migration plan'), idf: index.scoreBound('the database migration plan')!.idf };
    expect(q.sequence).toEqual(['databas', 'migrat', 'plan']);
    const terms = index.textTerms('We planned the database migrations');
    expect(coverage(q, new Set(terms))).toBe(1);
    expect(proximity(q, terms, 2)).toBe(0.5);
  });
});

/** s · (1 + w_c · coverage + w_p · proximity), written out per candidate. */
function naive(q: QueryTerms, cands: { id: string; terms: string[]; score: number }[], w: { coverage: number; proximity: number }) {
  return cands.map((c) => {
    let total = 0;
    let found = 0;
    for (const [t, idf] of q.idf) {
      total += idf;
      if (c.terms.includes(t)) found += idf;
    }
    let pairs = 0;
    let hit = 0;
    for (let i = 0; i + 1 < q.sequence.length; i++) {
      if (q.sequence[i] === q.sequence[i + 1]) continue;
      pairs++;
      let ok = false;
      for (let a = 0; a < c.terms.length; a++) for (let b = a + 1; b <= a + 2 && b < c.terms.length; b++) if (c.terms[a] === q.sequence[i] && c.terms[b] === q.sequence[i + 1]) ok = true;
      if (ok) hit++;
    }
    const cov = total > 0 ? found / total : 0;
    const prox = w.proximity > 0 && pairs > 0 ? hit / pairs : 0;
    return { id: c.id, score: c.score * (1 + w.coverage * cov + w.proximity * prox) };
  });
}

describe('rerankByRules', () => {
  const vocabulary = fc.constantFrom('a', 'b', 'c', 'd', 'e');
  const arb = fc.record({
    sequence: fc.array(vocabulary, { maxLength: 5 }),
    idf: fc.uniqueArray(fc.tuple(vocabulary, fc.double({ min: 0.01, max: 5, noNaN: true })), { selector: ([t]) => t, maxLength: 5 }),
    candidates: fc.uniqueArray(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 3 }),
        terms: fc.array(vocabulary, { maxLength: 8 }),
        score: fc.double({ min: 0, max: 3, noNaN: true }),
      }),
      { selector: (c) => c.id, maxLength: 10 },
    ),
    weights: fc.record({
      coverage: fc.double({ min: 0, max: 2, noNaN: true }),
      proximity: fc.double({ min: 0, max: 2, noNaN: true }),
    }),
  });

  it('matches the naive formula, best first, and never lowers a score', () => {
    fc.assert(
      fc.property(arb, ({ sequence, idf, candidates, weights }) => {
        const q = query(sequence, idf);
        const out = rerankByRules(q, candidates, { ...weights, window: 2 });
        const expected = new Map(naive(q, candidates, weights).map((e) => [e.id, e.score]));
        expect(out.length).toBe(candidates.length);
        for (const r of out) expect(r.score).toBeCloseTo(expected.get(r.id)!, 9);
        for (let i = 1; i < out.length; i++) expect(out[i - 1]!.score).toBeGreaterThanOrEqual(out[i]!.score);
        const input = new Map(candidates.map((c) => [c.id, c.score]));
        for (const r of out) expect(r.score).toBeGreaterThanOrEqual(input.get(r.id)!);
      }),
      { numRuns: runs(400) },
    );
  });

  it('with zero weights keeps the scores and the input order, ties included', () => {
    const q = query(['a', 'b'], [['a', 1], ['b', 1]]);
    const out = rerankByRules(q, [
      { id: 'x', terms: ['a'], score: 1 },
      { id: 'y', terms: ['a', 'b'], score: 1 },
      { id: 'z', terms: [], score: 2 },
    ], { coverage: 0, proximity: 0 });
    expect(out.map((r) => [r.id, r.score])).toEqual([['z', 2], ['x', 1], ['y', 1]]);
  });

  it('lifts the memory that covers more of the query over a slightly better-scored partial match', () => {
    const q = query(['garden', 'irrig', 'schedul'], [['garden', 1], ['irrig', 2], ['schedul', 2]]);
    const out = rerankByRules(q, [
      { id: 'partial', terms: ['garden', 'tomato'], score: 1 },
      { id: 'full', terms: ['garden', 'irrig', 'schedul'], score: 0.8 },
    ], { coverage: 0.5, proximity: 0 });
    expect(out[0]).toMatchObject({ id: 'full', coverage: 1 });
    expect(out[0]!.score).toBeCloseTo(1.2, 12);
    expect(out[1]!.score).toBeCloseTo(1.1, 12);
  });
});
