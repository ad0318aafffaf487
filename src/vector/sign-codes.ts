/**
 * 1-bit sign codes for a fast vector prefilter: bit j of a row is 1 when x_j > c_j, c being the mean row when
 * the codes were built (centring matters: real embeddings share a direction, and uncentred signs would mostly
 * agree). The Hamming distance between the codes of the query and a row tracks the angle between them, so the
 * rows nearest by Hamming distance are a shortlist that contains the true top k with high probability, read
 * from 1/32 of the float32 bytes (100k × 384-d: 4.8 MB).
 *
 * The centre is frozen while the row count stays within 2× of the count it was built at (every code then means
 * the same thing); outside that band all rows are re-encoded, which amortises to O(1) per change.
 */
import { addTo, assembleModule, compileSimd, countDown, KernelMemory, op, sumLanes } from './wasm-encoder.js';
import type { VectorIndex } from './vector-index.js';

type HammingFn = (rows: number, count: number, stride: number, query: number, out: number, histogram: number) => void;

/**
 * hamming(rows, count, stride, query, out, histogram): out[r] = popcount(rows[r] xor query) for rows `stride`
 * bytes apart, and histogram[out[r]] += 1 (int32 counts, zeroed by the caller).
 */
function assembleHamming(): Uint8Array<ArrayBuffer> {
  // params: 0 rows, 1 count, 2 stride, 3 query, 4 out, 5 histogram; locals: 6 j, 7 distance, 8 slot (i32), 9 acc (v128)
  const [ROWS, COUNT, STRIDE, QUERY, OUT, HISTOGRAM, J, DISTANCE, SLOT, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const body = countDown(COUNT, [
    ...op.v128Zero, ...op.set(ACC),
    ...op.i32(0), ...op.set(J),
    ...op.loop,
    ...op.get(ACC),
    ...op.get(ROWS), ...op.get(J), ...op.i32Add, ...op.v128Load,
    ...op.get(QUERY), ...op.get(J), ...op.i32Add, ...op.v128Load,
    ...op.v128Xor, ...op.popcnt, ...op.pairwiseU8, ...op.i16Add,
    ...op.set(ACC),
    ...op.get(J), ...op.i32(16), ...op.i32Add, ...op.tee(J), ...op.get(STRIDE), ...op.i32LtU, ...op.brIf(0),
    ...op.end,
    ...op.get(ACC), ...op.pairwiseU16, ...op.set(ACC),
    ...sumLanes(ACC), ...op.set(DISTANCE),
    ...op.get(OUT), ...op.get(DISTANCE), ...op.i32Store,
    ...op.get(HISTOGRAM), ...op.get(DISTANCE), ...op.i32(4), ...op.i32Mul, ...op.i32Add, ...op.tee(SLOT),
    ...op.get(SLOT), ...op.i32Load, ...op.i32(1), ...op.i32Add, ...op.i32Store,
    ...addTo(OUT, op.i32(4)),
    ...addTo(ROWS, op.get(STRIDE)),
  ]);
  return assembleModule([{ name: 'hamming', params: 6, i32Locals: 3, v128Locals: 1, body }]);
}

let compiled: WebAssembly.Module | null | undefined;

function hammingModule(): WebAssembly.Module | null {
  if (compiled === undefined) compiled = compileSimd(assembleHamming());
  return compiled;
}

/** True where the SIMD Hamming kernel can run (the prefilter is skipped elsewhere). */
export function signCodesAvailable(): boolean {
  return hammingModule() !== null;
}

export class SignCodes {
  private kernel: KernelMemory | null = null;
  private hamming: HammingFn = () => undefined;
  private dim = 0;
  /** Bytes per row: dim bits rounded up to 128 (the kernel's step), zero-padded. */
  private stride = 0;
  private capacity = 0;
  private center: Float32Array | null = null;
  private builtAt = 0;

  /** The centre the current codes were built with (null before the first shortlist). */
  get centre(): Float32Array | null {
    return this.center && this.center.slice();
  }

  /** Memory layout: [query: stride bytes][histogram: (dim + 1) × int32][rows: capacity × stride][distances: capacity × int32]. */
  private get histogramOffset(): number {
    return this.stride;
  }

  private get rowsOffset(): number {
    return this.stride + Math.ceil(((this.dim + 1) * 4) / 16) * 16;
  }

  private get distancesOffset(): number {
    return this.rowsOffset + this.capacity * this.stride;
  }

  /** Re-encodes rows written since (only once codes exist: `shortlist` builds them on first use). */
  rowsChanged(index: VectorIndex, rows: readonly number[]): void {
    if (!this.center || this.dim !== index.dim) return;
    this.reserve(index.size);
    const codes = new Uint8Array(this.kernel!.buffer, this.rowsOffset, this.capacity * this.stride);
    const matrix = index.matrix;
    for (const row of rows) if (row < index.size) this.encode(matrix, row * this.dim, codes, row * this.stride);
  }

  /**
   * Rows ordered by nothing in particular: every row with a Hamming distance below the cut, plus rows at the cut
   * (lowest rows first) up to `count` in all. Null where the kernel is unavailable.
   */
  shortlist(index: VectorIndex, query: Float32Array, count: number): Int32Array | null {
    if (!this.ready(index)) return null;
    const size = index.size;
    const kernel = this.kernel!;
    const queryCodes = new Uint8Array(kernel.buffer, 0, this.stride);
    queryCodes.fill(0);
    this.encode(query, 0, queryCodes, 0);
    if (count >= size) return Int32Array.from({ length: size }, (_, row) => row);
    // Counting selection: distances are small integers (0..dim), so no sort is needed.
    const histogram = new Int32Array(kernel.buffer, this.histogramOffset, this.dim + 1);
    histogram.fill(0);
    this.hamming(this.rowsOffset, size, this.stride, 0, this.distancesOffset, this.histogramOffset);
    const distances = new Int32Array(kernel.buffer, this.distancesOffset, size);
    let cut = 0;
    let below = 0;
    while (below + (histogram[cut] as number) < count) below += histogram[cut++] as number;
    let atCut = count - below;
    const out = new Int32Array(count);
    let n = 0;
    for (let row = 0; row < size; row++) {
      const distance = distances[row] as number;
      if (distance < cut || (distance === cut && atCut-- > 0)) out[n++] = row;
    }
    return out;
  }

  /** Builds codes for every row when there are none yet, or the row count left the band the centre was made for. */
  private ready(index: VectorIndex): boolean {
    if (this.dim !== index.dim || this.kernel === null) {
      const module = hammingModule();
      if (!module) return false;
      this.dim = index.dim;
      this.stride = Math.ceil(index.dim / 128) * 16;
      this.capacity = 0;
      this.center = null;
      this.kernel = new KernelMemory(module, this.rowsOffset + this.stride * 64);
      this.hamming = this.kernel.exports.hamming as HammingFn;
    }
    const size = index.size;
    if (!this.center || size > 2 * this.builtAt || size < this.builtAt / 2) {
      this.center = Float32Array.from(index.sumOfRows(), (sum) => sum / Math.max(1, size));
      this.builtAt = size;
      this.rowsChanged(index, Array.from({ length: size }, (_, row) => row));
    }
    return true;
  }

  private encode(source: Float32Array, from: number, codes: Uint8Array, to: number): void {
    const center = this.center!;
    for (let byte = 0; byte < this.stride; byte++) {
      let bits = 0;
      const base = byte * 8;
      for (let bit = 0; bit < 8 && base + bit < this.dim; bit++) {
        if ((source[from + base + bit] as number) > (center[base + bit] as number)) bits |= 1 << bit;
      }
      codes[to + byte] = bits;
    }
  }

  private reserve(rows: number): void {
    if (rows <= this.capacity) return;
    const capacity = Math.max(rows, Math.ceil(this.capacity * 1.5), 64);
    // Codes keep their place (right after the query); the distances behind them are scratch.
    this.kernel!.grow(this.rowsOffset + capacity * (this.stride + 4));
    this.capacity = capacity;
  }
}
