/**
 * The inner loop of the quantised vector scan: int8 dot products of one query against many rows, written to an
 * Int32Array, in WebAssembly SIMD (16 bytes per step: widen to int16, multiply-add pairs, accumulate int32).
 *
 * The WebAssembly module is tiny and assembled byte by byte (wasm-encoder.ts): it imports its memory, so the
 * caller owns the buffer that holds the query, the rows and the output.
 *
 *   dots(rows, count, stride, query, out): for r in 0..count: out[r] = Σ_j rows[r*stride + j] * query[j]
 *   dotsAt(rows, list, count, stride, query, out): the same for the rows numbered in list[0..count]
 *   (byte offsets into the memory; stride is a multiple of 16 and rows are zero-padded to it)
 */
import { addTo, assembleModule, countDown, KernelMemory, op, simdModuleOnce, sumLanes, uleb, type CompiledOnce, type KernelFunction } from './wasm-encoder.js';

export interface Int8Kernel {
  /** The memory the offsets below refer to. Views on it die when it grows: re-create them after `grow`. */
  readonly buffer: ArrayBuffer;
  /** Grows the memory to at least `bytes`. */
  grow(bytes: number): void;
  dots(rows: number, count: number, stride: number, query: number, out: number): void;
  /** The same for the `count` row numbers (int32) at byte offset `list`: out[i] = row list[i]'s dot product. */
  dotsAt(rows: number, list: number, count: number, stride: number, query: number, out: number): void;
  /**
   * Queries in groups of four against every row, in one pass over the rows: out[q·count + r] = row r · query q,
   * over the first `length` bytes of each row (a multiple of 16, at most stride). `queries` holds the groups'
   * codes widened to int16 and interleaved (interleaveQueries).
   */
  dotsMany(rows: number, count: number, stride: number, length: number, queries: number, groups: number, out: number): void;
}

/**
 * One row's int8 dot product with the query: leaves the i32x4 partial sums in ACC (locals as in both kernels).
 *
 *   acc = i32x4(0); j = 0
 *   do:                                                     ;; 16 int8 codes a step
 *     a = v128.load(row + j); b = v128.load(query + j)
 *     acc = i32x4.add(acc, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(a), i16x8.extend_low_i8x16_s(b)))
 *     acc = i32x4.add(acc, i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(a), i16x8.extend_high_i8x16_s(b)))
 *     j += 16
 *   while j <u stride
 *
 * Codes are widened to int16 before multiplying, so −128·−128 is exact; dot_i16x8_s adds two products into
 * each i32 lane.
 */
const rowDot = (ROW: number, QUERY: number, STRIDE: number, J: number, ACC: number, A: number, B: number): number[] => [
  ...op.v128Zero, ...op.set(ACC),
  ...op.i32(0), ...op.set(J),
  ...op.loop,
  ...op.get(ROW), ...op.get(J), ...op.i32Add, ...op.v128Load, ...op.set(A),
  ...op.get(QUERY), ...op.get(J), ...op.i32Add, ...op.v128Load, ...op.set(B),
  ...op.get(ACC),
  ...op.get(A), ...op.extendLow, ...op.get(B), ...op.extendLow, ...op.dot, ...op.add,
  ...op.get(A), ...op.extendHigh, ...op.get(B), ...op.extendHigh, ...op.dot, ...op.add,
  ...op.set(ACC),
  ...op.get(J), ...op.i32(16), ...op.i32Add, ...op.tee(J), ...op.get(STRIDE), ...op.i32LtU, ...op.brIf(0),
  ...op.end,
];

