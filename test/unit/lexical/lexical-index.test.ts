import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LexicalIndex, lengthNormalisation } from '../../../src/lexical/lexical-index.js';
import { decodeSnapshot, documentHashes, encodeSnapshot } from '../../../src/lexical/snapshot.js';
import { hostileQuery } from '../helpers/arbitraries.js';
import { runs } from '../helpers/tier.js';
import { memoryRecord } from '../helpers/records.js';

const rec = (id: string, text: string, tags: string[] = []) => memoryRecord(id, { text, tags });

const corpus = [
  rec('auth', 'Fix the auth middleware bug: tokens expire too early', ['backend']),
  rec('deploy', 'We deploy the frontend every Friday afternoon'),
  rec('stop', 'the and of it is was'),
  rec('tagged', 'Call the plumber', ['house', 'urgent']),
];

describe('lexical leg (MiniSearch BM25)', () => {
  const index = new LexicalIndex();
  index.addAll(corpus);

  it('ranks by BM25 over text and tags', () => {
    expect(index.search('auth middleware', 10).map((r) => r.id)).toEqual(['auth']);
    expect(index.search('urgent', 10).map((r) => r.id)).toEqual(['tagged']);
    expect(index.search('backend tokens', 10)[0]!.id).toBe('auth');
  });

  it('matches a word however Unicode spells it: decomposed accents, full-width letters, ligatures, zero-width characters', () => {
    const spelled = new LexicalIndex();
    spelled.addAll([
      rec('cafe', 'Meet at the caf\u00e9 on Rue Cler'),
      rec('wide', '\uff43\uff4f\uff46\uff46\uff45\uff45 beans from the market'),
      rec('hidden', 'rotate the pass\u200bword every quarter'),
      rec('ligature', 'the \ufb01nal invoice'),
    ]);
    expect(spelled.search('cafe\u0301', 10).map((r) => r.id)).toEqual(['cafe']);
    expect(spelled.search('coffee', 10).map((r) => r.id)).toEqual(['wide']);
    expect(spelled.search('password', 10).map((r) => r.id)).toEqual(['hidden']);
    expect(spelled.search('final', 10).map((r) => r.id)).toEqual(['ligature']);
    expect(spelled.search('\uff50\uff41\uff53\uff53\u00ad\uff57\uff4f\uff52\uff44', 10).map((r) => r.id)).toEqual(['hidden']);
    expect(spelled.queryTerms('Caf\u00e9')).toEqual(spelled.queryTerms('Cafe\u0301'));
  });

  it('drops English stop words at index and query time', () => {
    expect(index.queryTerms('What is the auth bug?')).toEqual(['auth', 'bug']);
    expect(index.search('the and of it', 10)).toEqual([]);
  });

  it('sanitises any query: operators, quotes, emoji, control characters never throw', () => {
    for (const q of ['fix the auth-middleware bug', 'auth AND (bug OR "x") NOT -y*', '🔥🔥 auth 🚀', '\u0000\u0007auth\uD800', '((((', '"', '***', '']) {
      expect(() => index.search(q, 10)).not.toThrow();
    }
    expect(index.search('fix the auth-middleware bug', 10)[0]!.id).toBe('auth');
    expect(index.search('auth AND (bug OR "x")', 10)[0]!.id).toBe('auth');
    expect(index.search('\u0000auth\uD800', 10)[0]!.id).toBe('auth');
    fc.assert(
      fc.property(hostileQuery, (q) => {
        const results = index.search(q, 5);
        expect(results.length).toBeLessThanOrEqual(5);
      }),
      { numRuns: runs(300) },
    );
  });

  it('bounds the work of a huge query: distinct terms, capped', () => {
    const terms = index.queryTerms(Array.from({ length: 5000 }, (_, i) => `word${i} auth auth`).join(' '));
    expect(terms.length).toBe(64);
    expect(new Set(terms).size).toBe(64);
    expect(index.queryTerms('x '.repeat(1_000_000) + 'auth')).not.toContain('auth'); // beyond maxQueryChars
  });

  it('eligibility is applied inside the leg: the limit counts only eligible memories', () => {
    const many = new LexicalIndex();
    many.addAll(Array.from({ length: 30 }, (_, i) => rec(`m${i}`, `apple ${'pie '.repeat(i % 5)}`)));
    const eligible = (id: string) => Number(id.slice(1)) % 3 === 0;
    const results = many.search('apple', 5, eligible);
    expect(results).toHaveLength(5);
    expect(results.every((r) => eligible(r.id))).toBe(true);
  });

  it('replaces and removes documents', () => {
    const idx = new LexicalIndex();
    idx.addAll([rec('a', 'banana bread'), rec('b', 'banana split')]);
    idx.addAll([rec('a', 'carrot cake')]);
    expect(idx.search('banana', 10).map((r) => r.id)).toEqual(['b']);
    expect(idx.search('carrot', 10).map((r) => r.id)).toEqual(['a']);
    idx.remove('b');
    idx.remove('missing');
    expect(idx.search('banana', 10)).toEqual([]);
    expect(idx.size).toBe(1);
    expect(idx.has('a')).toBe(true);
  });

  it('accepts a custom term processor (after lowercasing and stop words) and custom stop words', () => {
    const stem = (t: string) => t.replace(/(ing|ed|s)$/, '');
    const idx = new LexicalIndex({ stem: false, processTerm: stem });
    idx.addAll([rec('a', 'Painted fences'), rec('b', 'the painting')]);
    expect(idx.search('paints', 10).map((r) => r.id).sort()).toEqual(['a', 'b']);
    expect(idx.queryTerms('The Fences')).toEqual(['fence']);

    const keepAll = new LexicalIndex({ stopWords: false });
    keepAll.addAll([rec('a', 'to be or not to be')]);
    expect(keepAll.search('to be', 10).map((r) => r.id)).toEqual(['a']);

    const custom = new LexicalIndex({ stopWords: ['fences'] });
    custom.addAll([rec('a', 'painted fences')]);
    expect(custom.search('fences', 10)).toEqual([]);
    expect(custom.search('the painted', 10).map((r) => r.id)).toEqual(['a']);
  });

  it('stems with Porter2 by default, so inflections meet; stem: false indexes words as written', () => {
    const idx = new LexicalIndex();
    idx.addAll([rec('a', 'Painted fences'), rec('b', 'the painting'), rec('c', 'adopted a puppy')]);
    expect(idx.search('paints', 10).map((r) => r.id).sort()).toEqual(['a', 'b']);
    expect(idx.search('adoption', 10).map((r) => r.id)).toEqual(['c']);
    expect(idx.queryTerms('The Fences')).toEqual(['fenc']);
    const exact = new LexicalIndex({ stem: false });
    exact.addAll([rec('a', 'Painted fences'), rec('b', 'the painting')]);
    expect(exact.search('paints', 10)).toEqual([]);
    expect(exact.settingsKey).not.toBe(idx.settingsKey);
  });

  it('termCounts: textTerms counted (first appearance order), memoised per text, over any text', () => {
    const idx = new LexicalIndex();
    const piece = fc.oneof(hostileQuery, fc.constantFrom('Painted fences', '東京の天気は晴れです', 'caf\u0065\u0301', '\n', 'the the THE', 'ﬁnal'));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const text = pieces.join(' ');
        const terms = idx.textTerms(text);
        const counts = new Map<string, number>();
        for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
        const got = idx.termCounts(text);
        expect(got.terms).toEqual([...counts.keys()]);
        expect([...got.counts]).toEqual([...counts.values()]);
        expect(got.length).toBe(terms.length);
        // The same text (another string of it too) reads the memo.
        expect(idx.termCounts(pieces.join(' '))).toBe(got);
      }),
      { numRuns: runs(300) },
    );
  });
});

