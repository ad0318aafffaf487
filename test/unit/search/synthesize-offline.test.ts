import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { contentWords, feedbackQueries, feedbackTerms, type FeedbackSource } from '../../../src/search/synthesize-offline.js';
import { VIOLIN_NOTES } from '../helpers/feedback-fixture.js';

const texts = VIOLIN_NOTES;
const index = new LexicalIndex();
index.addAll(texts.map((text, i) => ({ id: `m${i}`, text, tags: [], priority: 1, pinned: false, createdAt: 0, accessCount: 0 })));
const source: FeedbackSource = { term: (w) => index.termOfWord(w), idf: (terms) => index.termIdf(terms) };

describe('offline synthesis (pseudo-relevance feedback)', () => {
  it('keeps the query words the index keeps, one per term', () => {
    expect(contentWords('What instrument do I practise? practising!', source)).toEqual(['instrument', 'practise']);
  });

  it('ranks terms by Σ p(d) · tf/|d| · idf over the feedback hits, leaving out the query’s own terms', () => {
    const docs = [
      { text: texts[0]!, score: 2 },
      { text: texts[3]!, score: 1 },
    ];
    // The formula written out over the index's own terms.
    const weight = new Map<string, number>();
    const surface = new Map<string, string>();
    for (const { text, score } of docs) {
      const words = text.toLowerCase().split(/[^a-z]+/).filter((w) => w.length >= 3 && index.termOfWord(w));
      for (const word of words) {
        const term = index.termOfWord(word);
        if (term === index.termOfWord('practise')) continue;
        if (!surface.has(term)) surface.set(term, word);
        const idf = index.termIdf([term]).get(term) ?? 0;
        weight.set(term, (weight.get(term) ?? 0) + (score / 3) * (1 / words.length) * idf);
      }
    }
    const expected = [...weight.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 6).map(([t]) => surface.get(t));
    const terms = feedbackTerms('what do I practise', docs, source);
    expect(terms).toEqual(expected);
    expect(terms).toContain('violin');
    expect(terms).not.toContain('practise');
  });

  it('makes queries of the content words plus two expansion terms each, at most three', () => {
    const docs = texts.slice(0, 4).map((text, i) => ({ text, score: 4 - i }));
    const queries = feedbackQueries('what do I practise', docs, source);
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.length).toBeLessThanOrEqual(3);
    for (const query of queries) {
      expect(query.startsWith('practise ')).toBe(true);
      expect(query.split(' ')).toHaveLength(3);
    }
    expect(feedbackQueries('what do I practise', [], source)).toEqual([]);
  });

  it("runs as a second pass in the engine: no language model, and the new queries' hits join the first pass", async () => {
    const engine = await createEngine();
    await engine.add(texts.map((text, i) => ({ id: `m${i}`, text })));
    const result = await engine.search('when do I practise', { synthesis: 'offline', k: 5, neighbours: false });
    const names = result.trace.stages.map((s) => s.name);
    expect(names.indexOf('synthesize')).toBeGreaterThan(names.indexOf('lexical'));
    expect(names.filter((n) => n === 'lexical')).toHaveLength(2);
    expect(result.trace.queries.slice(1).every((q) => q.source === 'offline' && q.weight === 1)).toBe(true);
    expect(result.trace.queries.length).toBeGreaterThan(1);
    expect(result.trace.llmCalls).toBe(0);
    // m1 shares no word with the query; the feedback term "violin" from m0 finds it.
    const plain = await engine.search('when do I practise', { k: 5, neighbours: false });
    expect(plain.hits.map((h) => h.id)).not.toContain('m1');
    expect(result.hits.map((h) => h.id)).toContain('m1');
  });
});
