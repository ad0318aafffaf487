import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bm25TopKPruned, pruningCounters } from '../../../src/lexical/bm25-pruned.js';
import { bm25TopK } from '../../../src/lexical/bm25-topk.js';
import { postingCache, postingListCounters } from '../../../src/lexical/posting-lists.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import type { MiniSearchIndex } from '../../../src/lexical/minisearch-adapter.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/lexical/snapshot.js';
import type { MemoryRecord } from '../../../src/types.js';
import { runs } from '../helpers/tier.js';
import { memoryRecord } from '../helpers/records.js';

const VOCABULARY = Array.from({ length: 90 }, (_, i) => `w${i}`);
// Skewed choice (index = floor(n·u⁴)): w0 is in most memories, the tail in few.
const word = (u: number) => VOCABULARY[Math.floor(VOCABULARY.length * u ** 4)] as string;
const rec = (id: string, text: string, tags: string[]) => memoryRecord(id, { text, tags });

/** The MiniSearch adapter a LexicalIndex searches through (private: read for this test only). */
const adapterOf = (index: LexicalIndex) => (index as unknown as { index_: MiniSearchIndex }).index_;

const textArb = fc.array(fc.double({ min: 0, max: 0.9999, noNaN: true }), { minLength: 1, maxLength: 12 });
const memoryArb = fc.record({ text: textArb, tags: fc.array(textArb.map((us) => us.slice(0, 2)), { maxLength: 2 }), copies: fc.nat(3) });
const scenarioArb = fc.record({
  memories: fc.array(memoryArb, { minLength: 1, maxLength: 120 }),
  // Discarded, and re-added with other words (a new short id): postings keep the old one until cleaned.
  discard: fc.array(fc.nat(200), { maxLength: 30 }),
  readd: fc.array(fc.tuple(fc.nat(200), textArb), { maxLength: 15 }),
  snapshot: fc.boolean(),
  queries: fc.array(
    fc.record({
      terms: fc.oneof(
        fc.uniqueArray(fc.constantFrom(...VOCABULARY.slice(0, 6), 'missing'), { minLength: 1, maxLength: 6 }),
        fc.uniqueArray(fc.constantFrom(...VOCABULARY, 'missing'), { minLength: 1, maxLength: 64 }),
      ),
      limit: fc.integer({ min: 1, max: 60 }),
      filter: fc.constantFrom(0, 2, 3),
      window: fc.constantFrom(undefined, 1, 3, 16),
      maxScore: fc.boolean(),
      // Every posting read term at a time (few postings), or MaxScore's windows.
      dense: fc.boolean(),
      scanRatio: fc.constantFrom(undefined, 0, 1e9),
      boost: fc.record({ text: fc.constantFrom(1, 2, 0.5), tags: fc.constantFrom(1, 3) }),
      matchedTerms: fc.boolean(),
      // Weighted terms (pseudo-relevance feedback): per term a weight and whether it counts toward the factor.
      weighted: fc.option(fc.array(fc.record({ weight: fc.oneof(fc.constant(1), fc.double({ min: 1e-3, max: 8, noNaN: true })), counts: fc.boolean() }), { minLength: 64, maxLength: 64 })),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

function build(scenario: Scenario): LexicalIndex {
  const index = new LexicalIndex({ stopWords: false, stem: false });
  const records: MemoryRecord[] = [];
  scenario.memories.forEach((m, i) => {
    // Copies make equal scores: ties must come out in the exhaustive scorer's order.
    for (let c = 0; c <= m.copies; c++) records.push(rec(`m${i}c${c}`, m.text.map(word).join(' '), m.tags.map((t) => t.map(word).join(' '))));
  });
  index.addAll(records);
  for (const i of scenario.discard) index.remove(records[i % records.length]!.id);
  for (const [i, us] of scenario.readd) index.addAll([rec(records[i % records.length]!.id, us.map(word).join(' '), [])]);
  if (!scenario.snapshot) return index;
  const restored = new LexicalIndex({ stopWords: false, stem: false });
  const state = index.state();
  const snapshot = encodeSnapshot(state, { settings: index.settingsKey, counter: 0 }, new Uint32Array(state.documentIds.size * 2));
  restored.restore(decodeSnapshot(snapshot).state);
  return restored;
}

describe('bm25TopKPruned: MaxScore pruning (or every posting, term at a time) with the exhaustive answer', () => {
  it('returns what bm25TopK returns: same ids, same scores (===), same order, ties included', () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const lexical = build(scenario);
        const index = adapterOf(lexical);
        for (const q of scenario.queries) {
          const bm25 = { k: 1.2, b: 0.7, d: 0.5, matchedTerms: q.matchedTerms };
          const terms = q.weighted ? q.terms.map((term, i) => ({ term, ...q.weighted![i]! })) : q.terms;
          const eligible = q.filter ? (id: string) => Number(id.slice(1, id.indexOf('c'))) % q.filter !== 0 : undefined;
          // Pruned first, while the postings may still hold discarded memories; then the reference; then pruned again (cached lists).
          const pruned = bm25TopKPruned(index, terms, q.boost, bm25, q.limit, eligible, { window: q.window, maxScore: q.maxScore, scanRatio: q.scanRatio, minPostings: -1, dense: q.dense });
          const reference = bm25TopK(index, terms, q.boost, bm25, q.limit, eligible);
          expect(pruned).toStrictEqual(reference);
          for (let i = 0; i < pruned.length; i++) expect(Object.is(pruned[i]!.score, reference[i]!.score)).toBe(true);
          expect(bm25TopKPruned(index, terms, q.boost, bm25, q.limit, eligible, { window: q.window, maxScore: q.maxScore, scanRatio: q.scanRatio, minPostings: -1, dense: q.dense })).toStrictEqual(reference);
        }
      }),
      { numRuns: runs(300) },
    );
  });

  it('stays exact while memories are added between searches (lists extended in place, their bounds widened)', () => {
    const batchesArb = fc.array(fc.array(memoryArb, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(scenarioArb, batchesArb, fc.nat(30), (scenario, batches, longer) => {
        const lexical = build(scenario);
        const index = adapterOf(lexical);
        let next = 0;
        for (const [round, batch] of [...batches, []].entries()) {
          for (const q of scenario.queries) {
            const bm25 = { k: 1.2, b: 0.7, d: 0.5, matchedTerms: q.matchedTerms };
            const eligible = q.filter ? (id: string) => Number(id.slice(1, id.indexOf('c'))) % q.filter !== 0 : undefined;
            const tuning = { window: q.window, maxScore: q.maxScore, scanRatio: q.scanRatio, minPostings: -1, dense: q.dense };
            expect(bm25TopKPruned(index, q.terms, q.boost, bm25, q.limit, eligible, tuning)).toStrictEqual(bm25TopK(index, q.terms, q.boost, bm25, q.limit, eligible));
          }
          // Some added memories are long: the average length rises and every cached bound must widen with it.
          lexical.addAll(batch.map((m) => rec(`n${next++}c0`, [...m.text, ...(round % 2 === 0 ? Array.from({ length: longer }, (_, i) => m.text[i % m.text.length]!) : [])].map(word).join(' '), [])));
        }
      }),
      { numRuns: runs(200) },
    );
  });

  it('an add extends the cached lists of the terms read next instead of copying them again', () => {
    const lexical = new LexicalIndex({ stopWords: false, stem: false });
    let seed = 3;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
    lexical.addAll(Array.from({ length: 10_000 }, (_, i) => rec(`m${i}`, Array.from({ length: 12 }, () => word(random())).join(' '), [])));
    const index = adapterOf(lexical);
    const terms = ['w0', 'w1', 'w2'];
    const bm25 = { k: 1.2, b: 0.7, d: 0.5 };
    const boost = { text: 1, tags: 1 };
    bm25TopKPruned(index, terms, boost, bm25, 10, undefined, { minPostings: -1 });
    for (let i = 0; i < 5; i++) {
      // Long memories (many distinct words) raise the average length, and so every posting's part.
      lexical.addAll([rec(`a${i}`, `w0 w1 w2 ${Array.from({ length: 400 }, (_, j) => `x${i}y${j}`).join(' ')}`, [])]);
      const before = { ...postingListCounters };
      const pruned = bm25TopKPruned(index, terms, boost, bm25, 10, undefined, { minPostings: -1 });
      expect(pruned).toStrictEqual(bm25TopK(index, terms, boost, bm25, 10));
      expect({ built: postingListCounters.built - before.built, extended: postingListCounters.extended - before.extended }).toEqual({ built: 0, extended: 3 });
      // Each list's bound still holds at the new average length.
      const fieldId = index.fieldIds.text!;
      const avg = index.averageFieldLengths[fieldId]!;
      for (const term of terms) {
        const postings = index.termPostings(term)!.get(fieldId)!;
        const list = postingCache(index).list(term, fieldId, postings)!;
        let exact = 0;
        postings.forEach((tf, doc) => (exact = Math.max(exact, 0.5 + (tf * 2.2) / (tf + 1.2 * (1 - 0.7 + (0.7 * index.fieldLengths.get(doc)![fieldId]!) / avg)))));
        expect(list.maxPart).toBeGreaterThanOrEqual(exact);
        expect(list.maxPartAvg).toBeGreaterThanOrEqual(avg);
      }
    }
    // A removal changes which documents are live: the lists are made again.
    lexical.remove('m1');
    const before = postingListCounters.built;
    expect(bm25TopKPruned(index, terms, boost, bm25, 10, undefined, { minPostings: -1 })).toStrictEqual(bm25TopK(index, terms, boost, bm25, 10));
    expect(postingListCounters.built - before).toBe(3);
  });

  it('weighted terms: weight 1 and counted is a plain term; a weight multiplies the term; only counted terms make the factor', () => {
    const index = new LexicalIndex({ stopWords: false, stem: false });
    index.addAll([rec('both', 'red fox runs', []), rec('one', 'red car', []), rec('other', 'blue fox', [])]);
    const params = { k: 1.2, b: 0.7, d: 0.5 };
    const boosts = { text: 1, tags: 1 };
    const plain = bm25TopK(adapterOf(index), ['red', 'fox'], boosts, params, 10);
    expect(bm25TopK(adapterOf(index), [{ term: 'red', weight: 1, counts: true }, 'fox'], boosts, params, 10)).toStrictEqual(plain);
    const single = (term: string) => new Map(bm25TopK(adapterOf(index), [term], boosts, params, 10).map((h) => [h.id, h.score]));
    const red = single('red');
    const fox = single('fox');
    // fox weighted 0.5 and not counted: 'both' matched one counted term, so no factor.
    const weighted = new Map(bm25TopK(adapterOf(index), ['red', { term: 'fox', weight: 0.5, counts: false }], boosts, params, 10).map((h) => [h.id, h.score]));
    expect(weighted.get('both')).toBeCloseTo(red.get('both')! + 0.5 * fox.get('both')!, 12);
    expect(weighted.get('other')).toBeCloseTo(0.5 * fox.get('other')!, 12);
    expect(weighted.get('one')).toBe(red.get('one'));
  });

  it('without the matched-terms factor, scores are the factor-on scores divided by the terms each memory matched', () => {
    const index = new LexicalIndex({ stopWords: false, stem: false });
    index.addAll([rec('both', 'red fox runs', []), rec('one', 'red car', []), rec('other', 'blue fox', [])]);
    const terms = ['red', 'fox'];
    const on = new Map(bm25TopK(adapterOf(index), terms, { text: 1, tags: 1 }, { k: 1.2, b: 0.7, d: 0.5 }, 10).map((h) => [h.id, h.score]));
    const off = bm25TopK(adapterOf(index), terms, { text: 1, tags: 1 }, { k: 1.2, b: 0.7, d: 0.5, matchedTerms: false }, 10);
    expect(off.map((h) => h.id).sort()).toEqual(['both', 'one', 'other']);
    for (const { id, score } of off) expect(score).toBeCloseTo(on.get(id)! / (id === 'both' ? 2 : 1), 12);
    const plain = new LexicalIndex({ stopWords: false, stem: false, matchedTermsFactor: false });
    plain.addAll([rec('both', 'red fox runs', []), rec('one', 'red car', []), rec('other', 'blue fox', [])]);
    expect(plain.search('red fox', 10)).toEqual(off);
    // Prefix matching goes through MiniSearch's own search: the factor is divided out there too.
    const prefixed = new LexicalIndex({ stopWords: false, stem: false, matchedTermsFactor: false, prefix: true });
    prefixed.addAll([rec('both', 'red fox runs', []), rec('one', 'red car', []), rec('other', 'blue fox', [])]);
    expect(prefixed.search('red fox', 10).map((h) => h.id)).toEqual(off.map((h) => h.id));
  });

  it('prunes: a common-term query over many memories scores few of them and can skip postings (and stays exact)', () => {
    const lexical = new LexicalIndex({ stopWords: false, stem: false });
    const records: MemoryRecord[] = [];
    let seed = 1;
    const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
    for (let i = 0; i < 20_000; i++) records.push(rec(`m${i}`, Array.from({ length: 12 }, () => word(random())).join(' '), []));
    lexical.addAll(records);
    const index = adapterOf(lexical);
    const terms = ['w0', 'w1', 'w2', 'w3'];
    const bm25 = { k: 1.2, b: 0.7, d: 0.5 };
    const boost = { text: 1, tags: 1 };
    let postings = 0;
    for (const term of terms) for (const list of index.termPostings(term)!.values()) postings += list.size;
    const before = { ...pruningCounters };
    const pruned = bm25TopKPruned(index, terms, boost, bm25, 50, undefined, { minPostings: -1, dense: false });
    const scored = pruningCounters.documentsScored - before.documentsScored;
    const read = pruningCounters.postingsRead - before.postingsRead;
    expect(pruned).toStrictEqual(bm25TopK(index, terms, boost, bm25, 50));
    // Only documents whose bound reaches the 50th score are scored; probing (scan ratio 0) also skips postings.
    expect(scored).toBeLessThan(records.length / 10);
    const probing = { ...pruningCounters };
    expect(bm25TopKPruned(index, terms, boost, bm25, 50, undefined, { scanRatio: 0, minPostings: -1, dense: false })).toStrictEqual(pruned);
    expect(pruningCounters.postingsRead - probing.postingsRead).toBeLessThan(postings * 0.8);
    expect(read).toBeLessThanOrEqual(postings);
  });

  it('breaks equal scores like the exhaustive scorer: first query term, then the field it matched first, then index order', () => {
    const lexical = new LexicalIndex({ stopWords: false, stem: false });
    // Same score for "x" in either field (one memory each, same lengths): the text match was seen first.
    lexical.addAll([rec('tagged', 'y', ['x']), rec('texted', 'x', ['y'])]);
    const index = adapterOf(lexical);
    const args = [['x'], { text: 1, tags: 1 }, { k: 1.2, b: 0.7, d: 0.5 }, 3] as const;
    const reference = bm25TopK(index, ...args);
    expect(reference.map((r) => r.id)).toEqual(['texted', 'tagged']);
    expect(reference[0]!.score).toBe(reference[1]!.score);
    expect(bm25TopKPruned(index, ...args, undefined, { minPostings: -1, dense: false })).toStrictEqual(reference);
    expect(bm25TopKPruned(index, ...args, undefined, { minPostings: -1, dense: true })).toStrictEqual(reference);
  });

  it('is what LexicalIndex.search returns, fresh and restored from a snapshot', () => {
    const records = ['the cat sat', 'a cat and a dog', 'dogs bark loudly', 'cats purr', 'cat cat dog'].map((text, i) => rec(`m${i}`, text, []));
    const index = new LexicalIndex();
    index.addAll(records);
    const expected = bm25TopK(adapterOf(index), index.queryTerms('cat dog'), { text: 1, tags: 1 }, { k: 1.2, b: 0.7, d: 0.5 }, 10);
    expect(index.search('cat dog', 10)).toStrictEqual(expected);
    const restored = new LexicalIndex();
    const state = index.state();
    restored.restore(decodeSnapshot(encodeSnapshot(state, { settings: index.settingsKey, counter: 0 }, new Uint32Array(state.documentIds.size * 2))).state);
    expect(restored.search('cat dog', 10)).toStrictEqual(expected);
  });
});
