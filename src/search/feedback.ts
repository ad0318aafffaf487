/**
 * Stage `feedback` (search option `feedback`): pseudo-relevance feedback on the lexical leg, RM3-like (Lavrenko &
 * Croft 2001; Abdul-Jaleel et al. 2004). The caller's query's best `docs` lexical hits vote for the terms they hold,
 *   v(t) = Σ_d tf(t, d) / |d| · s(d) / max s,
 * and the lexical leg runs once more over the query's own terms at weight 1 plus the best `terms` voted terms sharing
 * n · (1 − originalWeight) / originalWeight in proportion to v (n: the query's terms), which is RM3's interpolation
 * λ = originalWeight scaled so that a memory matching only the query's words keeps its first-pass score. Its list
 * replaces the first pass's before fusion; the vector leg is untouched.
 *
 * Only the query's own terms count toward the matched-terms factor: counted, every memory holding two voted terms
 * would rank as a two-word match, which cost chat 0.04 of R@10 (docs/quality.md, issue 28).
 * Terms come from the records' text and tags through the index's own term processing (`LexicalIndex.termCounts`).
 */
import type { WeightedTerm } from '../lexical/bm25-topk.js';
import type { LexicalIndex } from '../lexical/lexical-index.js';
import type { MemoryRecord } from '../types.js';
import type { FusedCandidate } from './fuse.js';

export interface FeedbackOptions {
  /** First-pass lexical hits that vote: an integer from 1 to `MAX_FEEDBACK_DOCS`. */
  docs: number;
  /** Voted terms added (query terms among them only gain weight): an integer from 1 to `MAX_FEEDBACK_TERMS`. */
  terms: number;
  /** The query's share of the mix, RM3's λ: a number above 0 and at most 1 (1 changes nothing). */
  originalWeight: number;
}

export const MAX_FEEDBACK_DOCS = 100;
export const MAX_FEEDBACK_TERMS = 200;

type Item = { id: string; score: number };

export interface FeedbackResult {
  /** The lexical list after feedback, or null when the stage changed nothing (see `note`). */
  items: Item[] | null;
  /** The weighted query, best voted first. */
  terms: WeightedTerm[];
  voters: number;
  note: string;
}

/** The weighted query of `queryTerms` and the voters' records (best first, with their first-pass scores). */
export function feedbackTerms(
  queryTerms: readonly string[],
  voters: readonly { record: MemoryRecord; score: number }[],
  lexical: Pick<LexicalIndex, 'termCounts'>,
  options: FeedbackOptions,
): WeightedTerm[] {
  if (queryTerms.length === 0 || voters.length === 0) return [];
  const top = voters.reduce((max, v) => Math.max(max, v.score), 0);
  if (!(top > 0)) return [];
  const votes = new Map<string, number>();
  for (const { record, score } of voters) {
    const { counts: tf, length } = recordTermCounts(record, lexical);
    if (length === 0) continue;
    // In proportion to the score: RM3's exp(s − max) left the best hit the only voter, whose own score then
    // dwarfed the rest of the list (docs/quality.md, issue 28).
    const p = score / top;
    for (const [term, count] of tf) votes.set(term, (votes.get(term) ?? 0) + (count / length) * p);
  }
  const voted = bestVoted(votes, options.terms);
  const total = voted.reduce((sum, [, v]) => sum + v, 0);
  const share = total > 0 ? (queryTerms.length * (1 - options.originalWeight)) / options.originalWeight / total : 0;
  const weights = new Map<string, WeightedTerm>(queryTerms.map((term) => [term, { term, weight: 1, counts: true }]));
  for (const [term, v] of voted) {
    const w = v * share;
    if (!(w > 0)) continue;
    const own = weights.get(term);
    if (own) own.weight += w;
    else weights.set(term, { term, weight: w, counts: false });
  }
  return [...weights.values()];
}

/**
 * The `n` best voted terms, best first; ties by term, so the query is the same whatever order the records' words came
 * in. A total order, so selecting them is sorting all and taking the first n (long voters hold thousands of terms).
 */
function bestVoted(votes: ReadonlyMap<string, number>, n: number): [string, number][] {
  const ranksBefore = (term: string, vote: number, other: [string, number]) => vote > other[1] || (vote === other[1] && term < other[0]);
  const best: [string, number][] = [];
  for (const [term, vote] of votes) {
    if (best.length === n && !ranksBefore(term, vote, best[n - 1] as [string, number])) continue;
    let at = best.length === n ? n - 1 : best.length;
    while (at > 0 && ranksBefore(term, vote, best[at - 1] as [string, number])) {
      best[at] = best[at - 1] as [string, number];
      at--;
    }
    best[at] = [term, vote];
  }
  return best;
}

/**
 * The terms of a record's text and tags counted, as `textTerms` of them joined by line breaks counts them: tokens never
 * span a line break, so the parts' counts add up. Each part's from the memo (`LexicalIndex.termCounts`).
 */
function recordTermCounts(record: MemoryRecord, lexical: Pick<LexicalIndex, 'termCounts'>): { counts: ReadonlyMap<string, number>; length: number } {
  const text = lexical.termCounts(record.text);
  if (record.tags.length === 0) return text;
  const counts = new Map(text.counts);
  let length = text.length;
  for (const tag of record.tags) {
    const own = lexical.termCounts(tag);
    for (const [term, count] of own.counts) counts.set(term, (counts.get(term) ?? 0) + count);
    length += own.length;
  }
  return { counts, length };
}

/**
 * Runs the stage: `firstPass` is the caller's query's lexical list, `records` reads the voters (already loaded).
 * `pool` and `eligible` as the lexical leg's.
 */
export function runFeedback(
  query: string,
  firstPass: readonly Item[],
  records: (id: string) => MemoryRecord | undefined,
  lexical: LexicalIndex,
  options: FeedbackOptions,
  pool: number,
  eligible: ((id: string) => boolean) | undefined,
): FeedbackResult {
  const queryTerms = lexical.queryTerms(query);
  const voters = firstPass.slice(0, options.docs).flatMap((item) => {
    const record = records(item.id);
    return record ? [{ record, score: item.score }] : [];
  });
  const terms = feedbackTerms(queryTerms, voters, lexical, options);
  if (terms.length === 0) return { items: null, terms, voters: voters.length, note: 'no first-pass hits' };
  const items = lexical.searchWeighted(terms, pool, eligible);
  if (!items) return { items: null, terms, voters: voters.length, note: 'skipped: prefix or fuzzy matching searches through MiniSearch' };
  const before = new Set(firstPass.map((item) => item.id));
  const added = items.filter((item) => !before.has(item.id)).length;
  const shown = [...terms].sort((a, b) => b.weight - a.weight).map((t) => `${t.term}${t.counts ? '*' : ''} ${t.weight.toFixed(2)}`);
  return { items, terms, voters: voters.length, note: `${voters.length} voters, ${added} new in the lexical list; ${shown.join(', ')} (* the query's)` };
}

/**
 * Each candidate's lexical rank before feedback (1-based, null: the first pass did not return it), for
 * `explain.feedback`: on every candidate whose lexical rank feedback changed, brought in or dropped.
 */
export function markFeedback(candidates: readonly FusedCandidate[], firstPass: readonly Item[]): FusedCandidate[] {
  const rankBefore = new Map(firstPass.map((item, i) => [item.id, i + 1]));
  return candidates.map((c) => {
    const before = rankBefore.get(c.id) ?? null;
    return before === c.rank.lexical ? c : { ...c, feedback: { before } };
  });
}
