import fc from 'fast-check';
import MiniSearch from 'minisearch';
import { describe, expect, test } from 'vitest';
import { termTree, type TermTree } from '../../../src/lexical/term-tree.js';

/** MiniSearch's own tree, made by inserting the terms one by one (its SearchableMap is not exported). */
function insertedTree(terms: [string, number][]): TermTree<number> {
  const index = (new MiniSearch({ fields: ['text'] }) as unknown as { _index: { set(k: string, v: number): void; _tree: TermTree<number> } })._index;
  for (const [term, value] of terms) index.set(term, value);
  return index._tree;
}

/** The tree as nested arrays, so that the order of every node's entries is compared too. */
function layout(tree: TermTree<number> | number): unknown {
  return tree instanceof Map ? [...tree].map(([label, child]) => [label, layout(child)]) : tree;
}

const sortedUnique = (words: string[]) => [...new Set(words)].sort().map((w, i): [string, number] => [w, i]);

describe('termTree', () => {
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
      { numRuns: 500 },
    );
  });

  test('refuses terms out of order or repeated', () => {
    expect(() => termTree([['b', 1], ['a', 2]])).toThrow(/ascending/);
    expect(() => termTree([['a', 1], ['a', 2]])).toThrow(/ascending/);
  });
});
