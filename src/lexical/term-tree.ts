/**
 * MiniSearch keeps its terms in a radix tree (a SearchableMap's): each node a Map from edge labels to child nodes,
 * with a term's data under the '' key of the node where it ends. Inserting every term one by one on a restore is
 * slow; terms in ascending order build the same tree in one pass. minisearch-adapter.ts hands the tree to
 * MiniSearch (and checks at start-up that MiniSearch serves it).
 */
import { EngramError, ErrorCode } from '../errors.js';

export type TermTree<V> = Map<string, TermTree<V> | V>;

/**
 * The tree MiniSearch makes by inserting `terms` in this order. They must be in strictly ascending order (by UTF-16
 * code units, as `<` compares): then every split happens at the newest branch, so the one-pass build matches
 * insertion exactly, the order of each node's entries included.
 */
export function termTree<V>(terms: readonly (readonly [string, V])[]): TermTree<V> {
  for (let i = 1; i < terms.length; i++) {
    if (!((terms[i - 1] as readonly [string, V])[0] < (terms[i] as readonly [string, V])[0])) {
      throw new EngramError(ErrorCode.SNAPSHOT_INVALID, 'term tree: terms not in ascending order');
    }
  }
  const term = (i: number) => (terms[i] as readonly [string, V])[0];
  // The node for terms[lo, hi), which share their first `depth` characters.
  const build = (lo: number, hi: number, depth: number): TermTree<V> => {
    const node: TermTree<V> = new Map();
    let i = lo;
    if (term(i).length === depth) node.set('', (terms[i++] as readonly [string, V])[1]);
    while (i < hi) {
      const first = term(i);
      const char = first[depth];
      let j = i + 1;
      while (j < hi && term(j)[depth] === char) j++;
      // The branch's label: what its first and last terms (so all of them) share from here on.
      const last = term(j - 1);
      const limit = Math.min(first.length, last.length);
      let end = depth + 1;
      while (end < limit && first[end] === last[end]) end++;
      node.set(first.slice(depth, end), build(i, j, end));
      i = j;
    }
    return node;
  };
  return terms.length === 0 ? new Map() : build(0, terms.length, 0);
}
