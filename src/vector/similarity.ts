/**
 * Cosine similarity of stored vectors, and a scale for it that means the same for every embedding model.
 *
 * Stored rows and queries are unit vectors, so cosine is a dot product (`normalize`, then `dot`). What a raw
 * cosine means depends on the model: averaged word vectors (the built-in GloVe-SIF model) put almost every pair
 * of sentences from one conversation close to 1, while a transformer spreads them far lower. A fixed threshold
 * ("≥ 0.95 is a near-duplicate") then either fires on most of a chat (GloVe) or means what it says (MiniLM).
 * So supersede and MMR measure similarity relative to the corpus:
 *
 *   calibrated(cos) = (cos − b) / (1 − b),   b = mean cosine between two different stored memories
 *
 * 1 stays 1 (identical), a typical unrelated pair of this store scores about 0. b comes from the running
 * sum of the unit vectors: Σ_{i≠j} vᵢ·vⱼ = |Σv|² − n, so it costs O(dim) per search. With fewer than
 * two memories, or a store whose memories are typically unrelated (b ≤ 0), raw cosine is used.
 */

/** Dot product of two equal-length vectors (the first `a.length` floats of b starting at `offset`). */
export function dot(a: Float32Array, b: Float32Array, offset = 0): number {
  let sum = 0;
  const n = a.length;
  let i = 0;
  // Four accumulators: the additions of one iteration do not wait on each other.
  let s1 = 0, s2 = 0, s3 = 0;
  for (; i + 3 < n; i += 4) {
    sum += (a[i] as number) * (b[offset + i] as number);
    s1 += (a[i + 1] as number) * (b[offset + i + 1] as number);
    s2 += (a[i + 2] as number) * (b[offset + i + 2] as number);
    s3 += (a[i + 3] as number) * (b[offset + i + 3] as number);
  }
  for (; i < n; i++) sum += (a[i] as number) * (b[offset + i] as number);
  return sum + s1 + s2 + s3;
}

/** A unit-length copy (a zero vector stays zero: its cosine to anything is 0). */
export function normalize(vector: ArrayLike<number>): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (let i = 0; i < out.length; i++) norm += (out[i] as number) * (out[i] as number);
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) / norm;
  return out;
}

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