function loopKernels(): KernelFunction[] {
  // dots: params 0 rows, 1 count, 2 stride, 3 query, 4 out; locals 5 j (i32), 6 acc, 7 a, 8 b (v128)
  //   while count != 0:
  //     rowDot(row = rows); i32.store(out, acc[0] + acc[1] + acc[2] + acc[3])
  //     out += 4; rows += stride; count -= 1
  const dots = (() => {
    const [ROWS, COUNT, STRIDE, QUERY, OUT, J, ACC, A, B] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
    return countDown(COUNT, [
      ...rowDot(ROWS, QUERY, STRIDE, J, ACC, A, B),
      ...op.get(OUT), ...sumLanes(ACC), ...op.i32Store,
      ...addTo(OUT, op.i32(4)),
      ...addTo(ROWS, op.get(STRIDE)),
    ]);
  })();
  // dotsAt: params 0 rows, 1 list, 2 count, 3 stride, 4 query, 5 out; locals 6 j, 7 row (i32), 8 acc, 9 a, 10 b (v128)
  //   while count != 0:
  //     row = rows + i32.load(list) · stride
  //     rowDot(row); i32.store(out, acc[0] + acc[1] + acc[2] + acc[3])
  //     out += 4; list += 4; count -= 1
  const dotsAt = (() => {
    const [ROWS, LIST, COUNT, STRIDE, QUERY, OUT, J, ROW, ACC, A, B] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    return countDown(COUNT, [
      ...op.get(ROWS), ...op.get(LIST), ...op.i32Load, ...op.get(STRIDE), ...op.i32Mul, ...op.i32Add, ...op.set(ROW),
      ...rowDot(ROW, QUERY, STRIDE, J, ACC, A, B),
      ...op.get(OUT), ...sumLanes(ACC), ...op.i32Store,
      ...addTo(OUT, op.i32(4)),
      ...addTo(LIST, op.i32(4)),
    ]);
  })();
  // dotsMany: params 0 rows, 1 count, 2 stride, 3 length, 4 queries, 5 groups, 6 out; i32 locals 7 j, 8 groups
  // left, 9 group start, 10 query pointer, 11 at, 12 step; v128 locals 13 a, 14 a low, 15 a high (int16), 16-19
  // four accumulators. Four queries per pass over a row: each 16-byte row chunk is loaded and widened once for
  // all four, and the queries come widened already, interleaved chunk by chunk so that every query load has a
  // constant offset.
  //   step = 4 · count                                      ;; bytes from one query's outputs to the next's
  //   while count != 0:                                     ;; each row
  //     start = queries; at = out; left = groups
  //     while left != 0:                                    ;; each group of four queries
  //       acc0..acc3 = i32x4(0); query = start; j = 0
  //       do:
  //         a = v128.load(rows + j)
  //         low = i16x8.extend_low_i8x16_s(a); high = i16x8.extend_high_i8x16_s(a)
  //         for k in 0..3 (unrolled):
  //           acc_k = i32x4.add(acc_k, i32x4.dot_i16x8_s(low, v128.load(query + 32k)))
  //           acc_k = i32x4.add(acc_k, i32x4.dot_i16x8_s(high, v128.load(query + 32k + 16)))
  //         query += 128; j += 16
  //       while j <u length
  //       for k in 0..3: i32.store(at, acc_k[0] + acc_k[1] + acc_k[2] + acc_k[3]); at += step
  //       start += 8 · stride; left -= 1                    ;; the next group (groupBytes)
  //     out += 4; rows += stride; count -= 1
  const dotsMany = (() => {
    const [ROWS, COUNT, STRIDE, LENGTH, QUERIES, GROUPS, OUT, J, LEFT, START, QUERY, AT, STEP, A, LOW, HIGH, ACC0] = [
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    ];
    const lanes = [0, 1, 2, 3];
    const loadAt = (offset: number) => [0xfd, 0x00, 0, ...uleb(offset)];
    const step = (k: number) => [
      ...op.get(ACC0 + k),
      ...op.get(LOW), ...op.get(QUERY), ...loadAt(32 * k), ...op.dot, ...op.add,
      ...op.get(HIGH), ...op.get(QUERY), ...loadAt(32 * k + 16), ...op.dot, ...op.add,
      ...op.set(ACC0 + k),
    ];
    return [
      ...op.get(COUNT), ...op.i32(4), ...op.i32Mul, ...op.set(STEP),
      ...countDown(COUNT, [
        ...op.get(QUERIES), ...op.set(START), ...op.get(OUT), ...op.set(AT), ...op.get(GROUPS), ...op.set(LEFT),
        ...countDown(LEFT, [
          ...lanes.flatMap((k) => [...op.v128Zero, ...op.set(ACC0 + k)]),
          ...op.get(START), ...op.set(QUERY),
          ...op.i32(0), ...op.set(J),
          ...op.loop,
          ...op.get(ROWS), ...op.get(J), ...op.i32Add, ...op.v128Load, ...op.set(A),
          ...op.get(A), ...op.extendLow, ...op.set(LOW), ...op.get(A), ...op.extendHigh, ...op.set(HIGH),
          ...lanes.flatMap(step),
          ...lanes.flatMap(() => addTo(QUERY, op.i32(32))), // += 128 (op.i32 takes constants < 64)
          ...op.get(J), ...op.i32(16), ...op.i32Add, ...op.tee(J), ...op.get(LENGTH), ...op.i32LtU, ...op.brIf(0),
          ...op.end,
          ...lanes.flatMap((k) => [...op.get(AT), ...sumLanes(ACC0 + k), ...op.i32Store, ...addTo(AT, op.get(STEP))]),
          ...addTo(START, [...op.get(STRIDE), ...op.i32(8), ...op.i32Mul]),
        ]),
        ...addTo(OUT, op.i32(4)),
        ...addTo(ROWS, op.get(STRIDE)),
      ]),
    ];
  })();
  return [
    { name: 'dots', params: 5, i32Locals: 1, v128Locals: 3, body: dots },
    { name: 'dotsAt', params: 6, i32Locals: 2, v128Locals: 3, body: dotsAt },
    { name: 'dotsMany', params: 7, i32Locals: 6, v128Locals: 7, body: dotsMany },
  ];
}

