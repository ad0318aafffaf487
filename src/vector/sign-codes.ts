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
import { addTo, assembleModule, countDown, KernelMemory, op, simdModuleOnce, sumLanes, uleb } from './wasm-encoder.js';
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
function hammingBody(): number[] {
  // params: 0 rows, 1 count, 2 stride, 3 query, 4 out, 5 histogram; locals: 6 j, 7 distance, 8 slot (i32), 9 acc (v128)
  const [ROWS, COUNT, STRIDE, QUERY, OUT, HISTOGRAM, J, DISTANCE, SLOT, ACC] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  return countDown(COUNT, [
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
    ...countRow({ ROWS, STRIDE, OUT, HISTOGRAM, DISTANCE, SLOT, ACC }),
  ]);
}

/**
 * The end of a row in both Hamming kernels, from the i32x4 partial counts in ACC: distance = Σ lanes,
 * i32.store(out, distance), histogram[distance] += 1, then out += 4 and rows += stride.
 */
function countRow(local: { ROWS: number; STRIDE: number; OUT: number; HISTOGRAM: number; DISTANCE: number; SLOT: number; ACC: number }): number[] {
  const { ROWS, STRIDE, OUT, HISTOGRAM, DISTANCE, SLOT, ACC } = local;
  return [
    ...sumLanes(ACC), ...op.set(DISTANCE),
    ...op.get(OUT), ...op.get(DISTANCE), ...op.i32Store,
    ...op.get(HISTOGRAM), ...op.get(DISTANCE), ...op.i32(4), ...op.i32Mul, ...op.i32Add, ...op.tee(SLOT),
    ...op.get(SLOT), ...op.i32Load, ...op.i32(1), ...op.i32Add, ...op.i32Store,
    ...addTo(OUT, op.i32(4)),
    ...addTo(ROWS, op.get(STRIDE)),
  ];
}

function assembleHamming(): Uint8Array<ArrayBuffer> {
  return assembleModule([{ name: 'hamming', params: 6, i32Locals: 3, v128Locals: 1, body: hammingBody() }]);
}

/**
 * hammingFixed(rows, count, query, out, histogram): `hamming` for one stride S = 16·steps, fully unrolled: the
 * query's chunks are loaded once into locals, and the popcounts of a row add up byte-wise (i8x16.add), widening
 * once per row instead of once per step. A byte lane gains at most 8 a step, so up to 31 steps fit in it.
 *
 *   q_s = v128.load(query + 16·s) for s < steps
 *   while count != 0:
 *     acc = i8x16.popcnt(v128.xor(v128.load(rows), q_0))
 *     acc = i8x16.add(acc, i8x16.popcnt(v128.xor(v128.load(rows + 16·s), q_s)))  for 0 < s < steps
 *     distance = Σ lanes of i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(acc))
 *     (store and count as hamming does); out += 4; rows += stride; count -= 1
 */
function assembleFixedHamming(steps: number): number[] {
  // params: 0 rows, 1 count, 2 stride, 3 query, 4 out, 5 histogram; locals: 6 distance, 7 slot (i32), 8 acc, 9.. q_s (v128)
  const [ROWS, COUNT, STRIDE, QUERY, OUT, HISTOGRAM, DISTANCE, SLOT, ACC, Q] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const loadAt = (offset: number) => [0xfd, 0x00, 0, ...uleb(offset)];
  const i8Add = [0xfd, 0x6e];
  const chunk = (s: number) => [...op.get(ROWS), ...loadAt(16 * s), ...op.get(Q + s), ...op.v128Xor, ...op.popcnt];
  return [
    ...Array.from({ length: steps }, (_, s) => [...op.get(QUERY), ...loadAt(16 * s), ...op.set(Q + s)]).flat(),
    ...countDown(COUNT, [
      ...chunk(0),
      ...Array.from({ length: steps - 1 }, (_, s) => [...chunk(s + 1), ...i8Add]).flat(),
      ...op.pairwiseU8, ...op.pairwiseU16, ...op.set(ACC),
      ...countRow({ ROWS, STRIDE, OUT, HISTOGRAM, DISTANCE, SLOT, ACC }),
    ]),
  ];
}

/**
 * select(distances, count, cut, atCut, out): the shortlist from the distances `hamming` wrote: for each row r in
 * order, writes r (int32) at out when distances[r] < cut, or when distances[r] = cut and fewer than atCut rows
 * at the cut were written so far.
 *
 *   row = 0
 *   while count != 0:
 *     d = i32.load(distances)
 *     if (d <u cut) | ((d == cut) & (atCut != 0)):
 *       i32.store(out, row); out += 4; atCut -= (d == cut)
 *     distances += 4; row += 1; count -= 1
 */
