import { describe, expect, it } from 'vitest';
import { createEngine, ErrorCode } from '../../../src/index.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { feedbackTerms } from '../../../src/search/feedback.js';
import { memoryRecord } from '../helpers/records.js';
import { VIOLIN_NOTES } from '../helpers/feedback-fixture.js';

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
