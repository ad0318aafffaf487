import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createInt8Kernel, groupBytes, interleaveQueries, type Int8Kernel } from '../../../src/vector/int8-kernel.js';
import { createHammingKernel, type HammingKernel } from '../../../src/vector/sign-codes.js';
import { int8RowDot, randomSource } from '../helpers/vectors.js';
import { runs } from '../helpers/tier.js';

// Each WebAssembly kernel against a plain-JS loop that says what it computes. Offsets are byte offsets into the
// kernel's memory; strides are multiples of 16 (the kernels' step).

const STRIDES = [16, 32, 112, 384] as const;
/** Written past the end of every output: a kernel that writes one slot too many changes it. */
const SENTINEL = 0x5a5a5a5a;

/** Σ a[j]·b[j] over j < length: the int8 dot product every int8 kernel computes. */
function int8Dot(a: Int8Array, aAt: number, b: Int8Array, bAt: number, length: number): number {
  let sum = 0;
  for (let j = 0; j < length; j++) sum += (a[aAt + j] as number) * (b[bAt + j] as number);
  return sum;
}

/** The number of bits that differ: what the Hamming kernel computes per row. */
function hammingDistance(a: Uint8Array, aAt: number, b: Uint8Array, bAt: number, length: number): number {
  let distance = 0;
  for (let j = 0; j < length; j++) {
    for (let x = (a[aAt + j] as number) ^ (b[bAt + j] as number); x; x &= x - 1) distance++;
  }
  return distance;
}

/** `n` int8 codes, a quarter of them at the extremes (−128 or 127), the rest uniform. */
function int8Codes(seed: number, n: number): Int8Array {
  const { random } = randomSource(seed);
  return Int8Array.from({ length: n }, () => {
    const u = random();
    return u < 0.125 ? -128 : u < 0.25 ? 127 : Math.floor(random() * 256) - 128;
  });
}

/** `n` bytes, a quarter of them 0x00 or 0xff, the rest uniform. */
function bitCodes(seed: number, n: number): Uint8Array {
  return Uint8Array.from(int8Codes(seed, n), (code) => code & 0xff);
}

/** Byte offsets of consecutive areas of the given sizes, each 16-aligned, and the bytes they need in all. */
function areas(...sizes: number[]): { at: number[]; bytes: number } {
  const at: number[] = [];
  let next = 0;
  for (const size of sizes) {
    at.push(next);
    next += Math.ceil(size / 16) * 16;
  }
  return { at, bytes: next };
}

/** The loop kernels, or with `madeFor` the kernel whose dots and dotsAt are unrolled for that stride. */
function int8Kernel(bytes: number, madeFor?: number): Int8Kernel {
  const kernel = createInt8Kernel(bytes, madeFor);
  expect(kernel).not.toBeNull(); // Node has WebAssembly SIMD
  return kernel!;
}

/** The generic kernel, or with `madeFor` the one whose `hamming` is unrolled for that stride (and has `select`). */
function hammingKernel(bytes: number, madeFor?: number): HammingKernel {
  const kernel = createHammingKernel(bytes, madeFor);
  expect(kernel).not.toBeNull();
  return kernel!;
}

/** An int32 output area of `count` slots, plus one sentinel slot after it. */
function output(buffer: ArrayBuffer, at: number, count: number): Int32Array {
  const out = new Int32Array(buffer, at, count + 1);
  out.fill(SENTINEL);
  return out;
}

const seeds = fc.integer({ min: 1, max: 2 ** 31 - 1 });
/** Which kernel a test runs on: the loop kernels, the one unrolled for the stride used, or one unrolled for another stride. */
const madeFors = fc.constantFrom('generic', 'this', 'other');
const kernelStride = (madeFor: string, stride: number) => (madeFor === 'generic' ? undefined : madeFor === 'this' ? stride : stride === 16 ? 32 : 16);
const strides = fc.constantFrom(...STRIDES);
const rowCounts = fc.integer({ min: 0, max: 40 });