function assembleSelect(): number[] {
  // params: 0 distances, 1 count, 2 cut, 3 atCut, 4 out; locals: 5 row, 6 d (i32)
  const [DISTANCES, COUNT, CUT, AT_CUT, OUT, ROW, D] = [0, 1, 2, 3, 4, 5, 6];
  const [i32Eq, i32Ne, i32And, i32Or, ifVoid] = [[0x46], [0x47], [0x71], [0x72], [0x04, 0x40]];
  return countDown(COUNT, [
    ...op.get(DISTANCES), ...op.i32Load, ...op.set(D),
    ...op.get(D), ...op.get(CUT), ...op.i32LtU,
    ...op.get(D), ...op.get(CUT), ...i32Eq, ...op.get(AT_CUT), ...op.i32(0), ...i32Ne, ...i32And,
    ...i32Or,
    ...ifVoid,
    ...op.get(OUT), ...op.get(ROW), ...op.i32Store,
    ...addTo(OUT, op.i32(4)),
    ...op.get(AT_CUT), ...op.get(D), ...op.get(CUT), ...i32Eq, ...op.i32Sub, ...op.set(AT_CUT),
    ...op.end,
    ...addTo(DISTANCES, op.i32(4)),
    ...addTo(ROW, op.i32(1)),
  ]);
}

/** Most steps of 16 bytes whose popcounts fit a byte lane (8 a step). */
const MAX_FIXED_STEPS = 31;

const hammingModule = simdModuleOnce(assembleHamming);
/** Per stride: the module with hamming, hammingFixed for that stride, and select. */
const fixedModules = new Map<number, () => WebAssembly.Module | null>();

function fixedModule(stride: number): WebAssembly.Module | null {
  let compiled = fixedModules.get(stride);
  if (!compiled) {
    const steps = stride / 16;
    compiled = simdModuleOnce(() => {
      return assembleModule([
        { name: 'hamming', params: 6, i32Locals: 3, v128Locals: 1, body: hammingBody() },
        { name: 'hammingFixed', params: 6, i32Locals: 2, v128Locals: 1 + steps, body: assembleFixedHamming(steps) },
        { name: 'select', params: 5, i32Locals: 2, v128Locals: 0, body: assembleSelect() },
      ]);
    });
    fixedModules.set(stride, compiled);
  }
  return compiled();
}

/** The Hamming kernel on its own memory (offsets in `hamming` are byte offsets into `buffer`). */
export interface HammingKernel {
  /** Views on it die when it grows: re-create them after `grow`. */
  readonly buffer: ArrayBuffer;
  /** Grows the memory to at least `bytes`. */
  grow(bytes: number): void;
  readonly hamming: HammingFn;
  /** `select` above, on a kernel made for a stride (createHammingKernel's second argument); undefined otherwise. */
  readonly select?: SelectFn;
}

type SelectFn = (distances: number, count: number, cut: number, atCut: number, out: number) => void;

class SimdHamming extends KernelMemory implements HammingKernel {
  readonly hamming: HammingFn;
  readonly select?: SelectFn;

  constructor(module: WebAssembly.Module, bytes: number, fixedStride?: number) {
    super(module, bytes);
    const generic = this.exports.hamming as HammingFn;
    const fixed = this.exports.hammingFixed as HammingFn | undefined;
    this.hamming = fixed ? (rows, count, stride, query, out, histogram) => (stride === fixedStride ? fixed : generic)(rows, count, stride, query, out, histogram) : generic;
    const select = this.exports.select as SelectFn | undefined;
    if (select) this.select = select;
  }
}

/**
 * A Hamming kernel with at least `bytes` of memory, or null where WebAssembly SIMD is unavailable (then nothing is
 * prefiltered). With `stride` (a multiple of 16, up to 31 × 16), `hamming` runs an unrolled kernel for that stride
 * (any other stride still works), and the kernel has `select`.
 */
export function createHammingKernel(bytes: number, stride?: number): HammingKernel | null {
  if (stride !== undefined && stride > 0 && stride % 16 === 0 && stride / 16 <= MAX_FIXED_STEPS) {
    const module = fixedModule(stride);
    if (module) return new SimdHamming(module, bytes, stride);
  }
  const module = hammingModule();
  return module ? new SimdHamming(module, bytes) : null;
}

/**
 * The rows sign codes are built from: an index's float32 matrix, or (compact mode, where the floats are not in
 * memory) a function that writes an approximation of a row into a scratch buffer.
 */
type SignRows = VectorRows | ApproxRows;

export interface ApproxRows {
  readonly dim: number;
  readonly size: number;
  /** The sum of the rows. */
  sumOfRows(): Float64Array;
  /** Writes row `row` as well as it is known into `out` (dim long) and returns it. */
  approx(row: number, out: Float32Array): Float32Array;
}

export class SignCodes {
  private kernel: HammingKernel | null = null;
  private dim = 0;
  /** Bytes per row: dim bits rounded up to 128 (the kernel's step), zero-padded. */
  private stride = 0;
  private capacity = 0;
  private center: Float32Array | null = null;
  private builtAt = 0;
  private codeView: Uint8Array | null = null;

