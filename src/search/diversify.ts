/**
 * Maximal Marginal Relevance with near-duplicate suppression.
 * Candidates come best first. Relevance is each score divided by the best score (0..1, the same scale as
 * cosine; raw fused scores are ~0.03 and would otherwise be drowned by the novelty term). Repeatedly:
 *   - drop every remaining candidate whose similarity to a picked one is ≥ duplicateThreshold;
 *   - pick the one maximising  mmr = λ·relevance − (1−λ)·max similarity to those already picked
 *     (ties: the better-ranked candidate).
 * Stops after k picks. O(k·n) similarity calls: the max similarity is updated incrementally.
 */
import type { DiversityOptions } from './options.js';

export interface MmrPick {
  /** Index into the candidate list. */
  index: number;
  mmr: number;
}

export interface MmrResult {
  picked: MmrPick[];
  /** Candidates dropped as near-duplicates of a picked one. */
  duplicates: number[];
}

export function mmrSelect(
  scores: readonly number[],
  k: number,
  options: DiversityOptions,
  similarity: (a: number, b: number) => number,
): MmrResult {
  const { lambda, duplicateThreshold } = options;
  const best = scores.reduce((max, s) => Math.max(max, s), 0);
  const relevance = scores.map((s) => (best > 0 ? s / best : 0));
  const maxSim = new Float64Array(scores.length).fill(-Infinity);
  const alive = scores.map(() => true);
  const picked: MmrPick[] = [];
  const duplicates: number[] = [];
  while (picked.length < k) {
    let choice = -1;
    let choiceMmr = -Infinity;
    for (let i = 0; i < scores.length; i++) {
      if (!alive[i]) continue;
      const novelty = picked.length === 0 ? 0 : (maxSim[i] as number);
      const mmr = lambda * (relevance[i] as number) - (1 - lambda) * novelty;
      if (mmr > choiceMmr) {
        choice = i;
        choiceMmr = mmr;
      }
    }
    if (choice < 0) break;
    alive[choice] = false;
    picked.push({ index: choice, mmr: choiceMmr });
    for (let i = 0; i < scores.length; i++) {
      if (!alive[i]) continue;
      const sim = similarity(choice, i);
      if (sim >= duplicateThreshold) {
        alive[i] = false;
        duplicates.push(i);
      } else if (sim > (maxSim[i] as number)) {
        maxSim[i] = sim;
      }
    }
  }
  return { picked, duplicates };
}