describe("BM25's b: 'auto' from the spread of text lengths", () => {
  it('0.7 for lengths alike, 1 from a coefficient of variation of 0.8, in steps of 0.05, never down as the spread grows', () => {
    expect(lengthNormalisation(0)).toBe(0.7);
    expect(lengthNormalisation(0.56)).toBe(0.7); // LoCoMo's turns
    expect(lengthNormalisation(0.7)).toBe(0.85);
    expect(lengthNormalisation(0.8)).toBe(1);
    expect(lengthNormalisation(3)).toBe(1);
    fc.assert(fc.property(fc.double({ min: 0, max: 5, noNaN: true }), fc.double({ min: 0, max: 5, noNaN: true }), (a, b) => {
      const [lo, hi] = a < b ? [a, b] : [b, a];
      expect(lengthNormalisation(lo)).toBeLessThanOrEqual(lengthNormalisation(hi));
      expect(Math.round(lengthNormalisation(a) * 20)).toBeCloseTo(lengthNormalisation(a) * 20, 9);
    }));
  });

  it('the spread kept through adds, replacements, removals, a restore and a clear equals one counted afresh (naive reference)', async () => {
    const word = fc.constantFrom('apple', 'river', 'stone', 'cloud', 'ember', 'garnet', 'harbour', 'pine');
    const op = fc.oneof(
      fc.record({ add: fc.integer({ min: 0, max: 9 }), words: fc.array(word, { minLength: 1, maxLength: 40 }) }),
      fc.record({ remove: fc.integer({ min: 0, max: 9 }) }),
      fc.constant({ restore: true as const }),
      fc.constant({ clear: true as const }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
        const index = new LexicalIndex();
        const live = new Map<string, string>();
        index.lengthSpread(); // counted from here on, incrementally
        for (const o of ops) {
          if ('add' in o) {
            const text = o.words.join(' ');
            index.addAll([rec(`m${o.add}`, text)]);
            live.set(`m${o.add}`, text);
          } else if ('remove' in o) {
            index.remove(`m${o.remove}`);
            live.delete(`m${o.remove}`);
          } else if ('restore' in o) {
            const records = new Map([...live].map(([id, text]) => [id, rec(id, text)]));
            const bytes = encodeSnapshot(index.state(), { settings: index.settingsKey, counter: 0 }, await documentHashes(index.state().documentIds, records));
            const copy = new LexicalIndex();
            copy.restore(decodeSnapshot(bytes).state);
            expect(copy.lengthSpread()).toBeCloseTo(index.lengthSpread(), 12);
          } else {
            index.clear();
            live.clear();
          }
          const lengths = [...live.values()].map((t) => new Set(index.textTerms(t)).size); // MiniSearch counts distinct terms
          const mean = lengths.reduce((x, y) => x + y, 0) / Math.max(1, lengths.length);
          const sd = Math.sqrt(lengths.reduce((x, y) => x + (y - mean) ** 2, 0) / Math.max(1, lengths.length));
          expect(index.lengthSpread()).toBeCloseTo(lengths.length < 2 || mean === 0 ? 0 : sd / mean, 9);
        }
      }),
      { numRuns: runs(100) },
    );
  });
});