describe('int8 kernels', () => {
  it('dots: out[r] = Σ_j rows[r·stride + j] · query[j]', () => {
    fc.assert(
      fc.property(seeds, strides, rowCounts, madeFors, (seed, stride, count, madeFor) => {
        const { at: [queryAt, rowsAt, outAt], bytes } = areas(stride, count * stride, (count + 1) * 4);
        const kernel = int8Kernel(bytes, kernelStride(madeFor, stride));
        const memory = new Int8Array(kernel.buffer);
        memory.set(int8Codes(seed, stride + count * stride), queryAt!);
        const out = output(kernel.buffer, outAt!, count);
        kernel.dots(rowsAt!, count, stride, queryAt!, outAt!);
        const expected = Array.from({ length: count }, (_, r) => int8Dot(memory, rowsAt! + r * stride, memory, queryAt!, stride));
        expect(Array.from(out)).toEqual([...expected, SENTINEL]);
      }),
      { numRuns: runs(200), examples: [[1, 16, 0, 'generic'], [2, 384, 1, 'this'], [3, 112, 5, 'this'], [4, 16, 3, 'this']] },
    );
  });

  it('dotsAt: out[i] = row list[i] · query, for any order and repeats of row numbers', () => {
    fc.assert(
      fc.property(seeds, strides, fc.integer({ min: 1, max: 30 }), fc.array(fc.nat(), { maxLength: 40 }), madeFors, (seed, stride, rows, picks, madeFor) => {
        const list = picks.map((pick) => pick % rows);
        const { at: [queryAt, rowsAt, listAt, outAt], bytes } = areas(stride, rows * stride, list.length * 4, (list.length + 1) * 4);
        const kernel = int8Kernel(bytes, kernelStride(madeFor, stride));
        const memory = new Int8Array(kernel.buffer);
        memory.set(int8Codes(seed, stride + rows * stride), queryAt!);
        new Int32Array(kernel.buffer, listAt!, list.length).set(list);
        const out = output(kernel.buffer, outAt!, list.length);
        kernel.dotsAt(rowsAt!, listAt!, list.length, stride, queryAt!, outAt!);
        const expected = list.map((row) => int8Dot(memory, rowsAt! + row * stride, memory, queryAt!, stride));
        expect(Array.from(out)).toEqual([...expected, SENTINEL]);
      }),
      { numRuns: runs(200), examples: [[1, 16, 1, [], 'this'], [2, 384, 3, [2, 0, 2], 'this'], [3, 384, 3, [2, 0, 2], 'other']] },
    );
  });

  it('dotsMany: out[q·count + r] = Σ_{j < length} rows[r·stride + j] · query_q[j], zeros for the padding queries of the last group', () => {
    fc.assert(
      fc.property(seeds, strides, rowCounts, fc.nat(), (seed, stride, count, lengthPick) => {
        const length = 16 * (1 + (lengthPick % (stride / 16))); // a multiple of 16, at most stride
        for (const queries of [0, 1, 3, 4, 5, 9]) {
          const groups = Math.ceil(queries / 4);
          const { at: [rowsAt, queriesAt, outAt], bytes } = areas(count * stride, groups * groupBytes(stride), (4 * groups * count + 1) * 4);
          const kernel = int8Kernel(bytes);
          const memory = new Int8Array(kernel.buffer);
          memory.set(int8Codes(seed, count * stride), rowsAt!);
          const queryCodes = int8Codes(seed + 1, queries * stride);
          interleaveQueries(queryCodes, queries, stride, new Int16Array(kernel.buffer, queriesAt!, (groups * groupBytes(stride)) / 2));
          const out = output(kernel.buffer, outAt!, 4 * groups * count);
          kernel.dotsMany(rowsAt!, count, stride, length, queriesAt!, groups, outAt!);
          const expected = Array.from({ length: 4 * groups * count }, (_, i) => {
            const q = Math.floor(i / count);
            const r = i % count;
            return q < queries ? int8Dot(memory, rowsAt! + r * stride, queryCodes, q * stride, length) : 0;
          });
          expect(Array.from(out)).toEqual([...expected, SENTINEL]);
        }
      }),
      { numRuns: runs(60), examples: [[1, 16, 0, 0], [2, 384, 1, 0], [3, 112, 7, 6]] },
    );
  });

  it('dots on a fixed example: Node has the SIMD kernel and its int8 dot products are exact', () => {
    const stride = 32;
    const kernel = createInt8Kernel(4096);
    expect(kernel).not.toBeNull();
    const bytes = new Int8Array(kernel!.buffer);
    for (let i = 0; i < stride * 4; i++) bytes[i] = ((i * 37) % 255) - 127;
    kernel!.dots(stride, 3, stride, 0, 1024);
    const out = new Int32Array(kernel!.buffer, 1024, 3);
    for (let r = 0; r < 3; r++) expect(out[r]).toBe(int8RowDot(bytes, stride, r));
  });

  it('dotsAt on a fixed gather list with a repeated row', () => {
    const kernel = createInt8Kernel(1 << 16)!;
    const stride = 48;
    const bytes = new Int8Array(kernel.buffer);
    for (let i = 0; i < stride * 11; i++) bytes[i] = ((i * 53) % 255) - 127;
    const list = [7, 0, 3, 9, 3];
    new Int32Array(kernel.buffer, 4096, list.length).set(list);
    kernel.dotsAt(stride, 4096, list.length, stride, 0, 8192);
    const out = new Int32Array(kernel.buffer, 8192, list.length);
    list.forEach((row, i) => expect(out[i]).toBe(int8RowDot(bytes, stride, row)));
  });

  it('widens before multiplying: rows and queries at −128 and 127 give exact sums', () => {
    const stride = 384;
    for (const [a, b, madeFor] of [[-128, -128, undefined], [-128, 127, undefined], [127, 127, undefined], [-128, -128, stride], [-128, 127, stride]] as const) {
      const { at: [queryAt, rowsAt, listAt, manyAt, outAt], bytes } = areas(stride, 2 * stride, 8, groupBytes(stride), 4 * 2 * 4);
      const kernel = int8Kernel(bytes, madeFor);
      const memory = new Int8Array(kernel.buffer);
      memory.fill(b, queryAt!, queryAt! + stride);
      memory.fill(a, rowsAt!, rowsAt! + 2 * stride);
      const expected = stride * a * b;
      const out = new Int32Array(kernel.buffer, outAt!, 8);
      kernel.dots(rowsAt!, 2, stride, queryAt!, outAt!);
      expect(Array.from(out.subarray(0, 2))).toEqual([expected, expected]);
      new Int32Array(kernel.buffer, listAt!, 2).set([1, 0]);
      kernel.dotsAt(rowsAt!, listAt!, 2, stride, queryAt!, outAt!);
      expect(Array.from(out.subarray(0, 2))).toEqual([expected, expected]);
      const queryCodes = new Int8Array(stride).fill(b);
      interleaveQueries(queryCodes, 1, stride, new Int16Array(kernel.buffer, manyAt!, groupBytes(stride) / 2));
      kernel.dotsMany(rowsAt!, 2, stride, stride, manyAt!, 1, outAt!);
      expect(Array.from(out)).toEqual([expected, expected, 0, 0, 0, 0, 0, 0]);
    }
  });
});

