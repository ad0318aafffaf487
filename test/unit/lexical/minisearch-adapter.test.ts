/** The one test file that names MiniSearch's private fields: it checks the adapter against them. */
import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, it, test, vi } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { hasMiniSearch7Shape, miniSearchIndex, type MiniSearchInternals } from '../../../src/lexical/minisearch-adapter.js';
import { termTree, type TermTree } from '../../../src/lexical/term-tree.js';
import { runs } from '../helpers/tier.js';
import { memoryRecord } from '../helpers/records.js';

interface Doc {
  id: string;
  text: string;
  tags: string;
}

/** MiniSearch 7's private fields, and those of its term index this test reads. */
type Internals = MiniSearchInternals & { _index: { set(term: string, value: unknown): void; _tree: TermTree<unknown> } };

const internals = (search: MiniSearch<Doc>) => search as unknown as Internals;
const refusal = expect.objectContaining({ name: 'EngramError', code: ErrorCode.SNAPSHOT_INVALID });
const rec = (id: string, text: string, tags: string[] = []) => memoryRecord(id, { text, tags });

function indexed(): MiniSearch<Doc> {
  const search = new MiniSearch<Doc>({ fields: ['text', 'tags'], storeFields: [], autoVacuum: false });
  search.addAll([
    { id: 'a', text: 'apple apple pear', tags: 'fruit' },
    { id: 'b', text: 'pear plum', tags: '' },
    { id: 'c', text: 'apple', tags: 'fruit red' },
  ]);
  search.discard('a');
  return search;
}

describe('shape check', () => {
  it('passes on the installed MiniSearch', () => {
    const search = new MiniSearch({ fields: ['text'] });
    expect(hasMiniSearch7Shape(search)).toBe(true);
    expect(miniSearchIndex(search)).not.toBeNull();
    expect(miniSearchIndex(search), 'one adapter per instance').toBe(miniSearchIndex(search));
  });

  it('refuses any other shape: the callers then take search() and refuse snapshots', () => {
    expect(miniSearchIndex({} as never)).toBeNull();
    const notAMap = Object.assign(indexed(), { _documentIds: { 1: 'b' } });
    expect(hasMiniSearch7Shape(notAMap)).toBe(false);
    expect(miniSearchIndex(notAMap as never)).toBeNull();
    // Own fields only: no removeTerm (a prototype method).
    const withoutRemoveTerm = { ...indexed() };
    expect(hasMiniSearch7Shape(withoutRemoveTerm)).toBe(false);
    expect(miniSearchIndex(withoutRemoveTerm as never)).toBeNull();
    expect(hasMiniSearch7Shape(Object.assign(indexed(), { _index: {} }))).toBe(false);
    expect(hasMiniSearch7Shape(Object.assign(indexed(), { _nextId: '3' }))).toBe(false);
  });
});

describe('MiniSearchIndex reads', () => {
  it('are MiniSearch’s own maps and values', () => {
    const search = indexed();
    const m = internals(search);
    const index = miniSearchIndex(search)!;
    expect(index.documentCount).toBe(m._documentCount);
    expect(index.documentCount).toBe(2);
    expect(index.dirtCount).toBe(1);
    expect(index.fieldIds).toBe(m._fieldIds);
    expect(index.averageFieldLengths).toBe(m._avgFieldLength);
    expect(index.documentIds).toBe(m._documentIds);
    expect([...index.documentIds]).toEqual([[1, 'b'], [2, 'c']]); // live documents only
    expect(index.fieldLengths).toBe(m._fieldLength);
    expect(index.termPostings('apple')).toBe(m._index.get('apple'));
    expect(index.termPostings('missing')).toBeUndefined();
  });

  it('drops one occurrence of a discarded document at a time, as removeTerm does', () => {
    const search = indexed();
    const index = miniSearchIndex(search)!;
    const text = index.fieldIds.text!;
    expect(index.termPostings('apple')!.get(text)!.get(0)).toBe(2);
    index.dropDiscardedOccurrence(text, 0, 'apple');
    expect(index.termPostings('apple')!.get(text)!.get(0)).toBe(1);
    index.dropDiscardedOccurrence(text, 0, 'apple');
    expect(index.termPostings('apple')!.get(text)!.has(0)).toBe(false);
    index.dropDiscardedOccurrence(text, 0, 'pear');
    expect([...index.termPostings('pear')!.get(text)!.keys()]).toEqual([1]);
  });
});

