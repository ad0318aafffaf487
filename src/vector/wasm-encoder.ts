/**
 * A minimal WebAssembly encoder for the scan kernels: just enough to write one-function SIMD modules byte by
 * byte (no toolchain, nothing fetched). Each module imports its memory as `env.memory`, so the caller owns the
 * buffer holding queries, rows and outputs.
 */

export const uleb = (value: number): number[] => {
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

const simd = (code: number): number[] => [0xfd, ...uleb(code)];

export const op = {
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
  i32Mul: [0x6c],
  i32Load: [0x28, 2, 0],
  i32Eqz: [0x45],
  i32LtU: [0x49],
  i32Store: [0x36, 2, 0],
  v128Load: [0xfd, 0x00, 0, 0],
  v128Zero: [0xfd, 0x0c, ...new Array<number>(16).fill(0)],
  v128Xor: simd(0x51),
  extendLow: simd(0x87), // i16x8.extend_low_i8x16_s
  extendHigh: simd(0x88), // i16x8.extend_high_i8x16_s
  dot: simd(0xba), // i32x4.dot_i16x8_s
  add: simd(0xae), // i32x4.add
  popcnt: simd(0x62), // i8x16.popcnt
  i16Add: simd(0x8e), // i16x8.add
  pairwiseU8: simd(0x7d), // i16x8.extadd_pairwise_i8x16_u
  pairwiseU16: simd(0x7f), // i32x4.extadd_pairwise_i16x8_u
  lane: (i: number) => [...simd(0x1b), i], // i32x4.extract_lane
};

/** `local += value` (value: the instructions that push it). */
export const addTo = (local: number, value: number[]): number[] => [...op.get(local), ...value, ...op.i32Add, ...op.set(local)];

/** `while (counter != 0) { body; counter -= 1 }`: the outer loop of every kernel. */
export const countDown = (counter: number, body: number[]): number[] => [
  ...op.block,
  ...op.loop,
  ...op.get(counter), ...op.i32Eqz, ...op.brIf(1),
  ...body,
  ...op.get(counter), ...op.i32(1), ...op.i32Sub, ...op.set(counter),
  ...op.br(0),
  ...op.end,
  ...op.end,
];

/** The horizontal sum of the i32x4 in `local`, left on the stack. */
export const sumLanes = (local: number): number[] => [
  ...op.get(local), ...op.lane(0), ...op.get(local), ...op.lane(1), ...op.i32Add,
  ...op.get(local), ...op.lane(2), ...op.i32Add, ...op.get(local), ...op.lane(3), ...op.i32Add,
];

export interface KernelFunction {
  name: string;
  /** i32 parameters; the function returns nothing. */
  params: number;
  /** Locals after the parameters: this many i32s, then this many v128s. */
  i32Locals: number;
  v128Locals: number;
  body: number[];
}

/** A module exporting `functions`, all of the same shape (i32 parameters, no result), on an imported memory. */
export function assembleModule(functions: readonly KernelFunction[]): Uint8Array<ArrayBuffer> {
  const types = functions.map((f) => [0x60, f.params, ...new Array<number>(f.params).fill(I32), 0]);
  const codes = functions.map((f) => {
    const code = [...uleb(2), f.i32Locals, I32, f.v128Locals, V128, ...f.body, ...op.end];
    return [...uleb(code.length), ...code];
  });
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [functions.length, ...types.flat()]),
    ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 1]),
    ...section(3, [functions.length, ...functions.map((_, i) => i)]),
    ...section(7, [functions.length, ...functions.flatMap((f, i) => [...name(f.name), 0x00, i])]),
    ...section(10, [functions.length, ...codes.flat()]),
  ]);
}

/** Compiles `bytes`, or null where WebAssembly or its SIMD is missing (or disallowed, e.g. by a CSP). */
function compileSimd(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module | null {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
  } catch {
    return null;
  }
}

/** A module compiled once and kept (null included: no SIMD here). */
export interface CompiledOnce {
  /** The module, compiled now if it is not yet. */
  (): WebAssembly.Module | null;
  /**
   * The module without waiting: undefined while it compiles off the thread (the first call starts that). A
   * synchronous compile waits behind JavaScriptCore's background tier-up of hot WebAssembly, SQLite's in any worker
   * of the process: in WebKitGTK it blocked a worker for 16–80 s.
   */
  soon(): WebAssembly.Module | null | undefined;
}

/** `assemble`'s module, assembled and compiled on the first call and kept (compileSimd's answer, null included). */
export function simdModuleOnce(assemble: () => Uint8Array<ArrayBuffer>): CompiledOnce {
  let compiled: WebAssembly.Module | null | undefined;
  let compiling: Promise<void> | undefined;
  const now = () => {
    if (compiled === undefined) compiled = compileSimd(assemble());
    return compiled;
  };
  now.soon = () => {
    if (compiled !== undefined) return compiled;
    if (typeof WebAssembly !== 'object') return (compiled = null);
    compiling ??= WebAssembly.compile(assemble()).then(
      (module) => void (compiled ??= module),
      () => void (compiled ??= null),
    );
    return undefined;
  };
  return now;
}

const PAGE = 65536;

/** A WebAssembly memory with a kernel module instantiated on it. */
export class KernelMemory {
  private readonly memory: WebAssembly.Memory;
  readonly exports: WebAssembly.Exports;

  constructor(module: WebAssembly.Module, bytes: number) {
    this.memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    this.exports = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports;
  }

  /** Views on it die when it grows: re-create them after `grow`. */
  get buffer(): ArrayBuffer {
    return this.memory.buffer;
  }

  /** Grows the memory to at least `bytes`. */
  grow(bytes: number): void {
    const pages = Math.ceil(bytes / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (pages > 0) this.memory.grow(pages);
  }
}
