import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, ErrorCode } from '../../../src/index.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { feedbackTerms, type FeedbackOptions } from '../../../src/search/feedback.js';
import type { WeightedTerm } from '../../../src/lexical/bm25-topk.js';
import type { MemoryRecord } from '../../../src/types.js';
import { memoryRecord } from '../helpers/records.js';
import { VIOLIN_NOTES } from '../helpers/feedback-fixture.js';
import { hostileQuery } from '../helpers/arbitraries.js';
import { runs } from '../helpers/tier.js';

const texts = VIOLIN_NOTES;

describe('stage feedback (pseudo-relevance feedback on the lexical leg)', () => {
  it('weights: the query terms at 1 and counted, the voted ones sharing n·(1 − λ)/λ by Σ tf/|d|·s/max, uncounted', () => {
    const index = new LexicalIndex();
    const records = texts.map((text, i) => memoryRecord(`m${i}`, { text }));
    index.addAll(records);
    const query = index.queryTerms('when do I practise');
    const voters = [{ record: records[0]!, score: 3 }, { record: records[3]!, score: 2 }];
    const terms = feedbackTerms(query, voters, index, { docs: 2, terms: 4, originalWeight: 0.5 });
    // Written out: tf/|d| per voter, each voter's weight s / 3.
    const votes = new Map<string, number>();
    for (const { record, score } of voters) {
      const ts = index.textTerms(record.text);
      for (const t of ts) votes.set(t, (votes.get(t) ?? 0) + (score / 3) / ts.length);
    }
    const best = [...votes].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 4);
    const total = best.reduce((s, [, v]) => s + v, 0);
    const share = (query.length * 0.5) / 0.5 / total;
    const expected = new Map(query.map((t) => [t, { term: t, weight: 1, counts: true }]));
    for (const [t, v] of best) {
      const own = expected.get(t);
      if (own) own.weight += v * share;
      else expected.set(t, { term: t, weight: v * share, counts: false });
    }
    expect(terms).toEqual([...expected.values()]);
    expect(terms.find((t) => t.term === index.termOfWord('violin'))?.counts).toBe(false);
    // originalWeight 1: the query alone.
    expect(feedbackTerms(query, voters, index, { docs: 2, terms: 4, originalWeight: 1 })).toEqual(query.map((term) => ({ term, weight: 1, counts: true })));
  });

  it('equals the naive reference (each voter’s text and tags joined, tokenised afresh) over any texts and tags', () => {
    // The reference: the weighted query written out from textTerms of `text \n tag \n tag…`, with no memo.
    const naive = (index: LexicalIndex, query: string[], voters: { record: MemoryRecord; score: number }[], options: FeedbackOptions) => {
      const top = voters.reduce((max, v) => Math.max(max, v.score), 0);
      const votes = new Map<string, number>();
      for (const { record, score } of voters) {
        const ts = index.textTerms([record.text, ...record.tags].join('\n'));
        if (ts.length === 0) continue;
        const tf = new Map<string, number>();
        for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
        for (const [t, c] of tf) votes.set(t, (votes.get(t) ?? 0) + (c / ts.length) * (score / top));
      }
      const best = [...votes].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, options.terms);
      const total = best.reduce((sum, [, v]) => sum + v, 0);
      const share = total > 0 ? (query.length * (1 - options.originalWeight)) / options.originalWeight / total : 0;
      const weights = new Map<string, WeightedTerm>(query.map((t) => [t, { term: t, weight: 1, counts: true }]));
      for (const [t, v] of best) {
        const w = v * share;
        if (!(w > 0)) continue;
        const own = weights.get(t);
        if (own) own.weight += w;
        else weights.set(t, { term: t, weight: w, counts: false });
      }
      return top > 0 && query.length > 0 && voters.length > 0 ? [...weights.values()] : [];
    };
    const index = new LexicalIndex();
    const text = fc.oneof(hostileQuery, fc.constantFrom(...VIOLIN_NOTES), fc.constantFrom('violin violin rosin', '東京の天気は晴れです', 'e\u0301t\u00e9', ''));
    const voter = fc.record({ text, tags: fc.array(fc.oneof(text, fc.constantFrom('violin', 'music')), { maxLength: 3 }), score: fc.double({ min: 0.01, max: 20, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(voter, { minLength: 1, maxLength: 6 }), fc.constantFrom('when do I practise the violin', 'rosin strings'), fc.integer({ min: 1, max: 12 }), (vs, q, terms) => {
        const voters = vs.map((v, i) => ({ record: memoryRecord(`m${i}`, { text: v.text, tags: v.tags }), score: v.score }));
        const query = index.queryTerms(q);
        const options = { docs: 6, terms, originalWeight: 0.5 };
        expect(feedbackTerms(query, voters, index, options)).toEqual(naive(index, query, voters, options));
      }),
      { numRuns: runs(300) },
    );
  });

  it('brings in what the first pass missed, shows it in the trace and in explain.feedback', async () => {
    const engine = await createEngine();
    await engine.add(texts.map((text, i) => ({ id: `m${i}`, text })));
    const plain = await engine.search('when do I practise', { k: 5, neighbours: false, mode: 'lexical' });
    expect(plain.hits.map((h) => h.id)).not.toContain('m1');
    expect(plain.trace.stages.map((s) => s.name)).not.toContain('feedback');
    const result = await engine.search('when do I practise', { k: 5, neighbours: false, mode: 'lexical', feedback: { docs: 1, terms: 10, originalWeight: 0.5 } });
    const names = result.trace.stages.map((s) => s.name);
    expect(names.indexOf('feedback')).toBe(names.indexOf('lexical') + 1);
    const stage = result.trace.stages.find((s) => s.name === 'feedback')!;
    expect(stage.note).toMatch(/violin/);
    // m1 shares no word with the query; "violin", voted by m0, finds it.
    const m1 = result.hits.find((h) => h.id === 'm1');
    expect(m1?.explain.feedback).toEqual({ before: null });
    expect(m1?.explain.bm25Rank).not.toBeNull();
    const m0 = result.hits.find((h) => h.id === 'm0')!;
    expect(m0.explain.bm25Rank).toBe(1);
    expect(m0.explain.feedback).toBeUndefined();
    await expect(engine.search('practise', { feedback: { docs: 0, terms: 5, originalWeight: 0.5 } })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
    await engine.close();
  });

  it('is skipped with a note when the lexical leg matches prefixes (MiniSearch scores those)', async () => {
    const engine = await createEngine({ lexical: { prefix: true } });
    await engine.add(texts.map((text, i) => ({ id: `m${i}`, text })));
    const result = await engine.search('practise', { mode: 'lexical', feedback: { docs: 10, terms: 20, originalWeight: 0.5 } });
    expect(result.trace.stages.find((s) => s.name === 'feedback')?.note).toMatch(/skipped/);
    expect(result.hits.every((h) => h.explain.feedback === undefined)).toBe(true);
    await engine.close();
  });
});
