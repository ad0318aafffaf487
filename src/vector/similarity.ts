/**
 * Similarity between two memories, on a scale that means the same for every embedding model.
 *
 * Raw cosine does not: averaged word vectors (the built-in GloVe-SIF model) put almost every pair of
 * sentences from one conversation between 0.85 and 0.99, while a transformer spreads them around 0.1-0.3.
 * A fixed threshold ("≥ 0.95 is a near-duplicate") then either fires on most of a chat (GloVe: 70% of the
 * turns of a LoCoMo conversation have an earlier turn at raw cosine ≥ 0.95) or means what it says
 * (MiniLM). So supersede and MMR measure similarity relative to the corpus:
 *
 *   calibrated(cos) = (cos − b) / (1 − b),   b = mean cosine between two different stored memories
 *
 * 1 stays 1 (identical), a typical unrelated pair of this store scores about 0. b comes from the running
 * sum of the unit vectors: Σ_{i≠j} vᵢ·vⱼ = |Σv|² − n, so it costs O(dim) per search. With fewer than
 * two memories, or a store whose memories are typically unrelated (b ≤ 0), raw cosine is used.
 */

/** Mean cosine over pairs of distinct rows, from the sum of `n` unit vectors. 0 when n < 2. */
export function meanPairwiseCosine(sum: ArrayLike<number>, n: number): number {
  if (n < 2) return 0;
  let squared = 0;
  for (let i = 0; i < sum.length; i++) squared += (sum[i] as number) * (sum[i] as number);
  return (squared - n) / (n * (n - 1));
}

/**
 * Cosine rescaled so that the baseline maps to 0 and 1 stays 1, floored at −1 (a cosine's range): with a
 * baseline near 1 an unusual memory would otherwise score −5 and look infinitely novel to MMR.
 */
export function calibratedCosine(cosine: number, baseline: number): number {
  if (!(baseline > 0)) return cosine;
  if (cosine >= 1 || baseline >= 1) return cosine >= 1 ? 1 : 0;
  return Math.max(-1, (cosine - baseline) / (1 - baseline));
}
