/**
 * What a vector scan is and what it reads. A scan sees the index only as `VectorRows` (its dimension, row count,
 * matrix and row sum), so the exact scan, the int8 scan and the 1-bit prefilter do not depend on the
 * VectorIndex class, and a test can hand them any rows.
 */

/** The rows a scan reads: `size` unit vectors of `dim` floats, row-major in one matrix. */
export interface VectorRows {
  readonly dim: number;
  readonly size: number;
  /** The live rows (size × dim), valid until the next change. */
  readonly matrix: Float32Array;
  /** The sum of the rows (a copy). */
  sumOfRows(): Float64Array;
}

export interface ScoredRow {
  row: number;
  score: number;
}

/** The rows scoring at least a floor: the best `cap` of them (best first, ordered as topK orders) and whether there were more. */
export interface RowsAbove {
  rows: ScoredRow[];
  more: boolean;
}

export interface VectorScan {
  /** Called after rows were written (set, or moved by a swap-remove). Rows ≥ index.size no longer exist. */
  rowsChanged?(index: VectorRows, rows: readonly number[]): void;
  /** Best k rows for a normalised query, best first; rows failing `eligible` are never returned. */
  topK(index: VectorRows, query: Float32Array, k: number, eligible?: (row: number) => boolean): ScoredRow[];
  /** `exactRowsAbove`'s answer, faster (same rows, same scores, same order). */
  rowsAbove?(index: VectorRows, queries: readonly Float32Array[], floor: number, cap: number, limit?: (query: number) => number): RowsAbove[];
  /** Stops background work for good (the index is being dropped). */
  dispose?(): void;
  /** Takes a saved form of what the scan built (`onBuilt`'s), before rows arrive; false when it refuses it. */
  restore?(saved: Uint8Array): boolean;
  /** Registers where the scan hands a saved form of what it built, each time it builds. */
  onBuilt?(save: (saved: Uint8Array) => void): void;
}
