/**
 * Top-k at int8 speed. Each row is kept a second time as int8 codes with its own scale (max |x| / 127) and the
 * norm of its rounding error. A search quantises the query the same way, gets every row's int8 dot product from
 * the SIMD kernel (a quarter of the float32 bytes), then rescores in float32 only the rows that could still be
 * in the top k:
 *
 *   |q·x − approx| ≤ ‖q − q̃‖·‖x̃‖ + ‖q‖·‖x − x̃‖ = e_q·(1 + e_x) + e_x  (Cauchy–Schwarz; q, x unit)
 *
 * 1. rescore the k best rows by approximate score: the k-th best exact score among them, T, is a lower bound of
 *    the true k-th best; 2. rescore every other row whose approx + bound ≥ T. No row of the true top k can be
 *    left out, so the int8 scan answers as the exact scan does (same rows, same scores, same order), by
 *    construction, not by tuning. Eligibility is checked only for rows that would enter the top k.
 *
 * Only the 1-bit prefilter is approximate. It is on by default and runs in topK once the index holds
 * `prefilterMinRows` rows (default 10,000) of at least `prefilterMinDim` dims (default 256): sign codes
 * (sign-codes.ts) pick a shortlist by Hamming distance and the int8 scan above runs on the shortlist alone, so a
 * top-k row left out of it is missed. `prefilterMinRows: false` keeps topK exact; rowsAbove never prefilters.
 * Where WebAssembly SIMD is missing, the exact float32 scan runs instead (and nothing is prefiltered).
 */
import { exactRowsAbove, exactScan, RowsAboveCollector } from './exact-scan.js';
import { createInt8Kernel, groupBytes, interleaveQueries, type Int8Kernel } from './int8-kernel.js';
import type { RowsAbove, ScoredRow, VectorRows, VectorScan } from './scan.js';
import { SignCodes } from './sign-codes.js';
import { dot } from './similarity.js';
import { TopK } from '../util/topk.js';

/** Rounding slack on the bound (float64 arithmetic on float32 data). */
const SLACK = 1e-6;
/** Queries per pass of rowsAbove over the rows (their codes stay in cache next to each row). */
const QUERY_BLOCK = 32;
/** Rows per kernel call of rowsAbove: bounds its scratch (QUERY_BLOCK × ROW_TILE int32 dot products, 1 MB). */
const ROW_TILE = 8192;

/** When the approximate 1-bit prefilter runs, and how many rows it keeps (the recall of the defaults: docs/bench.md). */
export interface QuantizedScanOptions {
  /**
   * From this many rows on, topK prefilters: the int8 scan with its exact rescoring runs on the shortlist only.
   * Below it, and when a filter leaves fewer than k shortlisted rows, the int8 scan reads every row and is exact.
   * `false` never prefilters. Default 10,000: below that the int8 scan reads little enough memory that the
   * prefilter does not pay.
   */
  prefilterMinRows?: number | false;
  /** Vectors shorter than this are never prefiltered: fewer sign bits rank too coarsely. Default 256. */
  prefilterMinDim?: number;
  /** Shortlist size: the largest of this, k and `size × prefilterShortlistShare`. Default 1,000. */
  prefilterShortlist?: number;
  /** Default 1/20: the shortlist grows with the index, so recall does not fall as the index grows. */
  prefilterShortlistShare?: number;
}

export const defaultQuantizedScanOptions: Required<QuantizedScanOptions> = {
  prefilterMinRows: 10_000,
  prefilterMinDim: 256,
  prefilterShortlist: 1_000,
  prefilterShortlistShare: 1 / 20,
};

export class QuantizedScan implements VectorScan {
  private readonly options: Required<QuantizedScanOptions>;
  private readonly signs = new SignCodes();
  private readonly tails = new TailNorms();

  constructor(options: QuantizedScanOptions = {}) {
    this.options = { ...defaultQuantizedScanOptions, ...options };
  }

  private kernel: Int8Kernel | null | undefined;
  private dim = 0;
  /** Bytes per row: dim rounded up to 16 (the kernel's step), zero-padded. */
  private stride = 0;
  private capacity = 0;
  private scales = new Float32Array(0);
  private errors = new Float32Array(0);
  /** An upper bound of every row's rounding error (never lowered: stays a bound when rows go). */
  private maxError = 0;

  /**
   * Memory layout: [query: stride bytes][rows: capacity × stride][dots: capacity × int32][list: capacity × int32],
   * then rowsAbove's scratch (manyOffset), which grows the memory itself: keep it last.
   */
  private get rowsOffset(): number {
    return this.stride;
  }

  private get dotsOffset(): number {
    return this.stride + this.capacity * this.stride;
  }

  private get listOffset(): number {
    return this.dotsOffset + this.capacity * 4;
  }

  /** Scratch of rowsAbove after the layout above: [queries: QUERY_BLOCK / 4 groups (groupBytes)][dots: QUERY_BLOCK × ROW_TILE × int32]. */
  private get manyOffset(): number {
    return this.listOffset + this.capacity * 4;
  }

