/**
 * The threshold scan behind supersede ("which stored rows are at least this similar to each of these queries?"):
 * the quantised scan must give exactly the exact scan's rows, and the multi-query int8 kernel the naive products.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createInt8Kernel, groupBytes, interleaveQueries } from '../../../src/vector/int8-kernel.js';
import { QuantizedScan } from '../../../src/vector/quantized-scan.js';
import { normalize } from '../../../src/vector/similarity.js';
import { exactRowsAbove, exactScan } from '../../../src/vector/exact-scan.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import { randomSource } from '../helpers/vectors.js';
import { runs } from '../helpers/tier.js';

/** Unit vectors around a few directions, with exact duplicates and near-duplicates (the hard case for int8 bounds). */
function nearDuplicates(seed: number, n: number, dim: number): Float32Array[] {
  const { random } = randomSource(seed);
  const bases = Array.from({ length: 3 }, () => normalize(Array.from({ length: dim }, () => random() - 0.5)));
  const out: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    const roll = random();
    if (roll < 0.15 && out.length > 0) out.push(out[Math.floor(random() * out.length)]!.slice());
    else {
      const base = bases[i % bases.length]!;
      const noise = roll < 0.5 ? 0.01 : 0.3;
      out.push(normalize(Array.from(base, (x) => x + noise * (random() - 0.5))));
    }
  }
  return out;
}

describe('multi-query int8 kernel (dotsMany)', () => {
  it('equals the naive int8 dot products for any int8 codes, query count and prefix length', () => {
    const code = fc.integer({ min: -128, max: 127 });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }).chain((chunks) =>
          fc.record({
            chunks: fc.constant(chunks),
            length: fc.integer({ min: 1, max: chunks }),
            rows: fc.array(fc.array(code, { minLength: chunks * 16, maxLength: chunks * 16 }), { minLength: 1, maxLength: 20 }),
            queries: fc.array(fc.array(code, { minLength: chunks * 16, maxLength: chunks * 16 }), { minLength: 1, maxLength: 11 }),
          }),
        ),
        ({ chunks, length, rows, queries }) => {
          const stride = chunks * 16;
          const groups = Math.ceil(queries.length / 4);
          const queriesAt = rows.length * stride;
          const outAt = queriesAt + groups * groupBytes(stride);
          const kernel = createInt8Kernel(outAt + groups * 4 * rows.length * 4)!;
          new Int8Array(kernel.buffer).set(rows.flat());
          interleaveQueries(Int8Array.from(queries.flat()), queries.length, stride, new Int16Array(kernel.buffer, queriesAt, (groups * groupBytes(stride)) / 2));
          kernel.dotsMany(0, rows.length, stride, length * 16, queriesAt, groups, outAt);
          const out = new Int32Array(kernel.buffer, outAt, queries.length * rows.length);
          queries.forEach((query, q) =>
            rows.forEach((row, r) => {
              let sum = 0;
              for (let j = 0; j < length * 16; j++) sum += row[j]! * query[j]!;
              expect(out[q * rows.length + r]).toBe(sum);
            }),
          );
        },
      ),
      { numRuns: runs(200) },
    );
  });
});

describe('threshold scan (rowsAbove)', () => {
  it('the int8 scan returns exactly the exact scan\'s rows, scores, order and overflow flag', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 1, max: 300 }),
        fc.constantFrom(3, 16, 40, 100, 200),
        fc.double({ min: 0.5, max: 1.01, noNaN: true }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 1, max: 80 }),
        (seed, n, dim, floor, cap, removes, queryCount) => {
          const vectors = nearDuplicates(seed, n + 6, dim);
          const quantized = new VectorIndex(dim, new QuantizedScan());
          const exact = new VectorIndex(dim, exactScan);
          for (const index of [quantized, exact]) {
            index.setMany(vectors.slice(0, n).map((_, i) => `m${i}`), vectors.slice(0, n));
            for (let r = 0; r < removes; r++) index.remove(`m${(r * 7) % n}`);
          }
          // More queries than one kernel block, some equal to stored rows (score 1), some new.
          const queries = Array.from({ length: queryCount }, (_, q) => vectors[(q * 13) % vectors.length]!);
          const limit = (q: number) => Math.max(0, exact.size - q * 3);
          for (const lim of [undefined, limit]) {
            expect(quantized.matchesAbove(queries, floor, cap, lim)).toEqual(exact.matchesAbove(queries, floor, cap, lim));
          }
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it('gives the exact answer over an index larger than one kernel pass (rows in several tiles)', () => {
    const dim = 100;
    const vectors = nearDuplicates(7, 20_000, dim);
    const quantized = new VectorIndex(dim, new QuantizedScan());
    const exact = new VectorIndex(dim, exactScan);
    for (const index of [quantized, exact]) index.setMany(vectors.map((_, i) => `m${i}`), vectors);
    const queries = [0, 9_000, 17_000, 19_999].map((i) => vectors[i]!).concat(nearDuplicates(8, 5, dim));
    const limit = (q: number) => 20_000 - q * 2_500;
    for (const floor of [0.999, 0.99, 0.9]) {
      for (const lim of [undefined, limit]) {
        expect(quantized.matchesAbove(queries, floor, 8, lim)).toEqual(exact.matchesAbove(queries, floor, 8, lim));
      }
    }
  });

  it('keeps the best `cap` rows at or above the floor, best first, and says when there were more', () => {
    const index = new VectorIndex(2);
    index.setMany(['a', 'b', 'c', 'd'], [normalize([1, 0]), normalize([1, 0.1]), normalize([0, 1]), normalize([1, 0])]);
    const [found] = exactRowsAbove(index, [normalize([1, 0])], 0.9, 2);
    expect(found!.rows.map((r) => r.row)).toEqual([0, 3]); // a tie at 1 keeps the lower row first
    expect(found!.more).toBe(true); // b passes too
    expect(exactRowsAbove(index, [normalize([1, 0])], 0.9, 3)[0]!.more).toBe(false);
    expect(exactRowsAbove(index, [normalize([1, 0])], 0.9, 3, () => 2)[0]!.rows.map((r) => r.row)).toEqual([0, 1]);
  });
});
