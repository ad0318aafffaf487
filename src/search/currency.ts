/**
 * The `currency` stage: among memories that are versions of one fact, the newer comes first (docs/api.md, "Which
 * memory is true now"). A fact that changes ("the deadline moved to 5 April", "we moved hosting to Cloudflare
 * Pages") is written later in words much like the first version's, so both match a question about it and nothing in
 * their scores says which is current: both carry the same date within one session, and decay cannot part them.
 *
 * Two candidates near the top are taken for versions of one fact when the later one (in a thread by the thread's
 * order, elsewhere by `createdAt`: thread-index.ts `isLater`) holds every query term the earlier one holds, scores
 * at least `ratio` of it, and says something else (the same statement is the duplicate drop's). The later one is
 * then placed just above the earlier one, which stays just below it with `explain.newerVersion` naming it.
 * Similarity orders here; nothing is hidden.
 */
import type { ScoredCandidate } from './adjust.js';
import type { CurrencyOptions } from './options.js';
import { statementKey } from '../lexical/statement.js';

export interface CurrencyParts {
  /** The query's processed terms (LexicalIndex.queryTerms). */
  queryTerms: readonly string[];
  /** A memory text's processed terms (LexicalIndex.textTerms). */
  textTerms(text: string): readonly string[];
  /** Whether memory `b` is a later version than memory `a` could be (ThreadIndex.isLater). */
  isLater(a: string, b: string): boolean;
}

/** The candidates with every later version placed above the earlier one it matches; `placed` counts the moves. */
export function orderByCurrency(list: readonly ScoredCandidate[], k: number, options: CurrencyOptions, parts: CurrencyParts): { scored: ScoredCandidate[]; placed: number } {
  const head = Math.min(list.length, Math.max(3 * k, k + 20));
  if (head < 2 || parts.queryTerms.length === 0) return { scored: list.slice(), placed: 0 };
  const query = new Set(parts.queryTerms);
  const top = list.slice(0, head).map((s) => ({ ...s }));
  const covers = top.map((s) => {
    const held = new Set<string>();
    for (const term of parts.textTerms(s.record.text)) if (query.has(term)) held.add(term);
    return held;
  });
  const keys: (string | undefined)[] = [];
  const keyOf = (i: number) => (keys[i] ??= statementKey((top[i] as ScoredCandidate).record.text));
  const versionPair = (older: number, newer: number): boolean => {
    const a = covers[older] as Set<string>;
    const b = covers[newer] as Set<string>;
    if (a.size === 0 || b.size < a.size) return false;
    for (const term of a) if (!b.has(term)) return false;
    const first = top[older] as ScoredCandidate;
    const second = top[newer] as ScoredCandidate;
    return second.score >= options.ratio * first.score && parts.isLater(first.record.id, second.record.id) && keyOf(older) !== keyOf(newer);
  };
  // Positions into `top`, best first; each move lifts one later version above one earlier one, at most `head` moves.
  const order = top.map((_, i) => i);
  let placed = 0;
  for (let moves = 0; moves < head; moves++) {
    let moved = false;
    for (let at = 0; at < order.length && !moved; at++) {
      const older = order[at] as number;
      for (let below = at + 1; below < order.length; below++) {
        const newer = order[below] as number;
        if (!versionPair(older, newer)) continue;
        order.splice(below, 1);
        order.splice(at, 0, newer);
        const lifted = top[newer] as ScoredCandidate;
        lifted.score = above((top[older] as ScoredCandidate).score);
        (top[older] as ScoredCandidate).newerVersion = lifted.record.id;
        placed++;
        moved = true;
        break;
      }
    }
    if (!moved) break;
  }
  // A lift may have passed a candidate scored just above the earlier version: scores follow the new order.
  for (let i = order.length - 2; i >= 0; i--) {
    const current = top[order[i] as number] as ScoredCandidate;
    const next = top[order[i + 1] as number] as ScoredCandidate;
    if (current.score <= next.score) current.score = above(next.score);
  }
  return { scored: [...order.map((i) => top[i] as ScoredCandidate), ...list.slice(head)], placed };
}

/** The smallest step above `score` that survives a sort (and keeps a zero score positive). */
function above(score: number): number {
  return score + Math.max(Math.abs(score) * 1e-9, 1e-12);
}
