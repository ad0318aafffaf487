/**
 * Thread neighbours. Memories that share a thread (`meta.thread`: a chat session, a document, a meeting)
 * form a sequence ordered by `createdAt`, ties kept in the order the engine first saw them (the order they
 * were added, or loaded from the store). In a conversation the answer to a question often sits one or two
 * turns away from the words that match it ("did you paint that?" / "yes, last year"), so a strong hit lends
 * a bounded bonus to its neighbours: the `neighbours` stage (Memsense's "turn support").
 *
 * Memories without a thread (a notes app rather than a chat) form one more sequence, by time. With support over
 * time on, each lends to and borrows from the memories written just before and after it in the same sitting (no
 * step between consecutive ones longer than `timeGapMs`, and none of zero); on the LoCoMo dev split with threads
 * dropped and a minute between turns this takes R@10 from 0.646 to 0.737, the threaded result. A batch stored at
 * one instant is no sitting: on BEIR NFCorpus imported in one call, support over its (meaningless) order put 894
 * unrelated documents in 3,230 top-10 places.
 */
import type { FusedCandidate } from './fuse.js';
import type { ThreadIndex } from './thread-index.js';

export interface NeighbourOptions {
  /** How many places either side of a hit receive its support. */
  window: number;
  /** Bonus lent to a neighbour at distance d: weight × (lender's score) / d. Below 1, a neighbour never outranks its lender on the bonus alone. */
  weight: number;
  /** Only the best `lenders` candidates lend. */
  lenders: number;
  /**
   * Memories without `meta.thread` lend to and borrow from their neighbours in time: the other memories without a
   * thread, by createdAt, ties by arrival (the order `timeline` uses), within `timeGapMs`. Memories in a thread are
   * unaffected. Default `NEIGHBOURS_BY_TIME` (true).
   */
  time?: boolean;
  /**
   * Neighbours in time are only those reached without crossing a step longer than this between consecutive
   * memories, or one of zero: notes written in one sitting support each other, notes from another day or one
   * imported batch do not. Default
   * `NEIGHBOURS_TIME_GAP_MS` (30 minutes); Infinity for no limit.
   */
  timeGapMs?: number;
}

/** Whether memories without a thread take neighbour support over time when the options do not say. */
export const NEIGHBOURS_BY_TIME = true;
/** The longest step between consecutive memories without a thread that neighbour support crosses: 30 minutes (a session). */
export const NEIGHBOURS_TIME_GAP_MS = 30 * 60_000;

/** The longest step within a sitting: `neighbours.timeGapMs`, the default when unset or neighbour support is off (decay reads sittings too). */
export function sittingGapMs(options: NeighbourOptions | false): number {
  return (options !== false ? options.timeGapMs : undefined) ?? NEIGHBOURS_TIME_GAP_MS;
}

export interface Lent {
  /** Added to the candidate's fused score. */
  bonus: number;
  /** The hit it came from. */
  from: string;
}

/**
 * Bonuses for neighbours of the best candidates (`scored` best first). Each neighbour takes the largest
 * bonus offered, never a sum, so it is bounded by weight × the best lender's score however many hits
 * surround it.
 */
export function neighbourBonuses(
  scored: readonly { id: string; score: number }[],
  threads: ThreadIndex,
  options: NeighbourOptions,
): Map<string, Lent> {
  const lent = new Map<string, Lent>();
  if (options.weight <= 0 || options.window < 1) return lent;
  const byTime = options.time ?? NEIGHBOURS_BY_TIME;
  for (const { id, score } of scored.slice(0, options.lenders)) {
    if (!(score > 0)) continue;
    for (const neighbour of threads.neighbours(id, options.window, byTime, options.timeGapMs ?? NEIGHBOURS_TIME_GAP_MS)) {
      const bonus = (options.weight * score) / neighbour.distance;
      const current = lent.get(neighbour.id);
      if (!current || bonus > current.bonus) lent.set(neighbour.id, { bonus, from: id });
    }
  }
  return lent;
}

/**
 * The `neighbours` stage: adds the bonuses to the fused scores. A neighbour that no leg returned joins as a
 * new candidate carrying only its bonus; the filter stage after this one still applies to it.
 */
export function supportNeighbours(fused: readonly FusedCandidate[], threads: ThreadIndex, options: NeighbourOptions): FusedCandidate[] {
  const lent = neighbourBonuses(fused.map((c) => ({ id: c.id, score: c.fused })), threads, options);
  if (lent.size === 0) return fused.slice();
  const out = fused.map((candidate) => {
    const support = lent.get(candidate.id);
    if (!support) return candidate;
    lent.delete(candidate.id);
    return { ...candidate, fused: candidate.fused + support.bonus, neighbour: { from: support.from, bonus: support.bonus } };
  });
  for (const [id, support] of lent) {
    out.push({ id, fused: support.bonus, rank: { lexical: null, vector: null }, legScore: { lexical: null, vector: null }, neighbour: { from: support.from, bonus: support.bonus } });
  }
  return out.sort((a, b) => b.fused - a.fused);
}
