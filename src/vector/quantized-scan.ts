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
import { createInt8Kernel, createInt8KernelSoon, groupBytes, interleaveQueries, type Int8Kernel } from './int8-kernel.js';
import type { RowsAbove, ScoredRow, VectorRows, VectorScan } from './scan.js';
import { SignCodes } from './sign-codes.js';
import { dot } from './similarity.js';
import { grown } from '../util/grow.js';
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
  /**
   * `'now'` (the default) compiles the SIMD kernel on first use; `'background'` compiles it off the thread and
   * answers with the exact float32 scan until it is ready (the same rows, scores and order). Engines use
   * `'background'`: in WebKit a synchronous compile can wait behind the engine's tier-up of SQLite's WebAssembly.
   */
  kernelCompile?: 'now' | 'background';
}

export const defaultQuantizedScanOptions: Required<QuantizedScanOptions> = {
  prefilterMinRows: 10_000,
  prefilterMinDim: 256,
  prefilterShortlist: 1_000,
  prefilterShortlistShare: 1 / 20,
  kernelCompile: 'now',
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
  private scratchList = new Int32Array(0);
  private scratchRows = new Int32Array(0);
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
    if (!this.ready(index) || k <= 0 || index.size === 0) return exactScan.topK(index, query, k, eligible);
    return this.topKAmong(index, query, k, this.shortlist(index, query, k), eligible) as ScoredRow[];
  }

  /**
   * The exact top k among `shortlist` (distinct rows below index.size), or among every row when it is null or a
   * filter leaves fewer than k of it; null while the kernel is not ready. The IVF index (ivf.ts) hands its
   * probed lists here.
   */
  topKAmong(index: VectorRows, query: Float32Array, k: number, shortlist: Int32Array | null, eligible?: (row: number) => boolean): ScoredRow[] | null {
    const size = index.size;
    if (!this.ready(index)) return null;
    if (k <= 0 || size === 0) return [];
    this.reserve(size);
    const kernel = this.kernel!;
    const queryCodes = new Int8Array(kernel.buffer, 0, this.stride);
    const quantized = quantize(query, 0, this.dim, queryCodes, 0);
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

    // 1. The k best by approximate score (eligible ones), rescored exactly; candidates step 2 may need go to `maybe`.
    const maybe = this.scratch(count);
    const { approxTop, maybeCount } = approxBest(dots, candidates, count, scales, queryScale, widestBound(this.maxError, queryError), k, eligible, maybe);
    const result = new TopK(k);
    // Rows to rescore exactly, collected first and scored two at a time (see rescore).
    const rescore = this.rescoreList(k + maybeCount);
    let rescoreCount = 0;
    for (const { index: i } of approxTop.drain()) {
      rescore[rescoreCount++] = candidates ? (candidates[i] as number) : i;
      dots[i] = RESCORED;
    }
    rescoreRows(query, matrix, dim, rescore, rescoreCount, result);
    // 2. Every other candidate that could still beat the k-th exact score.
    const floor = result.threshold;
    rescoreCount = 0;
    for (let m = 0; m < maybeCount; m++) {
      const i = maybe[m] as number;
      const code = dots[i] as number;
      if (code === RESCORED) continue;
      const row = candidates ? (candidates[i] as number) : i;
      if (upperBound(code * (scales[row] as number) * queryScale, errors[row] as number, queryError) < floor || (eligible && !eligible(row))) continue;
      rescore[rescoreCount++] = row;
    }
    rescoreRows(query, matrix, dim, rescore, rescoreCount, result);
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
    const { dim } = this;
    const matrix = index.matrix;
    const found = queries.map(() => new RowsAboveCollector(cap));
    const rows: Int8Rows = { kernel: this.kernel!, rowsAt: this.rowsOffset, scratchAt: this.manyOffset, dim, stride: this.stride, head: this.tails.head, scales: this.scales, tails: this.tails.norms, maxError: this.maxError };
    candidatesAbove(rows, queries, floor, index.size, limit, (query, row) => {
      (found[query] as RowsAboveCollector).offer(row, dot(queries[query] as Float32Array, matrix, row * dim), floor);
    });
    return found.map((collector) => collector.result());
  }

  /** A reused Int32Array of at least `count` slots (bestOf's candidate list). */
  private scratch(count: number): Int32Array {
    if (this.scratchList.length < count) this.scratchList = new Int32Array(Math.max(count, Math.ceil(this.scratchList.length * 1.5)));
    return this.scratchList;
  }

  /** Another reused Int32Array of at least `count` slots (bestOf's rows to rescore). */
  private rescoreList(count: number): Int32Array {
    if (this.scratchRows.length < count) this.scratchRows = new Int32Array(Math.max(count, Math.ceil(this.scratchRows.length * 1.5)));
    return this.scratchRows;
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
      const stride = Math.ceil(index.dim / 16) * 16;
      const kernel = this.options.kernelCompile === 'now' ? createInt8Kernel(stride * 64, stride) : createInt8KernelSoon(stride * 64, stride);
      // Still compiling: the exact scan answers, and a later call quantises every row then.
      if (kernel === undefined) return false;
      this.dim = index.dim;
      this.stride = stride;
      this.capacity = 0;
      this.kernel = kernel;
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
    this.scales = grown(this.scales, capacity);
    this.errors = grown(this.errors, capacity);
    this.capacity = capacity;
  }
}

