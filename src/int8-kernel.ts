/**
 * The inner loop of the quantised vector scan: int8 dot products of one query against many rows, written to an
 * Int32Array, in WebAssembly SIMD (16 bytes per step: widen to int16, multiply-add pairs, accumulate int32).
 *
 * The WebAssembly module is tiny and assembled here byte by byte (no toolchain, nothing fetched): it imports
 * its memory, so the caller owns the buffer that holds the query, the rows and the output.
 *
 *   dots(rows, count, stride, query, out): for r in 0..count: out[r] = Σ_j rows[r*stride + j] * query[j]
 *   (byte offsets into the memory; stride is a multiple of 16 and rows are zero-padded to it)
 */

export interface Int8Kernel {
  /** The memory the offsets below refer to. Views on it die when it grows: re-create them after `grow`. */
  readonly buffer: ArrayBuffer;
  /** Grows the memory to at least `bytes`. */
  grow(bytes: number): void;
  dots(rows: number, count: number, stride: number, query: number, out: number): void;
}

const PAGE = 65536;

// --- a minimal WebAssembly encoder, just enough for one function -------------------------------------------
const uleb = (value: number): number[] => {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
};
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const name = (text: string): number[] => [...uleb(text.length), ...Array.from(text, (c) => c.charCodeAt(0))];

const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, depth],
  brIf: (depth: number) => [0x0d, depth],
  get: (local: number) => [0x20, local],
  set: (local: number) => [0x21, local],
  tee: (local: number) => [0x22, local],
  i32: (value: number) => [0x41, ...uleb(value)], // small non-negative constants only (LEB of a positive value < 64)
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Eqz: [0x45],
  i32LtU: [0x49],
  i32Store: [0x36, 2, 0],
  v128Load: [0xfd, 0x00, 0, 0],
  v128Zero: [0xfd, 0x0c, ...new Array<number>(16).fill(0)],
  extendLow: [0xfd, ...uleb(0x87)], // i16x8.extend_low_i8x16_s
  extendHigh: [0xfd, ...uleb(0x88)], // i16x8.extend_high_i8x16_s
  dot: [0xfd, ...uleb(0xba)], // i32x4.dot_i16x8_s
  add: [0xfd, ...uleb(0xae)], // i32x4.add
  lane: (i: number) => [0xfd, ...uleb(0x1b), i], // i32x4.extract_lane
};

function assembleDots(): Uint8Array<ArrayBuffer> {
  // params: 0 rows, 1 count, 2 stride, 3 query, 4 out; locals: 5 j (i32), 6 acc, 7 a, 8 b (v128)
  const [ROWS, COUNT, STRIDE, QUERY, OUT, J, ACC, A, B] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const body = [
    ...op.block,
    ...op.loop,
    ...op.get(COUNT), ...op.i32Eqz, ...op.brIf(1),
    ...op.v128Zero, ...op.set(ACC),
    ...op.i32(0), ...op.set(J),
    ...op.loop,
    ...op.get(ROWS), ...op.get(J), ...op.i32Add, ...op.v128Load, ...op.set(A),
    ...op.get(QUERY), ...op.get(J), ...op.i32Add, ...op.v128Load, ...op.set(B),
    ...op.get(ACC),
    ...op.get(A), ...op.extendLow, ...op.get(B), ...op.extendLow, ...op.dot, ...op.add,
    ...op.get(A), ...op.extendHigh, ...op.get(B), ...op.extendHigh, ...op.dot, ...op.add,
    ...op.set(ACC),
    ...op.get(J), ...op.i32(16), ...op.i32Add, ...op.tee(J), ...op.get(STRIDE), ...op.i32LtU, ...op.brIf(0),
    ...op.end,
    ...op.get(OUT),
    ...op.get(ACC), ...op.lane(0), ...op.get(ACC), ...op.lane(1), ...op.i32Add,
    ...op.get(ACC), ...op.lane(2), ...op.i32Add, ...op.get(ACC), ...op.lane(3), ...op.i32Add,
    ...op.i32Store,
    ...op.get(OUT), ...op.i32(4), ...op.i32Add, ...op.set(OUT),
    ...op.get(ROWS), ...op.get(STRIDE), ...op.i32Add, ...op.set(ROWS),
    ...op.get(COUNT), ...op.i32(1), ...op.i32Sub, ...op.set(COUNT),
    ...op.br(0),
    ...op.end,
    ...op.end,
    ...op.end, // function
  ];
  const code = [...uleb(2), 1, I32, 3, V128, ...body];
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
    ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 1]),
    ...section(3, [1, 0]),
    ...section(7, [1, ...name('dots'), 0x00, 0]),
    ...section(10, [1, ...uleb(code.length), ...code]),
  ]);
}

let compiled: WebAssembly.Module | null | undefined;

/**
 * The SIMD128 module, or null where WebAssembly or its SIMD is missing (or disallowed, e.g. by a CSP). (Relaxed
 * SIMD's int8 dot product was tried: no faster here, and its operand-range rules make it easy to get wrong.)
 */
function simdModule(): WebAssembly.Module | null {
  if (compiled !== undefined) return compiled;
  try {
    const bytes = assembleDots();
    compiled = typeof WebAssembly === 'object' && WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  } catch {
    compiled = null;
  }
  return compiled;
}

class SimdKernel implements Int8Kernel {
  private readonly memory: WebAssembly.Memory;
  private readonly run: (rows: number, count: number, stride: number, query: number, out: number) => void;

  constructor(module: WebAssembly.Module, bytes: number) {
    this.memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    const instance = new WebAssembly.Instance(module, { env: { memory: this.memory } });
    this.run = instance.exports.dots as SimdKernel['run'];
  }

  get buffer(): ArrayBuffer {
    return this.memory.buffer;
  }

  grow(bytes: number): void {
    const pages = Math.ceil(bytes / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.memory.grow(pages);
  }

  dots(rows: number, count: number, stride: number, query: number, out: number): void {
    this.run(rows, count, stride, query, out);
  }
}

/**
 * A kernel with at least `bytes` of memory, or null where WebAssembly SIMD is unavailable: there a JS int8 loop
 * is slower than the float32 scan (measured), so callers keep the exact float scan instead.
 */
export function createInt8Kernel(bytes: number): Int8Kernel | null {
  const module = simdModule();
  return module ? new SimdKernel(module, bytes) : null;
}
