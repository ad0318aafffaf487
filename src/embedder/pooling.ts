/**
 * From model outputs to one unit vector per text: pooling token states over the attention mask, Matryoshka
 * truncation, L2 normalisation, and merging the chunks of a long text. Sums run in float64.
 */
import type { Pooling } from './options.js';

/**
 * One vector per sequence of `hidden` ([batch, sequence, dim], row-major), unnormalised. 'mean': over the tokens the
 * mask keeps; 'cls': the first kept token; 'lasttoken': the last kept token. Reading the mask makes 'cls' and
 * 'lasttoken' right with left and right padding alike. A sequence the mask keeps nothing of pools to zeros.
 */
export function poolTokens(data: ArrayLike<number>, dims: readonly number[], mask: ArrayLike<number | bigint>, pooling: Pooling): Float64Array[] {
  const [batch, sequence, dim] = dims as [number, number, number];
  const vectors: Float64Array[] = [];
  for (let b = 0; b < batch; b++) {
    const sum = new Float64Array(dim);
    const kept: number[] = [];
    for (let s = 0; s < sequence; s++) if (Number(mask[b * sequence + s]) !== 0) kept.push(s);
    const rows = pooling === 'mean' ? kept : kept.length === 0 ? [] : [pooling === 'cls' ? (kept[0] as number) : (kept.at(-1) as number)];
    for (const s of rows) {
      const offset = (b * sequence + s) * dim;
      for (let d = 0; d < dim; d++) sum[d]! += data[offset + d] as number;
    }
    vectors.push(sum);
  }
  return vectors;
}

/** The rows of a [batch, dim] output (the model's own `sentence_embedding`). */
export function outputRows(data: ArrayLike<number>, dims: readonly number[]): Float64Array[] {
  const [batch, dim] = dims as [number, number];
  return Array.from({ length: batch }, (_, b) => Float64Array.from({ length: dim }, (_, d) => data[b * dim + d] as number));
}

/** The first `dimensions` values (all when undefined), scaled to unit length; zeros (or non-finite) stay zeros. */
export function truncateNormalize(vector: ArrayLike<number>, dimensions = vector.length): Float64Array {
  const out = new Float64Array(dimensions);
  let squares = 0;
  for (let d = 0; d < dimensions; d++) squares += (vector[d] as number) ** 2;
  const norm = Math.sqrt(squares);
  if (norm > 0 && Number.isFinite(norm)) for (let d = 0; d < dimensions; d++) out[d] = (vector[d] as number) / norm;
  return out;
}

/**
 * One text's vector from its chunks' unit vectors: their mean weighted by each chunk's tokens (a short tail counts
 * for what it holds), renormalised. One chunk is itself.
 */
export function mergeChunks(chunks: readonly Float64Array[], weights: readonly number[]): Float32Array {
  if (chunks.length === 1) return Float32Array.from(chunks[0] as Float64Array);
  const sum = new Float64Array((chunks[0] as Float64Array).length);
  chunks.forEach((chunk, i) => {
    for (let d = 0; d < sum.length; d++) sum[d]! += (chunk[d] as number) * (weights[i] as number);
  });
  return Float32Array.from(truncateNormalize(sum));
}
