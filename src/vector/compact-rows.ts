/**
 * Compact vector memory: what a search touches, without the float32 rows. Each row is kept as int8 codes with its
 * scale and rounding-error norm (quantized-scan.ts's `quantize`), the norm of its tail dims (for rowsAbove's bound)
 * and, once the prefilter is needed, 1-bit sign codes. Searches plan from these which rows to rescore; the caller
 * reads those rows' floats from the store and scores them exactly (VectorIndex in compact mode).
 *
 * The plan is exact, as QuantizedScan's bestOf is, when the prefilter does not run: the k best rows by int8 score
 * first, then every other row whose int8 score plus the Cauchy–Schwarz bound reaches the k-th exact score among
 * those. When the prefilter runs (the answer is approximate anyway) only the k + rescoreExtra best of its
 * shortlist are rescored, in one read.
 *
 * Sign codes are encoded from each row's floats as it is written, against a centre taken from the first rows
 * written (a loaded chunk, or every row when a float32 index turns compact) and frozen while the row count stays
 * within 2× of the count it was made for. Outside that band they are rebuilt from the int8 codes (the floats are
 * not in memory), which ranks near-duplicates more coarsely.
 */
import { createInt8Kernel, type Int8Kernel } from './int8-kernel.js';
import {
  approxBest,
  candidatesAbove,
  defaultQuantizedScanOptions,
  quantize,
  tailHead,
  tailNorm,
  upperBound,
  widestBound,
  type QuantizedScanOptions,
} from './quantized-scan.js';
import { SignCodes, type ApproxRows } from './sign-codes.js';
import { grown } from '../util/grow.js';
import { TopK } from '../util/topk.js';

export interface CompactScanOptions extends QuantizedScanOptions {
  /**
   * When the prefilter runs (the answer is approximate anyway), at most this many rows beyond the k best are read
   * for rescoring: those whose int8 bound reaches highest. Default 256. Without the prefilter every row the bound
   * cannot rule out is read (exact).
   */
  rescoreLimit?: number;
}

const defaultCompactScanOptions: Required<CompactScanOptions> = { ...defaultQuantizedScanOptions, rescoreLimit: 256 };

/** Which rows one search rescores exactly. */
interface RescorePlan {
  /** Rescored first: the k best eligible rows by int8 score. */
  first: number[];
  /** Other eligible rows that may still reach the top k, with an upper bound of their score (highest first when capped). */
  more: { row: number; bound: number }[];
  /** Most rows of `more` to read: all of them for an exact plan. */
  moreLimit: number;
  /** False when the prefilter ran: rows outside its shortlist are never looked at. */
  exact: boolean;
}

export class CompactRows {
  readonly dim: number;
  /** Bytes per row: dim rounded up to 16 (the kernel's step), zero-padded. */
  readonly stride: number;
  /** Dims whose codes aboveCandidates reads; the rest is bounded by the tail norms. */
  readonly head: number;
  private readonly options: Required<CompactScanOptions>;
  private readonly signs: SignCodes | null;
  private capacity = 0;
  private scales = new Float32Array(0);
  private errors = new Float32Array(0);
  private tails = new Float64Array(0);
  /** An upper bound of every row's rounding error (never lowered). */
  private maxError = 0;
  private codeView: Int8Array | null = null;
  /** Candidate indices of `select` (reused between searches). */
  private maybe = new Int32Array(0);

  /**
   * Null where WebAssembly SIMD is missing (compact memory is then unavailable). `prefilter` false: no sign codes
   * (an index whose IVF lists choose the rows never prefilters).
   */
  static create(dim: number, sumOfRows: () => Float64Array, options: CompactScanOptions = {}, prefilter = true): CompactRows | null {
    const stride = Math.ceil(dim / 16) * 16;
    const kernel = createInt8Kernel(stride * 64, stride);
    return kernel ? new CompactRows(dim, kernel, sumOfRows, options, prefilter) : null;
  }

  private constructor(
    dim: number,
    private readonly kernel: Int8Kernel,
    private readonly sumOfRows: () => Float64Array,
    options: CompactScanOptions,
    prefilter: boolean,
  ) {
    this.dim = dim;
    this.stride = Math.ceil(dim / 16) * 16;
    this.head = tailHead(this.stride);
    this.options = { ...defaultCompactScanOptions, ...options };
    const signs = prefilter ? new SignCodes() : null;
    this.signs = signs?.prepare(dim) ? signs : null;
  }

  /** Copies of rows start..end as saved (saved-rows.ts): codes (stride bytes each), scales, errors, tail norms. */
  exportRows(start: number, end: number): { codes: Int8Array; scales: Float32Array; errors: Float32Array; tails: Float64Array } {
    return {
      codes: this.codes().slice(start * this.stride, end * this.stride),
      scales: this.scales.slice(start, end),
      errors: this.errors.slice(start, end),
      tails: this.tails.slice(start, end),
    };
  }