/**
 * The SIMD128 module, or null where WebAssembly or its SIMD is missing. (Relaxed SIMD's int8 dot product was
 * tried: no faster here, and its operand-range rules make it easy to get wrong.)
 */
const simdModule = simdModuleOnce(() => assembleModule(loopKernels()));

/**
 * dotsFixed / dotsAtFixed: dots and dotsAt for one stride S = 16·steps, unrolled: the query is loaded and widened
 * to int16 once per call into locals (qlo_s, qhi_s), so a row costs one load, two widenings, two dot_i16x8_s and
 * two adds per 16 codes, with no inner loop. Same integer sums as the loop kernels.
 *
 *   qlo_s = i16x8.extend_low_i8x16_s(v128.load(query + 16·s)); qhi_s = …extend_high…   for s < steps
 *   while count != 0:
 *     row = rows (dotsFixed) or rows + i32.load(list) · stride (dotsAtFixed)
 *     acc = Σ_s i32x4.dot_i16x8_s(extend_low(v128.load(row + 16·s)), qlo_s) + i32x4.dot_i16x8_s(extend_high(…), qhi_s)
 *     i32.store(out, acc[0] + acc[1] + acc[2] + acc[3]); out += 4; …
 */
function fixedRowDot(ROW: number, A: number, QLO: number, steps: number): number[] {
  const loadAt = (offset: number) => [0xfd, 0x00, 0, ...uleb(offset)];
  return Array.from({ length: steps }, (_, s) => [
    ...op.get(ROW), ...loadAt(16 * s), ...op.set(A),
    ...op.get(A), ...op.extendLow, ...op.get(QLO + 2 * s), ...op.dot, ...(s > 0 ? op.add : []),
    ...op.get(A), ...op.extendHigh, ...op.get(QLO + 2 * s + 1), ...op.dot, ...op.add,
  ]).flat();
}

function widenQuery(QUERY: number, A: number, QLO: number, steps: number): number[] {
  const loadAt = (offset: number) => [0xfd, 0x00, 0, ...uleb(offset)];
  return Array.from({ length: steps }, (_, s) => [
    ...op.get(QUERY), ...loadAt(16 * s), ...op.set(A),
    ...op.get(A), ...op.extendLow, ...op.set(QLO + 2 * s),
    ...op.get(A), ...op.extendHigh, ...op.set(QLO + 2 * s + 1),
  ]).flat();
}

