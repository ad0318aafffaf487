/**
 * The exact float32 scan: every row's dot product with the query, the best kept in a bounded heap. The default
 * scan of a VectorIndex, the reference the quantised scan must match, and its fallback where there is no SIMD.
 */
import { TopK } from '../util/topk.js';
import type { RowsAbove, VectorRows, VectorScan } from './scan.js';
import { dot } from './similarity.js';

/** One pass over the matrix, partial top-k through a heap. */
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

/**
 * For each normalised query (number q), the rows below `limit(q)` (default: all) whose score is ≥ `floor`. One
 * call for many queries: a threshold question (supersede's "is anything this similar?") rather than a top-k one.
 */
export function exactRowsAbove(
  index: VectorRows,
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
