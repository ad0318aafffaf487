import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, it } from 'vitest';
import { bm25TopK } from '../../../src/lexical/bm25-topk.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { miniSearchIndex } from '../../../src/lexical/minisearch-adapter.js';
import { runs } from '../helpers/tier.js';

interface Doc {
  id: string;
  text: string;
  tags: string;
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'];

/** Two MiniSearch instances built the same way: one answers through search(), the other through bm25TopK. */
function twins(docs: Doc[], discard: number[]): [MiniSearch<Doc>, MiniSearch<Doc>] {
  const make = () => {
    const ms = new MiniSearch<Doc>({ fields: ['text', 'tags'], storeFields: [], autoVacuum: false });
    ms.addAll(docs);
    for (const i of discard) if (ms.has(docs[i % docs.length]!.id)) ms.discard(docs[i % docs.length]!.id);
    return ms;
  };
  return [make(), make()];
}

// Skewed word choice (index = floor(n·u³)): some words are in most documents, some in few.
const docArb = fc.array(fc.array(fc.double({ min: 0, max: 0.999, noNaN: true }), { minLength: 1, maxLength: 14 }), { minLength: 1, maxLength: 60 });
const toText = (us: number[]) => us.map((u) => WORDS[Math.floor(WORDS.length * u * u * u)]!).join(' ');

describe('bm25TopK: MiniSearch ranking without result objects or a full sort', () => {
  it('equals MiniSearch search() once its postings are clean: same ids, order and scores, with discarded documents, boosts, filters and limits', () => {
    fc.assert(
      fc.property(
        docArb,
        fc.array(fc.nat(80), { maxLength: 12 }),
        fc.uniqueArray(fc.constantFrom(...WORDS, 'missing'), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 30 }),
        fc.record({ text: fc.constantFrom(1, 2, 0.5), tags: fc.constantFrom(1, 3) }),
        fc.boolean(),
        (texts, discard, terms, limit, boost, filtered) => {
          const docs = texts.map((us, i) => ({ id: `d${i}`, text: toText(us), tags: i % 3 === 0 ? toText(us.slice(0, 2)) : '' }));
          const [a, b] = twins(docs, discard);
          const bm25 = { k: 1.2, b: 0.7, d: 0.5 };
          const eligible = filtered ? (id: string) => Number(id.slice(1)) % 2 === 1 : undefined;
          const search = () =>
            a
              .search(terms.join(' '), { combineWith: 'OR', boost, bm25, ...(eligible ? { filter: (r) => eligible(r.id as string) } : {}) })
              .slice(0, limit)
              .map((r) => ({ id: r.id as string, score: r.score }));
          // MiniSearch's answer once its postings are clean: its first search after discards scores the documents
          // met before a discarded one with the old document frequency; bm25TopK's first answer is already this.
          // Each search takes one occurrence of a discarded document out, and a text has at most 14 words.
          let expected = search();
          for (let i = 0; i < 14 && discard.length > 0; i++) expected = search();
          const got = bm25TopK(miniSearchIndex(b)!, terms, boost, bm25, limit, eligible);
          expect(got).toEqual(expected);
          expect(bm25TopK(miniSearchIndex(b)!, terms, boost, bm25, limit, eligible), 'the same answer again').toEqual(got);
        },
      ),
      { numRuns: runs(200) },
    );
  });

  it('is what LexicalIndex.search returns, and prefix search still goes through MiniSearch', () => {
    const records = ['the cat sat', 'a cat and a dog', 'dogs bark loudly', 'cats purr'].map((text, i) => ({
      id: `m${i}`, text, createdAt: 0, priority: 1, pinned: false, tags: [], accessCount: 0,
    }));
    const exact = new LexicalIndex();
    exact.addAll(records);
    const hits = exact.search('cat dog', 10);
    expect(hits[0]!.id).toBe('m1'); // the only memory with both terms
    expect(hits.map((h) => h.id).sort()).toEqual(['m0', 'm1', 'm2', 'm3']); // stemmed: cats, dogs match too
    const prefix = new LexicalIndex({ prefix: true, stem: false });
    prefix.addAll(records);
    expect(prefix.search('ca', 10).map((h) => h.id).sort()).toEqual(['m0', 'm1', 'm3']);
  });
});
