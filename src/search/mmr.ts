/**
 * Maximal Marginal Relevance with near-duplicate suppression, over candidates given best first. Relevance is each
 * score divided by the best score (0..1, the same scale as cosine; fused scores need not be, RRF's are small, and
 * would otherwise be drowned by the novelty term). Repeatedly:
 *   - drop every remaining candidate whose similarity to a picked one is ≥ duplicateThreshold;
 *   - pick the one maximising  mmr = λ·relevance − (1−λ)·max similarity to those already picked
 *     (ties: the better-ranked candidate).
 * Stops after k picks. At most O(k·n) similarity calls, far fewer in practice: a candidate's max similarity is
 * brought up to date only when it could be the next pick (lazy greedy).
 */
import type { DiversityOptions } from './options.js';

export interface MmrPick {
  /** Index into the candidate list. */
  index: number;
  mmr: number;
}

interface MmrResult {
  picked: MmrPick[];
  /**
   * Candidates found to be near-duplicates of a pick while selecting. Evaluation is lazy (see mmrSelect), so a
   * near-duplicate that could never have been picked anyway may go unexamined and unlisted.
   */
  duplicates: number[];
}

export function mmrSelect(
  scores: readonly number[],
  k: number,
  options: DiversityOptions,
  similarity: (a: number, b: number) => number,
  /** Indices chosen by an earlier phase: they count for novelty and duplicate drop, and are not returned. */
  preselected: readonly number[] = [],
): MmrResult {
  const { lambda, duplicateThreshold } = options;
  const n = scores.length;
  const best = scores.reduce((max, s) => Math.max(max, s), 0);
  const relevance = scores.map((s) => (best > 0 ? s / best : 0));
  const maxSim = new Float64Array(n).fill(-Infinity);
  const alive = new Uint8Array(n).fill(1);
  /** Indices that count for novelty, in the order they were chosen: the preselected ones, then the picks. */
  const chosen: number[] = [];
  /** How many of `chosen` each candidate's maxSim has seen. */
  const seen = new Int32Array(n);
  const picked: MmrPick[] = [];
  const duplicates: number[] = [];
  // Lazy greedy: a stale maxSim is a lower bound of the true one, so its mmr is an upper bound of the true mmr
  // (the formula is monotone in novelty when 1 − λ > 0). A candidate is brought up to date only when its bound
  // leads, and the pick is the leader once it is up to date: the same pick, mmr and tie-break (lower index) as
  // updating every candidate after every pick, with far fewer similarity calls. With λ = 1 novelty weighs nothing
  // but an infinite one still turns mmr into NaN, so every candidate is brought up to date each round.
  const lazy = 1 - lambda > 0;
  const mmrOf = (i: number) => {
    const novelty = chosen.length === 0 ? 0 : (maxSim[i] as number);
    return lambda * (relevance[i] as number) - (1 - lambda) * novelty;
  };
  /** Accounts for the choices candidate i has not seen; false when it is a near-duplicate of one (then dropped). */
  const catchUp = (i: number): boolean => {
    for (let c = seen[i] as number; c < chosen.length; c++) {
      const sim = similarity(chosen[c] as number, i);
      if (sim >= duplicateThreshold) {
        alive[i] = 0;
        duplicates.push(i);
        return false;
      }
      if (sim > (maxSim[i] as number)) maxSim[i] = sim;
    }
    seen[i] = chosen.length;
    return true;
  };
  for (const index of preselected) alive[index] = 0;
  chosen.push(...preselected);
  const bound = new Float64Array(n);
  while (picked.length < k) {
    for (let i = 0; i < n; i++) {
      if (alive[i] && !lazy) catchUp(i);
      if (alive[i]) bound[i] = mmrOf(i);
    }
    let choice = -1;
    for (;;) {
      choice = -1;
      let leading = -Infinity;
      for (let i = 0; i < n; i++) {
        if (alive[i] && (bound[i] as number) > leading) {
          choice = i;
          leading = bound[i] as number;
        }
      }
      if (choice < 0 || seen[choice] === chosen.length) break;
      if (catchUp(choice)) bound[choice] = mmrOf(choice);
    }
    if (choice < 0) break;
    alive[choice] = 0;
    picked.push({ index: choice, mmr: bound[choice] as number });
    chosen.push(choice);
  }
  return { picked, duplicates };
}
