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
import type { LexicalIndex, TermCounts } from '../lexical/lexical-index.js';
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
  tally.begin();
  for (const { record, score } of voters) {
    // In proportion to the score: RM3's exp(s − max) left the best hit the only voter, whose own score then
    // dwarfed the rest of the list (docs/quality.md, issue 28).
    tally.vote(record, score / top, lexical);
  }
  const voted = tally.best(options.terms);
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

/** Terms held in `Tally`'s slots before it starts over. */
const MAX_SLOTS = 1 << 16;

/**
 * The votes of one `feedbackTerms` call, v(t) = Σ (tf(t, d) / |d|) · p(d) summed voter by voter, each term in a slot
 * of a typed array rather than a Map entry (a long voter holds thousands of terms). Slots are kept across calls (with
 * each memoised text's, `TermCounts` from `LexicalIndex.termCounts`) and start over once there are `MAX_SLOTS`.
 */
class Tally {
  private slotOf = new Map<string, number>();
  private termAt: string[] = [];
  private generation = 0;
  private readonly slotsOfText = new WeakMap<TermCounts, { generation: number; slots: Int32Array }>();
  private stamp = new Int32Array(1024);
  private votes = new Float64Array(1024);
  /** Per slot, this voter's stamp and count (a record with tags: its text's and tags' counts added up). */
  private voterStamp = new Int32Array(1024);
  private voterCount = new Float64Array(1024);
  private touched: number[] = [];
  /** This call's stamp in `stamp`, and the last one given out. */
  private last = 0;
  private clock = 0;

  begin(): void {
    if (this.clock >= 0x7fff0000) {
      this.stamp.fill(0);
      this.voterStamp.fill(0);
      this.clock = 0;
    }
    if (this.slotOf.size > MAX_SLOTS) {
      this.slotOf = new Map();
      this.termAt = [];
      this.generation++;
    }
    this.touched = [];
    this.last = this.next();
  }

  /**
   * One voter at weight `p`: its text's and tags' terms counted as `textTerms` of them joined by line breaks counts
   * them (tokens never span a line break, so the parts' counts add up).
   */
  vote(record: MemoryRecord, p: number, lexical: Pick<LexicalIndex, 'termCounts'>): void {
    const text = lexical.termCounts(record.text);
    if (record.tags.length === 0) {
      if (text.length > 0) this.add(this.slots(text), text.counts, text.length, p);
      return;
    }
    const voter = this.next();
    const order: number[] = [];
    let length = 0;
    for (const part of [text, ...record.tags.map((tag) => lexical.termCounts(tag))]) {
      const slots = this.slots(part);
      for (let i = 0; i < slots.length; i++) {
        const slot = slots[i] as number;
        if (this.voterStamp[slot] !== voter) {
          this.voterStamp[slot] = voter;
          this.voterCount[slot] = 0;
          order.push(slot);
        }
        this.voterCount[slot] = (this.voterCount[slot] as number) + (part.counts[i] as number);
      }
      length += part.length;
    }
    if (length > 0) this.add(order, order.map((slot) => this.voterCount[slot] as number), length, p);
  }

  /**
   * The `n` best voted terms, best first; ties by term, so the query is the same whatever order the records' words
   * came in. A total order, so this is sorting all and taking the first n.
   */
  best(n: number): [string, number][] {
    const ranksBefore = (term: string, vote: number, other: [string, number]) => vote > other[1] || (vote === other[1] && term < other[0]);
    const best: [string, number][] = [];
    for (const slot of this.touched) {
      const term = this.termAt[slot] as string;
      const vote = this.votes[slot] as number;
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

  private add(slots: ArrayLike<number>, counts: ArrayLike<number>, length: number, p: number): void {
    const { stamp, votes, last } = this;
    for (let i = 0; i < slots.length; i++) {
      const slot = slots[i] as number;
      const share = ((counts[i] as number) / length) * p;
      if (stamp[slot] !== last) {
        stamp[slot] = last;
        votes[slot] = 0 + share;
        this.touched.push(slot);
      } else votes[slot] = (votes[slot] as number) + share;
    }
  }

  /** The slots of a text's terms, in its order. */
  private slots(counts: TermCounts): Int32Array {
    const held = this.slotsOfText.get(counts);
    if (held && held.generation === this.generation) return held.slots;
    const slots = new Int32Array(counts.terms.length);
    counts.terms.forEach((term, i) => {
      let slot = this.slotOf.get(term);
      if (slot === undefined) {
        slot = this.termAt.length;
        this.slotOf.set(term, slot);
        this.termAt.push(term);
      }
      slots[i] = slot;
    });
    this.grow(this.termAt.length);
    this.slotsOfText.set(counts, { generation: this.generation, slots });
    return slots;
  }

  private grow(size: number): void {
    if (this.stamp.length >= size) return;
    const capacity = Math.max(size, this.stamp.length * 2);
    const stamp = new Int32Array(capacity);
    stamp.set(this.stamp);
    const votes = new Float64Array(capacity);
    votes.set(this.votes);
    const voterStamp = new Int32Array(capacity);
    voterStamp.set(this.voterStamp);
    const voterCount = new Float64Array(capacity);
    voterCount.set(this.voterCount);
    this.stamp = stamp;
    this.votes = votes;
    this.voterStamp = voterStamp;
    this.voterCount = voterCount;
  }

  /** A stamp no slot holds yet (`begin` starts the stamps over long before they run out). */
  private next(): number {
    return ++this.clock;
  }
}

const tally = new Tally();

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
