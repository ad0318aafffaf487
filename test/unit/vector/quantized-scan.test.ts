import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactScan } from '../../../src/vector/exact-scan.js';
import { QuantizedScan } from '../../../src/vector/quantized-scan.js';
import type { VectorRows } from '../../../src/vector/scan.js';
import { normalize } from '../../../src/vector/similarity.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import { randomSource } from '../helpers/vectors.js';
import { runs } from '../helpers/tier.js';

/** The naive reference: every cosine, a full sort (score desc, then insertion row asc, like TopK). */
function naiveTopK(rows: Map<string, Float32Array>, order: string[], query: Float32Array, k: number, keep: (id: string) => boolean = () => true) {
  const unit = normalize(query);
  return order
    .filter((id) => keep(id))
    .map((id, i) => {
      const v = rows.get(id)!;
      let s = 0;
      for (let d = 0; d < v.length; d++) s += unit[d]! * v[d]!;
      return { id, score: s, i };
    })
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k);
}

/** Clustered, anisotropic unit vectors whose neighbours sit close together: the hard case for quantisation. */
function clustered(seed: number, n: number, dim: number): Float32Array[] {
  const { random, gauss } = randomSource(seed);
  const shared = Array.from({ length: dim }, gauss);
  const centres = Array.from({ length: 6 }, () => Array.from({ length: dim }, gauss));
  return Array.from({ length: n }, (_, i) => {
    const centre = centres[i % centres.length]!;
    const spread = random() < 0.2 ? 0.02 : 0.4; // some near-duplicates
    return normalize(Array.from({ length: dim }, (_, d) => 0.6 * shared[d]! + centre[d]! + spread * gauss()));
  });
}

/** The index's rows as a scan sees them, noting every row whose floats are read (a float32 rescoring). */
function countingRows(index: VectorIndex): { rows: VectorRows; read: Set<number> } {
  const read = new Set<number>();
  const { dim } = index;
  const matrix = new Proxy(index.matrix, {
    get(target, key) {
      if (typeof key === 'string' && /^\d+$/.test(key)) read.add(Math.floor(Number(key) / dim));
      return Reflect.get(target, key);
    },
  });
  return { rows: { dim, size: index.size, matrix, sumOfRows: () => index.sumOfRows() }, read };
}