function fixedKernels(steps: number): KernelFunction[] {
  // dotsFixed: params 0 rows, 1 count, 2 stride, 3 query, 4 out; v128 locals 5 acc, 6 a, 7.. qlo_s, qhi_s
  const dotsFixed = (() => {
    const [ROWS, COUNT, STRIDE, QUERY, OUT, ACC, A, QLO] = [0, 1, 2, 3, 4, 5, 6, 7];
    return [
      ...widenQuery(QUERY, A, QLO, steps),
      ...countDown(COUNT, [
        ...fixedRowDot(ROWS, A, QLO, steps), ...op.set(ACC),
        ...op.get(OUT), ...sumLanes(ACC), ...op.i32Store,
        ...addTo(OUT, op.i32(4)),
        ...addTo(ROWS, op.get(STRIDE)),
      ]),
    ];
  })();
  // dotsAtFixed: params 0 rows, 1 list, 2 count, 3 stride, 4 query, 5 out; i32 locals 6 left, 7-10 row_0..3;
  // v128 locals 11-14 acc_0..3, 15 a, 16.. q. Four listed rows at a time, their loads interleaved chunk by chunk:
  // the rows are scattered, so this keeps several of them in flight from memory at once instead of one.
  //   left = count >> 2; count = count & 3
  //   while left != 0:
  //     row_j = rows + i32.load(list + 4j) · stride for j < 4
  //     for s < steps: for j < 4: acc_j (+)= dot(extend_low(v128.load(row_j + 16·s)), qlo_s) + dot(extend_high(…), qhi_s)
  //     i32.store(out + 4j, Σ lanes of acc_j) for j < 4; out += 16; list += 16
  //   then the last count rows one at a time, as dotsFixed does with row = rows + i32.load(list) · stride
  const dotsAtFixed = (() => {
    const [ROWS, LIST, COUNT, STRIDE, QUERY, OUT, LEFT, ROW0, ACC0, A, QLO] = [0, 1, 2, 3, 4, 5, 6, 7, 11, 15, 16];
    const lanes = [0, 1, 2, 3];
    const loadAt = (offset: number) => [0xfd, 0x00, 0, ...uleb(offset)];
    const i32LoadAt = (offset: number) => [0x28, 2, ...uleb(offset)];
    const i32StoreAt = (offset: number) => [0x36, 2, ...uleb(offset)];
    const [i32And, i32ShrU] = [[0x71], [0x76]];
    const rowAddress = (j: number) => [...op.get(ROWS), ...op.get(LIST), ...i32LoadAt(4 * j), ...op.get(STRIDE), ...op.i32Mul, ...op.i32Add, ...op.set(ROW0 + j)];
    const chunk = (s: number, j: number) => [
      ...op.get(ROW0 + j), ...loadAt(16 * s), ...op.set(A),
      ...(s > 0 ? op.get(ACC0 + j) : []),
      ...op.get(A), ...op.extendLow, ...op.get(QLO + 2 * s), ...op.dot, ...(s > 0 ? op.add : []),
      ...op.get(A), ...op.extendHigh, ...op.get(QLO + 2 * s + 1), ...op.dot, ...op.add,
      ...op.set(ACC0 + j),
    ];
    return [
      ...widenQuery(QUERY, A, QLO, steps),
      ...op.get(COUNT), ...op.i32(2), ...i32ShrU, ...op.set(LEFT),
      ...op.get(COUNT), ...op.i32(3), ...i32And, ...op.set(COUNT),
      ...countDown(LEFT, [
        ...lanes.flatMap(rowAddress),
        ...Array.from({ length: steps }, (_, s) => lanes.flatMap((j) => chunk(s, j))).flat(),
        ...lanes.flatMap((j) => [...op.get(OUT), ...sumLanes(ACC0 + j), ...i32StoreAt(4 * j)]),
        ...addTo(OUT, op.i32(16)),
        ...addTo(LIST, op.i32(16)),
      ]),
      ...countDown(COUNT, [
        ...rowAddress(0),
        ...fixedRowDot(ROW0, A, QLO, steps), ...op.set(ACC0),
        ...op.get(OUT), ...sumLanes(ACC0), ...op.i32Store,
        ...addTo(OUT, op.i32(4)),
        ...addTo(LIST, op.i32(4)),
      ]),
    ];
  })();
  return [
    { name: 'dotsFixed', params: 5, i32Locals: 0, v128Locals: 2 + 2 * steps, body: dotsFixed },
    { name: 'dotsAtFixed', params: 6, i32Locals: 5, v128Locals: 5 + 2 * steps, body: dotsAtFixed },
  ];
}

/** Longest stride (in 16-byte steps) given its own unrolled kernels: 1,024 dims; longer rows use the loop kernels. */
const MAX_FIXED_STEPS = 64;
const fixedModules = new Map<number, CompiledOnce>();

