/**
 * The vector leg's index: every vector of the current embedder in one contiguous Float32Array (row-major,
 * `dim` floats per row), with id <-> row maps. Rows are L2-normalised on entry, so cosine is a dot product.
 * Removal swaps the last row into the hole, so the matrix stays dense.
 *
 * The scan is pluggable (`VectorScan`): the default is an exact float32 scan with a bounded heap; a quantised
 * scan (int8 / 1-bit with exact rescoring of a shortlist) can follow row changes through `rowsChanged`.
 */
import { meanPairwiseCosine } from './similarity.js';
import { TopK } from '../util/topk.js';

export interface ScoredRow {
  row: number;
  score: number;
}

export interface VectorScan {
  /** Called after rows were written (set, or moved by a swap-remove). Rows ≥ index.size no longer exist. */
  rowsChanged?(index: VectorIndex, rows: readonly number[]): void;
  /** Best k rows for a normalised query, best first; rows failing `eligible` are never returned. */
  topK(index: VectorIndex, query: Float32Array, k: number, eligible?: (row: number) => boolean): ScoredRow[];
  /** `exactRowsAbove`'s answer, faster (same rows, same scores, same order). */
  rowsAbove?(index: VectorIndex, queries: readonly Float32Array[], floor: number, cap: number, limit?: (query: number) => number): RowsAbove[];
}

/** The rows scoring at least a floor: the best `cap` of them (best first, ordered as topK orders) and whether there were more. */
export interface RowsAbove {
  rows: ScoredRow[];
  more: boolean;
}

/**
 * For each normalised query (number q), the rows below `limit(q)` (default: all) whose score is ≥ `floor`. One
 * call for many queries: a threshold question (supersede's "is anything this similar?") rather than a top-k one.
 */
export function exactRowsAbove(
  index: VectorIndex,
  queries: readonly Float32Array[],
  floor: number,
  cap: number,
  limit?: (query: number) => number,
): RowsAbove[] {
  const { dim, matrix } = index;
  return queries.map((query, q) => {
    const found = new RowsAboveCollector(cap);
    const rows = Math.min(index.size, limit ? limit(q) : index.size);
    for (let row = 0; row < rows; row++) found.offer(row, dot(query, matrix, row * dim), floor);
    return found.result();
  });
}

/** Keeps the best `cap` rows offered with a score ≥ floor, and counts them all. */
export class RowsAboveCollector {
  private readonly best: TopK;
  private count = 0;

  constructor(private readonly cap: number) {
    this.best = new TopK(cap);
  }

  offer(row: number, score: number, floor: number): void {
    if (!(score >= floor)) return;
    this.count++;
    this.best.push(row, score);
  }

  result(): RowsAbove {
    return { rows: this.best.drain().map(({ index: row, score }) => ({ row, score })), more: this.count > this.cap };
  }
}

