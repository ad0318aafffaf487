/**
 * SIF's second step (Arora et al., 2017): remove from every sentence vector its projection on the first principal
 * component u of sentence vectors, v ← v − u uᵀv. The sentence vector (before normalisation) is a sum of rows and
 * the step is linear, so it can be baked into the table: row ← row − u uᵀrow, and zero rows stay zero.
 *
 * u is the top eigenvector of the second-moment matrix of sentence vectors (SIF's TruncatedSVD, uncentred). With no
 * corpus at build time, sentences are taken as n words drawn from the table's Zipf distribution (rows are in
 * frequency order): for the mean s of n independent rows, E[s sᵀ] = (1 − 1/n) μμᵀ + M / n, μ = Σ p r, M = Σ p r rᵀ.
 */

export interface CommonComponentOptions {
  /** Words per sentence n. */
  sentenceWords: number;
  /** Index of the first word row (rows before it, the special tokens, are left out). */
  firstWordRow: number;
}

/** Top eigenvector by power iteration from μ: plain arithmetic, a fixed number of steps, the same bits everywhere. */
export function commonComponent(rows: Float32Array, dim: number, options: CommonComponentOptions): Float64Array {
  const count = rows.length / dim;
  const words = count - options.firstWordRow;
  let harmonic = 0;
  for (let r = 1; r <= words; r++) harmonic += 1 / r;
  const mean = new Float64Array(dim);
  const moment = new Float64Array(dim * dim);
  for (let i = 0; i < words; i++) {
    const p = 1 / ((i + 1) * harmonic);
    const offset = (options.firstWordRow + i) * dim;
    for (let a = 0; a < dim; a++) {
      const x = rows[offset + a] as number;
      mean[a]! += p * x;
      for (let b = 0; b < dim; b++) moment[a * dim + b]! += p * x * (rows[offset + b] as number);
    }
  }
  const n = options.sentenceWords;
  const second = new Float64Array(dim * dim);
  for (let a = 0; a < dim; a++) {
    for (let b = 0; b < dim; b++) second[a * dim + b] = (1 - 1 / n) * mean[a]! * mean[b]! + moment[a * dim + b]! / n;
  }
  let u = unit(mean);
  for (let step = 0; step < 200; step++) {
    const next = new Float64Array(dim);
    for (let a = 0; a < dim; a++) for (let b = 0; b < dim; b++) next[a]! += second[a * dim + b]! * u[b]!;
    u = unit(next);
  }
  return u;
}

function unit(vector: Float64Array): Float64Array {
  let squares = 0;
  for (const x of vector) squares += x * x;
  const length = Math.sqrt(squares);
  return vector.map((x) => x / length);
}

/** row ← row − u (u·row), for every row. */
export function removeComponent(rows: Float32Array, dim: number, u: Float64Array): Float32Array {
  const out = new Float32Array(rows.length);
  for (let offset = 0; offset < rows.length; offset += dim) {
    let dot = 0;
    for (let k = 0; k < dim; k++) dot += (rows[offset + k] as number) * u[k]!;
    for (let k = 0; k < dim; k++) out[offset + k] = (rows[offset + k] as number) - dot * u[k]!;
  }
  return out;
}
