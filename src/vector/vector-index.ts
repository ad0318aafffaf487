/**
 * The vector leg's index: every vector of the current embedder in one contiguous Float32Array (row-major,
 * `dim` floats per row), with id <-> row maps. Rows are L2-normalised on entry, so cosine is a dot product.
 * Removal swaps the last row into the hole, so the matrix stays dense.
 *
 * The scan is pluggable (`VectorScan`, scan.ts): the default is the exact float32 scan (exact-scan.ts); a
 * quantised scan (quantized-scan.ts) follows row changes through `rowsChanged`. A scan reads the index only as
 * `VectorRows`.
 */
import { exactRowsAbove, exactScan } from './exact-scan.js';
import type { VectorRows, VectorScan } from './scan.js';
import { meanPairwiseCosine, normalize } from './similarity.js';

export class VectorIndex implements VectorRows {
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

  /** Mean cosine between `query` (normalised here) and the stored vectors, in O(dim) from the running sum: 0 when empty. */
  meanCosineTo(query: Float32Array): number {
    if (this.size === 0) return 0;
    const unit = normalize(query);
    let sum = 0;
    for (let i = 0; i < this.dim; i++) sum += (unit[i] as number) * (this.rowSum[i] as number);
    return sum / this.size;
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