describe('quantised vector scan (int8 + exact rescoring)', () => {
  it('returns exactly the naive top k (ids, order and scores) on clustered data with near-duplicates', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 400 }),
        fc.constantFrom(3, 17, 100, 384),
        fc.integer({ min: 1, max: 60 }),
        (seed, n, dim, k) => {
          const vectors = clustered(seed, n + 1, dim);
          const query = vectors.pop()!;
          const ids = vectors.map((_, i) => `m${i}`);
          const index = new VectorIndex(dim, new QuantizedScan());
          index.setMany(ids, vectors);
          const expected = naiveTopK(new Map(ids.map((id, i) => [id, vectors[i]!])), ids, query, k);
          const got = index.search(query, k);
          expect(got.map((h) => h.id)).toEqual(expected.map((h) => h.id));
          got.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it('keeps the exact answer through sets, overwrites, swap-removes and an eligibility filter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.oneof(fc.record({ set: fc.integer({ min: 0, max: 150 }) }), fc.record({ remove: fc.integer({ min: 0, max: 150 }) })), { minLength: 50, maxLength: 300 }),
        (seed, ops) => {
          const pool = clustered(seed, 160, 48);
          const index = new VectorIndex(48, new QuantizedScan(), 1);
          const twin = new VectorIndex(48, exactScan, 1); // the same changes, scanned exactly in float32
          const model = new Map<string, Float32Array>();
          const order: string[] = [];
          ops.forEach((op, step) => {
            if ('set' in op) {
              const id = `m${op.set}`;
              const v = pool[(op.set + step) % pool.length]!;
              index.set(id, v);
              twin.set(id, v);
              if (!model.has(id)) order.push(id);
              model.set(id, v);
            } else {
              const id = `m${op.remove}`;
              index.remove(id);
              twin.remove(id);
              if (model.delete(id)) {
                // Swap-remove: the last row takes the removed one's place.
                const at = order.indexOf(id);
                const last = order.pop()!;
                if (last !== id) order[at] = last;
              }
            }
          });
          const query = pool[seed % pool.length]!;
          const even = (id: string) => Number(id.slice(1)) % 2 === 0;
          for (const keep of [undefined, even]) {
            const expected = naiveTopK(model, order, query, 10, keep).map((h) => h.id);
            const hits = index.search(query, 10, keep);
            // The exact scan's answer to the bit: same rows, same float32 scores, same order.
            expect(hits).toEqual(twin.search(query, 10, keep));
            expect(hits.map((h) => h.id)).toEqual(expected);
          }
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it('rescores in float32 only a small part of the rows, and those give the exact answer', () => {
    const dim = 48;
    const vectors = clustered(99, 2020, dim);
    const queries = vectors.splice(0, 20);
    const scan = new QuantizedScan();
    const index = new VectorIndex(dim, scan);
    index.setMany(vectors.map((_, i) => `m${i}`), vectors);
    for (const query of queries) {
      const { rows, read } = countingRows(index);
      const found = scan.topK(rows, query, 10);
      expect(found).toEqual(exactScan.topK(index, query, 10));
      for (const { row } of found) expect(read.has(row)).toBe(true);
      expect(read.size).toBeLessThan(index.size / 10); // a full float32 scan reads every row
    }
  });

  it('equals the exact float32 scan to the bit at any dimension (rows rescored in pairs, odd counts and dims included)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.constantFrom(1, 3, 5, 17, 30, 64, 130, 384), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 25 }), (seed, dim, n, k) => {
        const vectors = clustered(seed, n + 3, dim);
        const queries = vectors.splice(0, 3);
        for (const prefilter of [false, 1] as const) {
          const scan = new QuantizedScan({ prefilterMinRows: prefilter, prefilterMinDim: 1, prefilterShortlist: 40, prefilterShortlistShare: 0 });
          const index = new VectorIndex(dim, scan);
          index.setMany(vectors.map((_, i) => `m${i}`), vectors);
          for (const query of queries) {
            const found = scan.topK(index, query, k);
            if (prefilter === false) expect(found).toEqual(exactScan.topK(index, query, k));
            // With the prefilter the rows may differ (it is approximate), the scores may not.
            else for (const { row, score } of found) expect(score).toBe(exactScan.topK(index, query, n).find((r) => r.row === row)!.score);
          }
        }
      }),
      { numRuns: runs(60) },
    );
  });

  it("kernelCompile 'background': exact float32 answers while the kernel compiles, the int8 scan (same answers) once it has", async () => {
    // A dim no other test here uses, so its unrolled module is not compiled yet.
    const dim = 208;
    const vectors = clustered(7, 1210, dim);
    const queries = vectors.splice(0, 10);
    const scan = new QuantizedScan({ kernelCompile: 'background' });
    const index = new VectorIndex(dim, scan);
    index.setMany(vectors.map((_, i) => `m${i}`), vectors);
    const expected = queries.map((query) => exactScan.topK(index, query, 10));
    const readsPerQuery = () =>
      queries.map((query, q) => {
        const { rows, read } = countingRows(index);
        expect(scan.topK(rows, query, 10)).toEqual(expected[q]);
        return read.size;
      });
    // No module yet: the exact scan reads every row.
    expect(readsPerQuery().every((n) => n === index.size)).toBe(true);
    for (let wait = 0; wait < 200 && readsPerQuery().some((n) => n === index.size); wait++) await new Promise((resolve) => setTimeout(resolve, 5));
    // Compiled: the rows written before it are quantised, and a search rescores only a few of them.
    expect(readsPerQuery().every((n) => n < index.size / 10)).toBe(true);
  });

  it('handles zero vectors and an empty index', () => {
    const index = new VectorIndex(4, new QuantizedScan());
    expect(index.search(Float32Array.from([1, 0, 0, 0]), 5)).toEqual([]);
    index.setMany(['z', 'a'], [new Float32Array(4), normalize([1, 1, 0, 0])]);
    const hits = index.search(Float32Array.from([1, 0, 0, 0]), 5);
    expect(hits.map((h) => h.id)).toEqual(['a', 'z']);
    expect(hits[1]!.score).toBe(0);
  });
});
