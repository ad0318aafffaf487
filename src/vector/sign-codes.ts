/**
 * 1-bit sign codes for a fast vector prefilter: bit j of a row is 1 when x_j > c_j, c being the mean row when
 * the codes were built (centring matters: real embeddings share a direction, and uncentred signs would mostly
 * agree). The Hamming distance between the codes of the query and a row tracks the angle between them, so the
 * rows nearest by Hamming distance are a shortlist that contains the true top k with high probability (not
 * always: the prefilter is approximate), read from 1/32 of the float32 bytes.
 *
 * The centre is frozen while the row count stays within 2× of the count it was built at (every code then means
 * the same thing); outside that band all rows are re-encoded, which amortises to O(1) per change.
 */
import { addTo, assembleModule, countDown, KernelMemory, op, simdModuleOnce, sumLanes } from './wasm-encoder.js';
import type { VectorRows } from './scan.js';

type HammingFn = (rows: number, count: number, stride: number, query: number, out: number, histogram: number) => void;

/**
 * hamming(rows, count, stride, query, out, histogram): out[r] = popcount(rows[r] xor query) for rows `stride`
 * bytes apart (stride a multiple of 16), and histogram[out[r]] += 1 (int32 counts, zeroed by the caller).
 * Step by step, as assembled below (offsets are byte addresses in the memory):
 *
 *   while count != 0:
 *     acc = i16x8(0); j = 0
 *     do:                                          ;; 16 bytes = 128 bits a step
 *       x = v128.xor(v128.load(rows + j), v128.load(query + j))
 *       acc = i16x8.add(acc, i16x8.extadd_pairwise_i8x16_u(i8x16.popcnt(x)))
 *       j += 16
 *     while j <u stride
 *     acc = i32x4.extadd_pairwise_i16x8_u(acc)
 *     distance = acc[0] + acc[1] + acc[2] + acc[3]  ;; i32x4.extract_lane
 *     i32.store(out, distance)
 *     slot = histogram + 4·distance; i32.store(slot, i32.load(slot) + 1)
 *     out += 4; rows += stride; count -= 1
 *
 * An i16 lane gains at most 16 a step (the bits of two bytes) and is read as unsigned, so it cannot overflow
 * in up to 4,095 steps (a stride under 64 KB).
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

const hammingModule = simdModuleOnce(assembleHamming);

/** The Hamming kernel on its own memory (offsets in `hamming` are byte offsets into `buffer`). */
export interface HammingKernel {
  /** Views on it die when it grows: re-create them after `grow`. */
  readonly buffer: ArrayBuffer;
  /** Grows the memory to at least `bytes`. */
  grow(bytes: number): void;
  readonly hamming: HammingFn;
}

class SimdHamming extends KernelMemory implements HammingKernel {
  readonly hamming: HammingFn;

  constructor(module: WebAssembly.Module, bytes: number) {
    super(module, bytes);
    this.hamming = this.exports.hamming as HammingFn;
  }
}

/** A Hamming kernel with at least `bytes` of memory, or null where WebAssembly SIMD is unavailable (then nothing is prefiltered). */
export function createHammingKernel(bytes: number): HammingKernel | null {
  const module = hammingModule();
  return module ? new SimdHamming(module, bytes) : null;
}

export class SignCodes {
  private kernel: HammingKernel | null = null;
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
  rowsChanged(index: VectorRows, rows: readonly number[]): void {
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
  shortlist(index: VectorRows, query: Float32Array, count: number): Int32Array | null {
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
    kernel.hamming(this.rowsOffset, size, this.stride, 0, this.distancesOffset, this.histogramOffset);
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
  private ready(index: VectorRows): boolean {
    if (this.dim !== index.dim || this.kernel === null) {
      if (!hammingModule()) return false;
      this.dim = index.dim;
      this.stride = Math.ceil(index.dim / 128) * 16;
      this.capacity = 0;
      this.center = null;
      this.kernel = createHammingKernel(this.rowsOffset + this.stride * 64);
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