/** Two dot products of rescoreRows at a time. */
const pairScores = new Float64Array(2);

/**
 * Pushes the exact score of `count` listed rows into `into`. Rows go two at a time through one loop, so the
 * memory reads of two scattered rows overlap; each sum is accumulated exactly as dot() does (four running sums over
 * i mod 4, the tail into the first, added left to right), so every score equals dot()'s to the bit.
 */
function rescoreRows(query: Float32Array, matrix: Float32Array, dim: number, rows: Int32Array, count: number, into: TopK): void {
  let r = 0;
  for (; r + 1 < count; r += 2) {
    const a = rows[r] as number;
    const b = rows[r + 1] as number;
    dotTwo(query, matrix, a * dim, b * dim, pairScores);
    into.push(a, pairScores[0] as number);
    into.push(b, pairScores[1] as number);
  }
  if (r < count) into.push(rows[r] as number, dot(query, matrix, (rows[r] as number) * dim));
}

/** out[0] = dot(query, matrix, offsetA), out[1] = dot(query, matrix, offsetB): the same operations in the same order. */
function dotTwo(query: Float32Array, matrix: Float32Array, offsetA: number, offsetB: number, out: Float64Array): void {
  const n = query.length;
  let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  let b0 = 0, b1 = 0, b2 = 0, b3 = 0;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const q0 = query[i] as number;
    const q1 = query[i + 1] as number;
    const q2 = query[i + 2] as number;
    const q3 = query[i + 3] as number;
    a0 += q0 * (matrix[offsetA + i] as number);
    a1 += q1 * (matrix[offsetA + i + 1] as number);
    a2 += q2 * (matrix[offsetA + i + 2] as number);
    a3 += q3 * (matrix[offsetA + i + 3] as number);
    b0 += q0 * (matrix[offsetB + i] as number);
    b1 += q1 * (matrix[offsetB + i + 1] as number);
    b2 += q2 * (matrix[offsetB + i + 2] as number);
    b3 += q3 * (matrix[offsetB + i + 3] as number);
  }
  for (; i < n; i++) {
    a0 += (query[i] as number) * (matrix[offsetA + i] as number);
    b0 += (query[i] as number) * (matrix[offsetB + i] as number);
  }
  out[0] = a0 + a1 + a2 + a3;
  out[1] = b0 + b1 + b2 + b3;
}

/** Candidates already rescored in bestOf: their dots slot is set to a value no int8 dot product reaches (|dot| ≤ 127²·dim). */
const RESCORED = -0x7fffffff;

/** The widest rounding bound of any row's int8 score against a query whose rounding error is `queryError`. */
export function widestBound(maxError: number, queryError: number): number {
  return maxError + queryError * (1 + maxError) + SLACK;
}

/** The most a row's exact score can be, from its int8 score `approx` and the two rounding errors (Cauchy–Schwarz). */
export function upperBound(approx: number, error: number, queryError: number): number {
  return approx + error + queryError * (1 + error) + SLACK;
}

/**
 * Step 1 of the plan over `count` candidates (rows candidates[i], or rows 0..count) whose int8 dot products are
 * `dots`: the k best eligible by approximate score (candidate indices), and in `maybe` every candidate step 2 may
 * need. Step 2 needs approx ≥ T − widest, and T ≥ (final k-th approx) − widest ≥ (running k-th approx) − widest,
 * so approx ≥ running − 2·widest keeps every one of them.
 */
export function approxBest(
  dots: Int32Array,
  candidates: Int32Array | null,
  count: number,
  scales: Float32Array,
  queryScale: number,
  widest: number,
  k: number,
  eligible: ((row: number) => boolean) | undefined,
  maybe: Int32Array,
): { approxTop: TopK; maybeCount: number } {
  // Plain loops over typed arrays, no closures: this loop runs over every candidate of every search.
  const margin = 2 * widest;
  const approxTop = new TopK(k);
  let maybeCount = 0;
  let threshold = -Infinity;
  for (let i = 0; i < count; i++) {
    const row = candidates ? (candidates[i] as number) : i;
    const approx = (dots[i] as number) * (scales[row] as number) * queryScale;
    if (approx + margin < threshold) continue;
    maybe[maybeCount++] = i;
    if (approx > threshold && (!eligible || eligible(row))) {
      approxTop.push(i, approx);
      threshold = approxTop.threshold;
    }
  }
  return { approxTop, maybeCount };
}