  /**
   * Writes saved rows from `start` (reserve first), as `exportRows` gave them. Sign codes, when kept, are built
   * later from the codes (`warm`).
   */
  importRows(start: number, rows: { codes: Int8Array; scales: Float32Array; errors: Float32Array; tails: Float64Array }): void {
    this.codes().set(rows.codes, start * this.stride);
    this.scales.set(rows.scales, start);
    this.errors.set(rows.errors, start);
    this.tails.set(rows.tails, start);
    for (const error of rows.errors) if (error > this.maxError) this.maxError = error;
  }

  /** Memory layout: [query: stride][codes: capacity × stride][dots: capacity × int32][list: capacity × int32][scratch]. */
  private get dotsOffset(): number {
    return this.stride + this.capacity * this.stride;
  }

  private get listOffset(): number {
    return this.dotsOffset + this.capacity * 4;
  }

  private get scratchOffset(): number {
    return this.listOffset + this.capacity * 4;
  }

  /** Bytes held: codes, per-row figures and sign codes (what a row costs, scratch included). */
  get bytes(): number {
    return this.kernel.buffer.byteLength + this.capacity * (4 + 4 + 8) + (this.signs?.bytes ?? 0);
  }

  private codes(): Int8Array {
    if (!this.codeView || this.codeView.buffer !== this.kernel.buffer || this.codeView.length !== this.capacity * this.stride) {
      this.codeView = new Int8Array(this.kernel.buffer, this.stride, this.capacity * this.stride);
    }
    return this.codeView;
  }

  reserve(rows: number): void {
    if (rows <= this.capacity) return;
    const capacity = Math.max(rows, Math.ceil(this.capacity * 1.5), 64);
    // Codes keep their place (right after the query); the dots and list areas behind them are scratch.
    this.kernel.grow(this.stride + capacity * (this.stride + 8));
    this.scales = grown(this.scales, capacity);
    this.errors = grown(this.errors, capacity);
    this.tails = grown(this.tails, capacity);
    this.capacity = capacity;
    this.signs?.reserve(capacity);
  }

  /** Encodes the unit vector at `source[offset..]` as row `row` (reserve first). */
  write(row: number, source: Float32Array, offset: number): void {
    const { scale, error } = quantize(source, offset, this.dim, this.codes(), row * this.stride);
    this.scales[row] = scale;
    this.errors[row] = error;
    if (error > this.maxError) this.maxError = error;
    this.tails[row] = tailNorm(source, offset, this.head, this.dim);
    this.signs?.write(row, source, offset);
  }

  /**
   * Gives the sign codes their centre when they have none: the mean of `count` rows summing to `sum`, made for
   * `expected` rows. Call before writing those rows, so they are encoded from their floats.
   */
  centreSigns(sum: ArrayLike<number>, count: number, expected: number): void {
    this.signs?.centreIfNone(sum, count, Math.max(count, expected));
  }

  /** Row `from` moves to `to` (a swap-remove). */
  move(from: number, to: number): void {
    const { stride } = this;
    this.codes().copyWithin(to * stride, from * stride, (from + 1) * stride);
    this.scales[to] = this.scales[from] as number;
    this.errors[to] = this.errors[from] as number;
    this.tails[to] = this.tails[from] as number;
    this.signs?.move(from, to);
  }

  /** The row as its codes say (scale × code): within the row's error norm of the stored unit vector. */
  approx(row: number, out: Float32Array = new Float32Array(this.dim)): Float32Array {
    const codes = this.codes();
    const scale = this.scales[row] as number;
    const at = row * this.stride;
    for (let i = 0; i < this.dim; i++) out[i] = (codes[at + i] as number) * scale;
    return out;
  }

  /** Builds the sign codes now when `size` rows would prefilter, so the first search does not pay for it. */
  warm(size: number): void {
    if (this.prefilters(size)) this.signs?.ready(this.approxRows(size));
  }

  /**
   * Which rows to rescore for the top k of a normalised query among rows 0..size (see RescorePlan). `among`: the
   * rows an IVF probe chose (the plan is exact among them; every row when a filter leaves fewer than k of them), or
   * 'all' for an exact plan over every row (the prefilter does not run).
   */
  plan(query: Float32Array, k: number, size: number, eligible?: (row: number) => boolean, among?: Int32Array | 'all'): RescorePlan {
    if (k <= 0 || size === 0) return { first: [], more: [], moreLimit: 0, exact: true };
    this.reserve(size);
    const kernel = this.kernel;
    const quantized = quantize(query, 0, this.dim, new Int8Array(kernel.buffer, 0, this.stride), 0);
    if (among instanceof Int32Array) {
      new Int32Array(kernel.buffer, this.listOffset, among.length).set(among);
      kernel.dotsAt(this.stride, this.listOffset, among.length, this.stride, 0, this.dotsOffset);
      const plan = this.select(quantized, k, among, among.length, eligible, true);
      if (plan.first.length >= k) return plan;
    } else if (among !== 'all' && this.prefilters(size)) {
      const count = Math.max(k, this.options.prefilterShortlist, Math.ceil(size * this.options.prefilterShortlistShare));
      const shortlist = this.signs!.shortlist(this.approxRows(size), query, count)!;
      new Int32Array(kernel.buffer, this.listOffset, shortlist.length).set(shortlist);
      kernel.dotsAt(this.stride, this.listOffset, shortlist.length, this.stride, 0, this.dotsOffset);
      const plan = this.select(quantized, k, shortlist, shortlist.length, eligible, false);
      if (plan.first.length >= k) return plan;
    }
    kernel.dots(this.stride, size, this.stride, 0, this.dotsOffset);
    return this.select(quantized, k, null, size, eligible, true);
  }