describe('state and replaceState', () => {
  it('state() is MiniSearch’s state; it refuses stored fields, which a snapshot does not carry', () => {
    const search = indexed();
    const m = internals(search);
    const state = miniSearchIndex(search)!.state();
    expect(state.documentIds).toBe(m._documentIds);
    expect(state.fieldLength).toBe(m._fieldLength);
    expect(state.terms).toBe(m._index);
    expect([state.documentCount, state.nextId, state.dirtCount, state.fieldIds, state.avgFieldLength]).toEqual([
      m._documentCount, m._nextId, m._dirtCount, m._fieldIds, m._avgFieldLength,
    ]);
    const stored = new MiniSearch<Doc>({ fields: ['text'], storeFields: ['text'] });
    stored.add({ id: 'a', text: 'apple', tags: '' });
    expect(() => miniSearchIndex(stored)!.state()).toThrow(refusal);
  });

  it('property: state() → restore() into a fresh index gives identical search results, removals included', () => {
    const words = ['apple', 'pear', 'kiwi', 'plum', 'fig'];
    const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' '));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 20 }), fc.array(fc.nat(25)), (texts, removed) => {
        const original = new LexicalIndex();
        original.addAll(texts.map((t, i) => rec(`m${i}`, t, i % 2 ? [words[i % words.length]!] : [])));
        for (const i of removed) original.remove(`m${i}`);
        const state = original.state();
        const terms = [...state.terms].sort(([a], [b]) => (a < b ? -1 : 1));
        const restored = new LexicalIndex();
        restored.restore({ ...state, terms });
        const m = internals((restored as unknown as { search_: MiniSearch<Doc> }).search_);
        expect(new Map([...m._idToShortId].map(([id, shortId]) => [shortId, id]))).toEqual(state.documentIds);
        expect(restored.size).toBe(original.size);
        for (const q of [...words, 'apple pear', 'fig kiwi plum', 'missing']) expect(restored.search(q, 10), q).toEqual(original.search(q, 10));
      }),
      { numRuns: runs(100) },
    );
  });

  it('replaceState refuses other fields, an id twice and terms out of order', () => {
    const source = miniSearchIndex(indexed())!.state();
    const terms = [...source.terms].sort(([a], [b]) => (a < b ? -1 : 1));
    const fresh = () => miniSearchIndex(new MiniSearch<Doc>({ fields: ['text', 'tags'], storeFields: [] }))!;
    expect(() => fresh().replaceState({ ...source, terms })).not.toThrow();
    expect(() => miniSearchIndex(new MiniSearch<Doc>({ fields: ['text'] }))!.replaceState({ ...source, terms })).toThrow(/other fields/);
    const twice = new Map([[1, 'b'], [2, 'b']]);
    expect(() => fresh().replaceState({ ...source, documentIds: twice, terms })).toThrow(/one id twice/);
    expect(() => fresh().replaceState({ ...source, terms: terms.slice().reverse() })).toThrow(/ascending/);
    for (const state of [{ documentIds: twice }, { terms: terms.slice().reverse() }]) {
      expect(() => fresh().replaceState({ ...source, terms, ...state })).toThrow(refusal);
    }
  });
});

/** MiniSearch's own tree, made by inserting the terms one by one (its SearchableMap is not exported). */
function insertedTree(terms: [string, number][]): TermTree<number> {
  const index = internals(new MiniSearch({ fields: ['text'] }))._index;
  for (const [term, value] of terms) index.set(term, value);
  return index._tree as TermTree<number>;
}

/** The tree as nested arrays, so that the order of every node's entries is compared too. */
function layout(tree: TermTree<number> | number): unknown {
  return tree instanceof Map ? [...tree].map(([label, child]) => [label, layout(child)]) : tree;
}

const sortedUnique = (words: string[]) => [...new Set(words)].sort().map((w, i): [string, number] => [w, i]);

describe('termTree: the tree MiniSearch’s term index holds', () => {
  test('builds the tree MiniSearch makes by inserting terms in ascending order, entry order included', () => {
    const terms = sortedUnique(['a', 'ab', 'abc', 'abd', 'b', 'ba', 'bab', 'bb', 'ü', 'üx', '🙂', '🙂a', 'z']);
    expect(layout(termTree(terms))).toEqual(layout(insertedTree(terms)));
    expect(layout(termTree([]))).toEqual([]);
  });

  test('property: any set of terms (shared prefixes, astral characters) gives the same tree as insertion', () => {
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'é', '🙂'), minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(fc.array(word, { maxLength: 60 }), (words) => {
        const terms = sortedUnique(words);
        expect(layout(termTree(terms))).toEqual(layout(insertedTree(terms)));
      }),
      { numRuns: runs(500) },
    );
  });
});

describe('when the installed MiniSearch has other internals', () => {
  it('LexicalIndex searches through search() with the same results and refuses snapshots', async () => {
    const records = ['the cat sat', 'a cat and a dog', 'dogs bark loudly', 'cats purr', 'a dog, a cat, a bird'].map((t, i) => rec(`m${i}`, t, i % 2 ? ['pets'] : []));
    const expected = new LexicalIndex();
    expected.addAll(records);
    const snapshotState = expected.state();
    vi.resetModules();
    vi.doMock('minisearch', async (importOriginal) => {
      const { default: Real } = await importOriginal<typeof import('minisearch')>();
      // Works as MiniSearch does, but keeps its average field lengths in an object rather than an array.
      class Other<T> extends Real<T> {
        constructor(options: ConstructorParameters<typeof Real<T>>[0]) {
          super(options);
          this._avgFieldLength = {} as unknown as number[];
        }
      }
      return { default: Other };
    });
    try {
      const adapter = await import('../../../src/lexical/minisearch-adapter.js');
      const lexical = await import('../../../src/lexical/lexical-index.js');
      expect(adapter.miniSearchIndex(new MiniSearch({ fields: ['text'] }))).toBeNull(); // the start-up check failed
      const index = new lexical.LexicalIndex();
      index.addAll(records);
      for (const q of ['cat', 'dog pets', 'bird cat', 'loudly', 'purr']) expect(index.search(q, 10), q).toEqual(expected.search(q, 10));
      expect(() => index.state()).toThrow(refusal);
      const terms = [...snapshotState.terms].sort(([a], [b]) => (a < b ? -1 : 1));
      expect(() => index.restore({ ...snapshotState, terms })).toThrow(refusal);
    } finally {
      vi.doUnmock('minisearch');
      vi.resetModules();
    }
  });
});