/** Rows kept as int8 codes, as the threshold search reads them (QuantizedScan's, or CompactRows'). */
interface Int8Rows {
  kernel: Int8Kernel;
  /** Byte offset of row 0's codes, `stride` bytes a row. */
  rowsAt: number;
  /** Byte offset of free memory after everything else the kernel holds (grown here as needed). */
  scratchAt: number;
  dim: number;
  stride: number;
  /** Dims the kernel reads (tailHead); the rest is bounded by `tails`. */
  head: number;
  scales: Float32Array;
  /** Per row, the norm of its dims after `head`. */
  tails: Float64Array;
  /** An upper bound of every row's rounding error. */
  maxError: number;
}

/**
 * For each normalised query, calls `candidate(query, row)` for the rows below `limit(query)` (default `size`), in
 * row order, whose score may reach `floor`: the int8 score of the head dims plus ‖q tail‖·‖row tail‖ (what the
 * rest can add, Cauchy–Schwarz) plus the rounding bound:
 *   q·x ≤ approx(head) + e_q·(1 + e_x) + e_x + ‖q₂‖·‖x₂‖
 * With supersede's floor (two memories nearly the same) the head alone rules out almost every row, at a quarter of
 * the bytes. Queries go to the kernel in blocks, so each block reads the rows from memory once.
 */
export function candidatesAbove(
  rows: Int8Rows,
  queries: readonly Float32Array[],
  floor: number,
  size: number,
  limit: ((query: number) => number) | undefined,
  candidate: (query: number, row: number) => void,
): void {
  const { kernel, dim, stride, head, scales, tails, maxError } = rows;
  const queriesAt = rows.scratchAt;
  const dotsAt = queriesAt + (QUERY_BLOCK / 4) * groupBytes(stride);
  kernel.grow(dotsAt + QUERY_BLOCK * ROW_TILE * 4);
  const codes = new Int8Array(QUERY_BLOCK * stride);
  for (let start = 0; start < queries.length; start += QUERY_BLOCK) {
    const block = queries.slice(start, start + QUERY_BLOCK).map((query, i) => {
      const end = Math.max(0, Math.min(size, limit ? limit(start + i) : size));
      return { query, end };
    });
    const blockRows = Math.max(0, ...block.map((q) => q.end));
    const groups = Math.ceil(block.length / 4);
    codes.fill(0);
    const bounds = block.map(({ query }, i) => {
      const { scale, error } = quantize(query, 0, dim, codes, i * stride);
      return { scale, tail: tailNorm(query, 0, head, dim), reach: floor - widestBound(maxError, error) };
    });
    interleaveQueries(codes, block.length, stride, new Int16Array(kernel.buffer, queriesAt, (groups * groupBytes(stride)) / 2));
    for (let first = 0; first < blockRows; first += ROW_TILE) {
      const count = Math.min(ROW_TILE, blockRows - first);
      kernel.dotsMany(rows.rowsAt + first * stride, count, stride, head, queriesAt, groups, dotsAt);
      block.forEach(({ end }, i) => {
        if (end <= first) return;
        const { scale, tail, reach } = bounds[i]!;
        const dots = new Int32Array(kernel.buffer, dotsAt + i * count * 4, Math.min(count, end - first));
        for (let j = 0; j < dots.length; j++) {
          const row = first + j;
          if ((dots[j] as number) * (scales[row] as number) * scale + tail * (tails[row] as number) >= reach) candidate(start + i, row);
        }
      });
    }
  }
}

interface Quantized {
  scale: number;
  error: number;
}

/** Writes int8 codes of `dim` floats at `from` into `codes` at `to`; returns the scale and ‖x − scale·codes‖. */
export function quantize(source: Float32Array, from: number, dim: number, codes: Int8Array, to: number): Quantized {
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

/** The dims rowsAbove's kernel pass reads of rows `stride` bytes long: a multiple of 16, about a quarter of the row, at least 64. */
export function tailHead(stride: number): number {
  return Math.min(stride, Math.max(64, Math.ceil(stride / 64) * 16));
}

/** ‖source[from + head .. from + dim]‖: what the dims after the head can add to a dot product with a unit vector. */
export function tailNorm(source: Float32Array, from: number, head: number, dim: number): number {
  let sum = 0;
  for (let i = head; i < dim; i++) sum += (source[from + i] as number) ** 2;
  return Math.sqrt(sum);
}

/** Per row, the norm of the dims after the `head` that rowsAbove's kernel pass reads: it bounds what those dims can add. */
class TailNorms {
  head = 0;
  norms = new Float64Array(0);
  private dim = 0;

  rowsChanged(index: VectorRows, rows: readonly number[]): void {
    const { dim, size } = index;
    if (dim !== this.dim) {
      this.dim = dim;
      this.head = tailHead(Math.ceil(dim / 16) * 16);
      this.norms = new Float64Array(0);
      rows = Array.from({ length: size }, (_, row) => row);
    }
    if (this.norms.length < size) this.norms = grown(this.norms, Math.max(size, Math.ceil(this.norms.length * 1.5), 64));
    const matrix = index.matrix;
    for (const row of rows) if (row < size) this.norms[row] = tailNorm(matrix, row * dim, this.head, dim);
  }
}