  rowsChanged(index: VectorRows, rows: readonly number[]): void {
    this.signs.rowsChanged(index, rows);
    this.tails.rowsChanged(index, rows);
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

  topK(index: VectorRows, query: Float32Array, k: number, eligible?: (row: number) => boolean): ScoredRow[] {
    const size = index.size;
    if (!this.ready(index) || k <= 0 || size === 0) return exactScan.topK(index, query, k, eligible);
    this.reserve(size);
    const kernel = this.kernel!;
    const queryCodes = new Int8Array(kernel.buffer, 0, this.stride);
    const quantized = quantize(query, 0, this.dim, queryCodes, 0);
    const shortlist = this.shortlist(index, query, k);
    if (shortlist) {
      new Int32Array(kernel.buffer, this.listOffset, shortlist.length).set(shortlist);
      kernel.dotsAt(this.rowsOffset, this.listOffset, shortlist.length, this.stride, 0, this.dotsOffset);
      const found = this.bestOf(index, query, quantized, k, shortlist, shortlist.length, eligible);
      if (found.length === k) return found;
    }
    kernel.dots(this.rowsOffset, size, this.stride, 0, this.dotsOffset);
    return this.bestOf(index, query, quantized, k, null, size, eligible);
  }

  /**
   * The exact top k among `count` candidates (rows `candidates[i]`, or rows 0..count) whose int8 dot products
   * the kernel just wrote, in candidate order, to the dots area.
   */
  private bestOf(
    index: VectorRows,
    query: Float32Array,
    { scale: queryScale, error: queryError }: Quantized,
    k: number,
    candidates: Int32Array | null,
    count: number,
    eligible?: (row: number) => boolean,
  ): ScoredRow[] {
    const dots = new Int32Array(this.kernel!.buffer, this.dotsOffset, count);
    const { scales, errors, dim } = this;
    const matrix = index.matrix;
    const exact = (row: number) => dot(query, matrix, row * dim);
    const ok = (row: number) => !eligible || eligible(row);
    const rowAt = (i: number) => (candidates ? (candidates[i] as number) : i);

    // 1. The k best by approximate score (eligible ones), rescored exactly. Candidates that may matter in step 2
    //    are noted on the way: step 2 needs approx ≥ T − widest, and T ≥ (final k-th approx) − widest ≥ (running
    //    k-th approx) − widest, so approx ≥ running − 2·widest keeps every one of them.
    const widest = this.maxError + queryError * (1 + this.maxError) + SLACK;
    const margin = 2 * widest;
    const approxTop = new TopK(k);
    const maybe: number[] = [];
    for (let i = 0; i < count; i++) {
      const approx = (dots[i] as number) * (scales[rowAt(i)] as number) * queryScale;
      const threshold = approxTop.threshold;
      if (approx + margin < threshold) continue;
      maybe.push(i);
      if (approx > threshold && ok(rowAt(i))) approxTop.push(i, approx);
    }
    const result = new TopK(k);
    const seen = new Set<number>();
    for (const { index: i } of approxTop.drain()) {
      result.push(rowAt(i), exact(rowAt(i)));
      seen.add(i);
    }
    // 2. Every other candidate that could still beat the k-th exact score.
    const floor = result.threshold;
    for (const i of maybe) {
      if (seen.has(i)) continue;
      const row = rowAt(i);
      const approx = (dots[i] as number) * (scales[row] as number) * queryScale;
      const error = errors[row] as number;
      if (approx + error + queryError * (1 + error) + SLACK < floor || !ok(row)) continue;
      result.push(row, exact(row));
    }
    return result.drain().map(({ index: row, score }) => ({ row, score }));
  }

  /**
   * Threshold search (see exactRowsAbove), exact like topK: a row is rescored in float32 only when its int8
   * score plus the error bound reaches the floor, which with supersede's high floor is almost never. Queries go
   * to the kernel in blocks, so each block reads the rows from memory once.
   */
  rowsAbove(index: VectorRows, queries: readonly Float32Array[], floor: number, cap: number, limit?: (query: number) => number): RowsAbove[] {
    if (!this.ready(index) || index.size === 0) return exactRowsAbove(index, queries, floor, cap, limit);
    this.reserve(index.size);
    const kernel = this.kernel!;
    const { dim, stride } = this;
    const queriesAt = this.manyOffset;
    const dotsAt = queriesAt + (QUERY_BLOCK / 4) * groupBytes(stride);
    kernel.grow(dotsAt + QUERY_BLOCK * ROW_TILE * 4);
    const codes = new Int8Array(QUERY_BLOCK * stride);
    const out: RowsAbove[] = [];
    for (let start = 0; start < queries.length; start += QUERY_BLOCK) {
      const block = queries.slice(start, start + QUERY_BLOCK).map((query, i) => ({
        query,
        rows: Math.max(0, Math.min(index.size, limit ? limit(start + i) : index.size)),
        found: new RowsAboveCollector(cap),
      }));
      const rows = Math.max(0, ...block.map((q) => q.rows));
      const groups = Math.ceil(block.length / 4);
      codes.fill(0);
      const bounds = block.map(({ query }, i) => this.queryBounds(query, quantize(query, 0, dim, codes, i * stride), floor));
      interleaveQueries(codes, block.length, stride, new Int16Array(kernel.buffer, queriesAt, (groups * groupBytes(stride)) / 2));
      for (let first = 0; first < rows; first += ROW_TILE) {
        const count = Math.min(ROW_TILE, rows - first);
        kernel.dotsMany(this.rowsOffset + first * stride, count, stride, this.tails.head, queriesAt, groups, dotsAt);
        block.forEach(({ query, rows: end, found }, i) => {
          if (end <= first) return;
          const dots = new Int32Array(kernel.buffer, dotsAt + i * count * 4, Math.min(count, end - first));
          this.above(index, query, bounds[i] as QueryBounds, dots, first, floor, found);
        });
      }
      out.push(...block.map(({ found }) => found.result()));
    }
    return out;
  }

  /** What rowsAbove's bound needs of a query: its int8 scale, the norm of its tail, the bound's reach. */
  private queryBounds(query: Float32Array, { scale, error }: Quantized, floor: number): QueryBounds {
    let tail = 0;
    for (let i = this.tails.head; i < this.dim; i++) tail += (query[i] as number) * (query[i] as number);
    return { scale, tail: Math.sqrt(tail), reach: floor - (this.maxError + error * (1 + this.maxError) + SLACK) };
  }

  /**
   * Offers to `found` the rows first.. whose exact score is ≥ floor, from the int8 dot products of their first
   * `tails.head` dims with the query's (`dots`). The rest of a row can add at most ‖query tail‖·‖row tail‖
   * (Cauchy–Schwarz), so
   *   q·x ≤ approx(head) + e_q·(1 + e_x) + e_x + ‖q₂‖·‖x₂‖
   * and only rows whose bound reaches the floor are scored exactly. With supersede's floor (two memories nearly
   * the same) the head alone rules out almost every row, at a quarter of the bytes.
   */
  private above(index: VectorRows, query: Float32Array, { scale, tail, reach }: QueryBounds, dots: Int32Array, first: number, floor: number, found: RowsAboveCollector): void {
    const { scales, dim } = this;
    const norms = this.tails.norms;
    const matrix = index.matrix;
    const count = dots.length;
    for (let i = 0; i < count; i++) {
      const row = first + i;
      if ((dots[i] as number) * (scales[row] as number) * scale + tail * (norms[row] as number) < reach) continue;
      found.offer(row, dot(query, matrix, row * dim), floor);
    }
  }

  /** The 1-bit prefilter's shortlist (sorted rows), or null when it is off, unavailable or the index is small. */
  private shortlist(index: VectorRows, query: Float32Array, k: number): Int32Array | null {
    const { prefilterMinRows, prefilterMinDim, prefilterShortlist, prefilterShortlistShare } = this.options;
    const size = index.size;
    if (prefilterMinRows === false || size < prefilterMinRows || index.dim < prefilterMinDim) return null;
    return this.signs.shortlist(index, query, Math.max(k, prefilterShortlist, Math.ceil(size * prefilterShortlistShare)));
  }

  /** Sizes itself to the index on first use; false where there is no SIMD kernel. */
  private ready(index: VectorRows): boolean {
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
    kernel.grow(this.stride + capacity * (this.stride + 8));
    const scales = new Float32Array(capacity);
    scales.set(this.scales);
    const errors = new Float32Array(capacity);
    errors.set(this.errors);
    this.scales = scales;
    this.errors = errors;
    this.capacity = capacity;
  }
}

interface QueryBounds {
  scale: number;
  tail: number;
  reach: number;
}

interface Quantized {
  scale: number;
  error: number;
}

/** Writes int8 codes of `dim` floats at `from` into `codes` at `to`; returns the scale and ‖x − scale·codes‖. */
function quantize(source: Float32Array, from: number, dim: number, codes: Int8Array, to: number): Quantized {
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

/**
 * Per row, the norm of the dims after the `head` that rowsAbove's kernel pass reads (a multiple of 16, about a
 * quarter of the row, at least 64): it bounds what those dims can add to a dot product.
 */
class TailNorms {
  head = 0;
  norms = new Float64Array(0);
  private dim = 0;

  rowsChanged(index: VectorRows, rows: readonly number[]): void {
    const { dim, size } = index;
    if (dim !== this.dim) {
      this.dim = dim;
      const stride = Math.ceil(dim / 16) * 16;
      this.head = Math.min(stride, Math.max(64, Math.ceil(stride / 64) * 16));
      this.norms = new Float64Array(0);
      rows = Array.from({ length: size }, (_, row) => row);
    }
    if (this.norms.length < size) {
      const grown = new Float64Array(Math.max(size, Math.ceil(this.norms.length * 1.5), 64));
      grown.set(this.norms);
      this.norms = grown;
    }
    const matrix = index.matrix;
    for (const row of rows) {
      if (row >= size) continue;
      let sum = 0;
      for (let i = this.head; i < dim; i++) sum += (matrix[row * dim + i] as number) ** 2;
      this.norms[row] = Math.sqrt(sum);
    }
  }
}