describe('Hamming kernel', () => {
  it('out[r] = popcount(rows[r] xor query), and histogram[out[r]] += 1 on top of what it held', () => {
    fc.assert(
      // made for: nothing (generic), this stride (unrolled; 496 is the longest), or another one (falls back to generic).
      fc.property(seeds, fc.constantFrom(...STRIDES, 48, 496, 512), rowCounts, fc.constantFrom('generic', 'this', 'other'), (seed, stride, count, madeFor) => {
        const bins = stride * 8 + 1; // distances 0..stride·8
        const { at: [queryAt, histogramAt, rowsAt, outAt], bytes } = areas(stride, bins * 4, (count + 2) * stride, (count + 3) * 4);
        const kernel = hammingKernel(bytes, madeFor === 'generic' ? undefined : madeFor === 'this' ? stride : stride === 48 ? 32 : 48);
        const memory = new Uint8Array(kernel.buffer);
        const query = bitCodes(seed, stride);
        memory.set(query, queryAt!);
        memory.set(bitCodes(seed + 1, count * stride), rowsAt!);
        // Two more rows: the query itself (distance 0) and its complement (every bit differs).
        memory.set(query, rowsAt! + count * stride);
        memory.set(query.map((byte) => ~byte & 0xff), rowsAt! + (count + 1) * stride);
        const rows = count + 2;
        const histogram = new Int32Array(kernel.buffer, histogramAt!, bins);
        const { random } = randomSource(seed + 2);
        const before = Int32Array.from({ length: bins }, () => Math.floor(random() * 3));
        histogram.set(before);
        const out = output(kernel.buffer, outAt!, rows);
        kernel.hamming(rowsAt!, rows, stride, queryAt!, outAt!, histogramAt!);
        const expected = Array.from({ length: rows }, (_, r) => hammingDistance(memory, rowsAt! + r * stride, memory, queryAt!, stride));
        expect(expected.slice(-2)).toEqual([0, stride * 8]);
        expect(Array.from(out)).toEqual([...expected, SENTINEL]);
        const counted = Array.from(before);
        for (const distance of expected) counted[distance]!++;
        expect(Array.from(histogram)).toEqual(counted);
      }),
      { numRuns: runs(200), examples: [[1, 16, 0, 'this'], [2, 48, 1, 'this'], [3, 496, 5, 'this']] },
    );
  });

  it('writes nothing for zero rows', () => {
    const stride = 16;
    const { at: [queryAt, histogramAt, rowsAt, outAt], bytes } = areas(stride, (stride * 8 + 1) * 4, stride, 4);
    const kernel = hammingKernel(bytes);
    const histogram = new Int32Array(kernel.buffer, histogramAt!, stride * 8 + 1);
    const out = output(kernel.buffer, outAt!, 0);
    kernel.hamming(rowsAt!, 0, stride, queryAt!, outAt!, histogramAt!);
    expect(histogram.every((n) => n === 0)).toBe(true);
    expect(Array.from(out)).toEqual([SENTINEL]);
  });

  it('select: every row below the cut, then rows at the cut (lowest first) up to atCut, as the JS loop picks them', () => {
    fc.assert(
      fc.property(seeds, fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 12 }), (seed, count, spread) => {
        const { random } = randomSource(seed);
        const distances = Array.from({ length: count }, () => Math.floor(random() * spread));
        const cut = Math.floor(random() * (spread + 1));
        const atCut = Math.floor(random() * (count + 2));
        const expected: number[] = [];
        let left = atCut;
        distances.forEach((d, row) => {
          if (d < cut || (d === cut && left-- > 0)) expected.push(row);
        });
        const { at: [distancesAt, outAt], bytes } = areas(count * 4, (count + 1) * 4);
        const kernel = hammingKernel(bytes, 48);
        new Int32Array(kernel.buffer, distancesAt!, count).set(distances);
        const out = output(kernel.buffer, outAt!, count);
        kernel.select!(distancesAt!, count, cut, atCut, outAt!);
        expect(Array.from(out.subarray(0, expected.length))).toEqual(expected);
        expect(out[expected.length]).toBe(SENTINEL);
      }),
      { numRuns: runs(200) },
    );
  });
});