  /** The k best rows among 0..size for a normalised query by int8 score alone (what IVF calibrates against). */
  int8TopK(query: Float32Array, k: number, size: number): number[] {
    if (k <= 0 || size === 0) return [];
    this.reserve(size);
    const quantized = quantize(query, 0, this.dim, new Int8Array(this.kernel.buffer, 0, this.stride), 0);
    this.kernel.dots(this.stride, size, this.stride, 0, this.dotsOffset);
    const dots = new Int32Array(this.kernel.buffer, this.dotsOffset, size);
    const top = new TopK(k);
    for (let row = 0; row < size; row++) top.push(row, (dots[row] as number) * (this.scales[row] as number) * quantized.scale);
    return top.drain().map(({ index }) => index);
  }

  /**
   * From the int8 dot products the kernel just wrote for `count` candidates: the `keep` best eligible rows and,
   * for an exact plan, the others that may still beat the k-th exact score (quantized-scan.ts bestOf, split at
   * the rescoring so the floats can be read in between).
   */
  private select(
    { scale: queryScale, error: queryError }: { scale: number; error: number },
    k: number,
    candidates: Int32Array | null,
    count: number,
    eligible: ((row: number) => boolean) | undefined,
    exact: boolean,
  ): RescorePlan {
    const dots = new Int32Array(this.kernel.buffer, this.dotsOffset, count);
    const { scales, errors } = this;
    const rowAt = (i: number) => (candidates ? (candidates[i] as number) : i);
    const widest = widestBound(this.maxError, queryError);
    if (this.maybe.length < count) this.maybe = new Int32Array(Math.max(count, Math.ceil(this.maybe.length * 1.5)));
    const maybe = this.maybe;
    const { approxTop, maybeCount } = approxBest(dots, candidates, count, scales, queryScale, widest, k, eligible, maybe);
    const picked = approxTop.drain();
    const first = picked.map(({ index }) => rowAt(index));
    const more: RescorePlan['more'] = [];
    // The k-th exact score among `first` is at least its k-th int8 score minus the widest bound.
    const lowest = first.length === k ? (picked[k - 1] as { score: number }).score - widest : -Infinity;
    const seen = new Set(picked.map(({ index }) => index));
    for (let m = 0; m < maybeCount; m++) {
      const i = maybe[m] as number;
      if (seen.has(i)) continue;
      const row = rowAt(i);
      const bound = upperBound((dots[i] as number) * (scales[row] as number) * queryScale, errors[row] as number, queryError);
      if (bound >= lowest && (!eligible || eligible(row))) more.push({ row, bound });
    }
    if (exact) return { first, more, moreLimit: more.length, exact };
    more.sort((a, b) => b.bound - a.bound);
    return { first, more, moreLimit: this.options.rescoreLimit, exact };
  }

  /**
   * For each normalised query q, the rows below `limit(q)` (default all) whose score may reach `floor`: the int8
   * score of the head dims plus ‖q tail‖·‖row tail‖ plus the rounding bound (quantized-scan.ts rowsAbove). The
   * caller scores them exactly.
   */
  aboveCandidates(queries: readonly Float32Array[], floor: number, size: number, limit?: (query: number) => number): number[][] {
    if (size === 0) return queries.map(() => []);
    this.reserve(size);
    const { kernel, dim, stride, head, scales, tails, maxError } = this;
    const found = queries.map((): number[] => []);
    candidatesAbove({ kernel, rowsAt: stride, scratchAt: this.scratchOffset, dim, stride, head, scales, tails, maxError }, queries, floor, size, limit, (query, row) => {
      (found[query] as number[]).push(row);
    });
    return found;
  }

  /** Rows 0..size as the sign codes read them: approximate, from the int8 codes (the floats are not in memory). */
  private approxRows(size: number): ApproxRows {
    return { dim: this.dim, size, sumOfRows: this.sumOfRows, approx: (row, out) => this.approx(row, out) };
  }

  private prefilters(size: number): boolean {
    const { prefilterMinRows, prefilterMinDim } = this.options;
    return this.signs !== null && prefilterMinRows !== false && size >= prefilterMinRows && this.dim >= prefilterMinDim;
  }
}