function fixedModule(stride: number): CompiledOnce {
  let compiled = fixedModules.get(stride);
  if (!compiled) {
    // The loop kernels and the unrolled ones in one module, so they share the memory.
    compiled = simdModuleOnce(() => assembleModule([...loopKernels(), ...fixedKernels(stride / 16)]));
    fixedModules.set(stride, compiled);
  }
  return compiled;
}

type DotsFn = (rows: number, count: number, stride: number, query: number, out: number) => void;
type DotsAtFn = (rows: number, list: number, count: number, stride: number, query: number, out: number) => void;
type DotsManyFn = (rows: number, count: number, stride: number, length: number, queries: number, groups: number, out: number) => void;

class SimdKernel extends KernelMemory implements Int8Kernel {
  readonly dots: DotsFn;
  readonly dotsAt: DotsAtFn;
  readonly dotsMany: DotsManyFn;

  constructor(module: WebAssembly.Module, bytes: number, madeFor?: number) {
    super(module, bytes);
    const dots = this.exports.dots as DotsFn;
    const dotsAt = this.exports.dotsAt as DotsAtFn;
    this.dotsMany = this.exports.dotsMany as DotsManyFn;
    const dotsFixed = this.exports.dotsFixed as DotsFn | undefined;
    const dotsAtFixed = this.exports.dotsAtFixed as DotsAtFn | undefined;
    if (!dotsFixed || !dotsAtFixed) {
      this.dots = dots;
      this.dotsAt = dotsAt;
      return;
    }
    this.dots = (rows, count, stride, query, out) => (stride === madeFor ? dotsFixed : dots)(rows, count, stride, query, out);
    this.dotsAt = (rows, list, count, stride, query, out) => (stride === madeFor ? dotsAtFixed : dotsAt)(rows, list, count, stride, query, out);
  }
}

/**
 * A kernel with at least `bytes` of memory, or null where WebAssembly SIMD is unavailable: there a JS int8 loop
 * is slower than the float32 scan (measured), so callers keep the exact float scan instead. With `stride` (a
 * multiple of 16, up to 1,024), dots and dotsAt run unrolled kernels for that stride (other strides still work).
 */
export function createInt8Kernel(bytes: number, stride?: number): Int8Kernel | null {
  if (hasFixed(stride)) {
    const module = fixedModule(stride)();
    if (module) return new SimdKernel(module, bytes, stride);
  }
  const module = simdModule();
  return module ? new SimdKernel(module, bytes) : null;
}

/**
 * createInt8Kernel without waiting on a compile (CompiledOnce.soon): undefined while no module is compiled yet; the
 * loop kernels while only they are.
 */
export function createInt8KernelSoon(bytes: number, stride?: number): Int8Kernel | null | undefined {
  const fixed = hasFixed(stride) ? fixedModule(stride).soon() : null;
  if (fixed) return new SimdKernel(fixed, bytes, stride);
  const module = simdModule.soon();
  if (module === undefined) return undefined;
  return module ? new SimdKernel(module, bytes) : fixed;
}

function hasFixed(stride: number | undefined): stride is number {
  return stride !== undefined && stride > 0 && stride % 16 === 0 && stride / 16 <= MAX_FIXED_STEPS;
}

/** Bytes of dotsMany's query area per group of four queries of `stride` int8 codes. */
export const groupBytes = (stride: number): number => stride * 8;

/**
 * Lays out int8 query codes (`codes`: one row of `stride` per query, zero-padded) for dotsMany at `out`: per group
 * of four, per 16-code chunk, each query's chunk widened to int16 (32 bytes). A missing fourth query counts as zeros.
 */
export function interleaveQueries(codes: Int8Array, count: number, stride: number, out: Int16Array): void {
  const groups = Math.ceil(count / 4);
  out.fill(0, 0, groups * stride * 4);
  for (let q = 0; q < count; q++) {
    const group = q >> 2;
    const slot = q & 3;
    for (let j = 0; j < stride; j++) {
      const chunk = j >> 4;
      out[((group * (stride >> 4) + chunk) * 4 + slot) * 16 + (j & 15)] = codes[q * stride + j] as number;
    }
  }
}
