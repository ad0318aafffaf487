/**
 * Exact top-k at int8 speed. Each row is kept a second time as int8 codes with its own scale (max |x| / 127)
 * and the norm of its rounding error. A search quantises the query the same way, gets every row's int8 dot
 * product from the SIMD kernel (a quarter of the float32 bytes), then rescores in float32 only the rows that
 * could still be in the top k:
 *
 *   |q·x − approx| ≤ ‖q − q̃‖·‖x̃‖ + ‖q‖·‖x − x̃‖ = e_q·(1 + e_x) + e_x  (Cauchy–Schwarz; q, x unit)
 *
 * 1. rescore the k best rows by approximate score: the k-th best exact score among them, T, is a lower bound of
 *    the true k-th best; 2. rescore every other row whose approx + bound ≥ T. No row of the true top k can be
 *    left out, so the answer is the exact scan's answer (same scores, same order): recall@10 is 1 by
 *    construction, not by tuning. Eligibility is checked only for rows that would enter the top k.
 * Where WebAssembly SIMD is missing, the exact float32 scan runs instead.
 */
import { createInt8Kernel, type Int8Kernel } from './int8-kernel.js';
import { TopK } from './topk.js';
import { dot, exactScan, type ScoredRow, type VectorIndex, type VectorScan } from './vector.js';

/** Rounding slack on the bound (float64 arithmetic on float32 data). */
const SLACK = 1e-6;

export class QuantizedScan implements VectorScan {
  private kernel: Int8Kernel | null | undefined;
  private dim = 0;
  /** Bytes per row: dim rounded up to 16 (the kernel's step), zero-padded. */
  private stride = 0;
  private capacity = 0;
  private scales = new Float32Array(0);
  private errors = new Float32Array(0);
  /** An upper bound of every row's rounding error (never lowered: stays a bound when rows go). */
  private maxError = 0;

  /** Memory layout: [query: stride bytes][rows: capacity × stride][dots: capacity × int32]. */
  private get rowsOffset(): number {
    return this.stride;
  }

  private get dotsOffset(): number {
    return this.stride + this.capacity * this.stride;
  }

  rowsChanged(index: VectorIndex, rows: readonly number[]): void {
    if (!this.ready(index)) return;
    this.reserve(index.size);
    const matrix = index.matrix;
    const codes = new Int8Array(this.kernel!.buffer, this.rowsOffset, this.capacity * this.stride);
    for (const row of rows) {
      if (row >= index.size) continue;
      const { scale, error } = quantize(matrix, row * this.dim, this.dim, codes, row * this.stride);
      this.scales[row] = scale;
      this.errors[row] = error;
      if (error > this.maxError) this.maxError = error;
    }
  }

  topK(index: VectorIndex, query: Float32Array, k: number, eligible?: (row: number) => boolean): ScoredRow[] {
    const size = index.size;
    if (!this.ready(index) || k <= 0 || size === 0) return exactScan.topK(index, query, k, eligible);
    this.reserve(size);
    const kernel = this.kernel!;
    const { dim, stride } = this;
    const queryCodes = new Int8Array(kernel.buffer, 0, stride);
    const { scale: queryScale, error: queryError } = quantize(query, 0, dim, queryCodes, 0);
    kernel.dots(this.rowsOffset, size, stride, 0, this.dotsOffset);
    const dots = new Int32Array(kernel.buffer, this.dotsOffset, size);
    const { scales, errors } = this;
    const matrix = index.matrix;
    const exact = (row: number) => dot(query, matrix, row * dim);
    const ok = (row: number) => !eligible || eligible(row);

    // 1. The k best by approximate score (eligible ones), rescored exactly. Rows that may matter in step 2 are
    //    noted on the way: step 2 needs approx ≥ T − widest, and T ≥ (final k-th approx) − widest ≥ (running
    //    k-th approx) − widest, so approx ≥ running − 2·widest keeps every one of them.
    const widest = this.maxError + queryError * (1 + this.maxError) + SLACK;
    const margin = 2 * widest;
    const approxTop = new TopK(k);
    const maybe: number[] = [];
    for (let row = 0; row < size; row++) {
      const approx = (dots[row] as number) * (scales[row] as number) * queryScale;
      const threshold = approxTop.threshold;
      if (approx + margin < threshold) continue;
      maybe.push(row);
      if (approx > threshold && ok(row)) approxTop.push(row, approx);
    }
    const result = new TopK(k);
    const seen = new Set<number>();
    for (const { index: row } of approxTop.drain()) {
      result.push(row, exact(row));
      seen.add(row);
    }
    // 2. Every other row that could still beat the k-th exact score.
    const floor = result.threshold;
    for (const row of maybe) {
      if (seen.has(row)) continue;
      const approx = (dots[row] as number) * (scales[row] as number) * queryScale;
      const error = errors[row] as number;
      if (approx + error + queryError * (1 + error) + SLACK < floor || !ok(row)) continue;
      result.push(row, exact(row));
    }
    return result.drain().map(({ index: row, score }) => ({ row, score }));
  }

  /** Sizes itself to the index on first use; false where there is no SIMD kernel. */
  private ready(index: VectorIndex): boolean {
    if (this.kernel === undefined || this.dim !== index.dim) {
      this.dim = index.dim;
      this.stride = Math.ceil(index.dim / 16) * 16;
      this.capacity = 0;
      this.kernel = createInt8Kernel(this.stride * 64);
      this.scales = new Float32Array(0);
      this.errors = new Float32Array(0);
      this.maxError = 0;
      if (this.kernel && index.size > 0) {
        // Rows written before this scan knew the index (or another dim): quantise them all now.
        const all = Array.from({ length: index.size }, (_, row) => row);
        this.reserve(index.size);
        this.rowsChanged(index, all);
      }
    }
    return this.kernel !== null;
  }

  private reserve(rows: number): void {
    if (rows <= this.capacity) return;
    const kernel = this.kernel!;
    const capacity = Math.max(rows, Math.ceil(this.capacity * 1.5), 64);
    // Codes keep their place (right after the query); the dots area behind them is scratch and just moves.
    kernel.grow(this.stride + capacity * (this.stride + 4));
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    const errors = new Float32Array(capacity);
    errors.set(this.errors);
    this.scales = scales;
    this.errors = errors;
    this.capacity = capacity;
  }
}

/** Writes int8 codes of `dim` floats at `from` into `codes` at `to`; returns the scale and ‖x − scale·codes‖. */
function quantize(source: Float32Array, from: number, dim: number, codes: Int8Array, to: number): { scale: number; error: number } {
  let max = 0;
  for (let i = 0; i < dim; i++) {
    const v = Math.abs(source[from + i] as number);
    if (v > max) max = v;
  }
  const scale = max / 127;
  let error = 0;
  for (let i = 0; i < dim; i++) {
    const v = source[from + i] as number;
    const code = scale > 0 ? Math.round(v / scale) : 0;
    codes[to + i] = code;
    const residual = v - code * scale;
    error += residual * residual;
  }
  return { scale, error: Math.sqrt(error) };
}