/** Dot product of two equal-length vectors (the first `dim` floats of b starting at `offset`). */
export function dot(a: Float32Array, b: Float32Array, offset = 0): number {
  let sum = 0;
  const n = a.length;
  let i = 0;
  // Four accumulators: fewer dependent additions per iteration, measurably faster in V8.
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

/** Exact float32 scan: one pass over the matrix, partial top-k through a heap. */
export const exactScan: VectorScan = {
  topK(index, query, k, eligible) {
    const heap = new TopK(k);
    const { dim, size } = index;
    const matrix = index.matrix;
    for (let row = 0; row < size; row++) {
      if (eligible && !eligible(row)) continue;
      heap.push(row, dot(query, matrix, row * dim));
    }
    return heap.drain().map(({ index: row, score }) => ({ row, score }));
  },
};

export class VectorIndex {
  readonly dim: number;
  private data: Float32Array;
  private readonly rowIds: string[] = [];
  private readonly rows = new Map<string, number>();
  private readonly scan: VectorScan;
  /** Running sum of the rows (float64): gives the corpus' mean pairwise cosine in O(dim). */
  private readonly rowSum: Float64Array;

  constructor(dim: number, scan: VectorScan = exactScan, initialCapacity = 64) {
    this.dim = dim;
    this.scan = scan;
    this.rowSum = new Float64Array(dim);
    this.data = new Float32Array(Math.max(1, initialCapacity) * dim);
  }

  get size(): number {
    return this.rowIds.length;
  }

  /** The live part of the matrix (size × dim). A view: valid until the next change. */
  get matrix(): Float32Array {
    return this.data.subarray(0, this.size * this.dim);
  }

  has(id: string): boolean {
    return this.rows.has(id);
  }

  rowOf(id: string): number | undefined {
    return this.rows.get(id);
  }

  idAt(row: number): string {
    const id = this.rowIds[row];
    if (id === undefined) throw new RangeError(`row ${row} out of range`);
    return id;
  }

  ids(): string[] {
    return this.rowIds.slice();
  }

  /** A view of the stored (normalised) vector, valid until the next change. */
  get(id: string): Float32Array | undefined {
    const row = this.rows.get(id);
    return row === undefined ? undefined : this.data.subarray(row * this.dim, (row + 1) * this.dim);
  }

  /** Upserts vectors; `vectors` must already be L2-normalised and `dim` long (the engine checks both). */
  setMany(ids: readonly string[], vectors: readonly Float32Array[] | Float32Array): void {
    const sources = ids.map((_, i) =>
      vectors instanceof Float32Array ? vectors.subarray(i * this.dim, (i + 1) * this.dim) : vectors[i],
    );
    // Check everything before touching a row, so a bad call changes nothing.
    sources.forEach((source, i) => {
      if (!source || source.length !== this.dim) throw new RangeError(`vector ${i} is not ${this.dim} long`);
    });
    this.reserve(this.size + ids.length);
    const changed: number[] = [];
    ids.forEach((id, i) => {
      let row = this.rows.get(id);
      if (row === undefined) {
        row = this.rowIds.length;
        this.rowIds.push(id);
        this.rows.set(id, row);
      } else {
        this.addToSum(row, -1);
      }
      this.data.set(sources[i] as Float32Array, row * this.dim);
      this.addToSum(row, 1);
      changed.push(row);
    });
    this.scan.rowsChanged?.(this, changed);
  }

  set(id: string, vector: Float32Array): void {
    this.setMany([id], [vector]);
  }

  remove(id: string): boolean {
    const row = this.rows.get(id);
    if (row === undefined) return false;
    const last = this.rowIds.length - 1;
    const lastId = this.rowIds[last] as string;
    this.addToSum(row, -1);
    if (row !== last) {
      this.data.copyWithin(row * this.dim, last * this.dim, (last + 1) * this.dim);
      this.rowIds[row] = lastId;
      this.rows.set(lastId, row);
    }
    this.rowIds.pop();
    this.rows.delete(id);
    this.scan.rowsChanged?.(this, row !== last ? [row] : []);
    return true;
  }

  clear(): void {
    this.rowSum.fill(0);
    this.rowIds.length = 0;
    this.rows.clear();
    this.scan.rowsChanged?.(this, []);
  }

  /** Best k ids by cosine to `query` (normalised here), best first. */
  search(query: Float32Array, k: number, eligible?: (id: string) => boolean): { id: string; score: number }[] {
    const unit = normalize(query);
    const rowFilter = eligible && ((row: number) => eligible(this.rowIds[row] as string));
    return this.scan.topK(this, unit, k, rowFilter).map(({ row, score }) => ({ id: this.rowIds[row] as string, score }));
  }

  /**
   * For each query (normalised here), the stored vectors with cosine ≥ `floor`: the best `cap` of them, best first
   * (as `search` orders), and whether there were more. `limit(q)` restricts query q to the first rows.
   */
  matchesAbove(
    queries: readonly Float32Array[],
    floor: number,
    cap: number,
    limit?: (query: number) => number,
  ): { matches: { id: string; score: number }[]; more: boolean }[] {
    const units = queries.map(normalize);
    const found = this.scan.rowsAbove ? this.scan.rowsAbove(this, units, floor, cap, limit) : exactRowsAbove(this, units, floor, cap, limit);
    return found.map(({ rows, more }) => ({ matches: rows.map(({ row, score }) => ({ id: this.rowIds[row] as string, score })), more }));
  }

  /** Mean cosine between two different stored vectors (0 with fewer than two): see similarity.ts. */
  meanPairwiseCosine(): number {
    return meanPairwiseCosine(this.rowSum, this.size);
  }

  /** The running sum of the rows (a copy). */
  sumOfRows(): Float64Array {
    return this.rowSum.slice();
  }

  private addToSum(row: number, sign: 1 | -1): void {
    const offset = row * this.dim;
    for (let i = 0; i < this.dim; i++) this.rowSum[i] = (this.rowSum[i] as number) + sign * (this.data[offset + i] as number);
  }

  private reserve(rows: number): void {
    const needed = rows * this.dim;
    if (needed <= this.data.length) return;
    // Doubling keeps appends amortised O(1) while the matrix stays one contiguous block.
    const grown = new Float32Array(Math.max(needed, this.data.length * 2));
    grown.set(this.data.subarray(0, this.size * this.dim));
    this.data = grown;
  }
}