  /** The centre the current codes were built with (null before the first shortlist or centreIfNone). */
  get centre(): Float32Array | null {
    return this.center && this.center.slice();
  }

  /** Bytes held (codes and the kernel's scratch). */
  get bytes(): number {
    return this.kernel?.buffer.byteLength ?? 0;
  }

  /**
   * Memory layout: [query: stride bytes][histogram: (dim + 1) × int32][rows: capacity × stride][distances: capacity ×
   * int32][shortlist: capacity × int32].
   */
  private get histogramOffset(): number {
    return this.stride;
  }

  private get rowsOffset(): number {
    return this.stride + Math.ceil(((this.dim + 1) * 4) / 16) * 16;
  }

  private get distancesOffset(): number {
    return this.rowsOffset + this.capacity * this.stride;
  }

  private get listOffset(): number {
    return this.distancesOffset + this.capacity * 4;
  }

  /** The codes of every row (a view kept while the memory and capacity stay). */
  private codes(): Uint8Array {
    const buffer = this.kernel!.buffer;
    if (!this.codeView || this.codeView.buffer !== buffer || this.codeView.length !== this.capacity * this.stride) {
      this.codeView = new Uint8Array(buffer, this.rowsOffset, this.capacity * this.stride);
    }
    return this.codeView;
  }

  /** Sizes the codes for `dim` dims (dropping any codes of another dim); false where the kernel is unavailable. */
  prepare(dim: number): boolean {
    if (this.dim === dim && this.kernel !== null) return true;
    if (!hammingModule()) return false;
    this.dim = dim;
    this.stride = Math.ceil(dim / 128) * 16;
    this.capacity = 0;
    this.center = null;
    this.codeView = null;
    this.kernel = createHammingKernel(this.rowsOffset + this.stride * 64, this.stride);
    return this.kernel !== null;
  }

  /**
   * Gives the codes a centre when they have none: the mean of `count` rows summing to `sum`, made for `expected`
   * rows (the band is around it). Rows written after it (`write`) are encoded from their floats.
   */
  centreIfNone(sum: ArrayLike<number>, count: number, expected: number): void {
    if (this.center || count === 0 || this.kernel === null) return;
    this.center = Float32Array.from(sum, (value) => value / count);
    this.builtAt = expected;
  }

  /** Encodes row `row` from `source[offset..]` (only once codes exist). */
  write(row: number, source: Float32Array, offset: number): void {
    if (!this.center) return;
    this.reserve(row + 1);
    this.encode(source, offset, this.codes(), row * this.stride);
  }

  /** Row `from`'s code moves to `to` (a swap-remove). */
  move(from: number, to: number): void {
    if (this.center) this.codes().copyWithin(to * this.stride, from * this.stride, (from + 1) * this.stride);
  }

  /** Re-encodes rows written since (only once codes exist: `shortlist` builds them on first use). */
  rowsChanged(index: SignRows, rows: readonly number[]): void {
    if (!this.center || this.dim !== index.dim) return;
    this.reserve(index.size);
    const codes = this.codes();
    if ('matrix' in index) {
      const matrix = index.matrix;
      for (const row of rows) if (row < index.size) this.encode(matrix, row * this.dim, codes, row * this.stride);
      return;
    }
    const scratch = new Float32Array(this.dim);
    for (const row of rows) if (row < index.size) this.encode(index.approx(row, scratch), 0, codes, row * this.stride);
  }

  /**
   * Rows ordered by nothing in particular: every row with a Hamming distance below the cut, plus rows at the cut
   * (lowest rows first) up to `count` in all. Null where the kernel is unavailable.
   */
  shortlist(index: SignRows, query: Float32Array, count: number): Int32Array | null {
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
    if (kernel.select) {
      kernel.select(this.distancesOffset, size, cut, atCut, this.listOffset);
      return new Int32Array(kernel.buffer, this.listOffset, count).slice();
    }
    const out = new Int32Array(count);
    let n = 0;
    for (let row = 0; row < size; row++) {
      const distance = distances[row] as number;
      if (distance < cut || (distance === cut && atCut-- > 0)) out[n++] = row;
    }
    return out;
  }

  /**
   * Builds codes for every row when there are none yet, or the row count left the band the centre was made for
   * (so the first shortlist need not). False where the kernel is unavailable.
   */
  ready(index: SignRows): boolean {
    if (!this.prepare(index.dim)) return false;
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

  /** Room for `rows` codes (grown by half at least, so appends amortise). */
  reserve(rows: number): void {
    if (rows <= this.capacity || this.kernel === null) return;
    const capacity = Math.max(rows, Math.ceil(this.capacity * 1.5), 64);
    // Codes keep their place (right after the query); the distances and the shortlist behind them are scratch.
    this.kernel.grow(this.rowsOffset + capacity * (this.stride + 8));
    this.capacity = capacity;
  }
}
