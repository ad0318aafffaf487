import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createInt8Kernel } from '../../../src/vector/int8-kernel.js';
import { QuantizedScan } from '../../../src/vector/quantized-scan.js';
import { normalize, VectorIndex } from '../../../src/vector/vector-index.js';
import { int8RowDot, randomSource } from '../helpers/vectors.js';

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

describe('quantised vector scan (int8 + exact rescoring)', () => {
  it('has a WebAssembly SIMD kernel here whose int8 dot products are exact', () => {
    const stride = 32;
    const kernel = createInt8Kernel(4096);
    expect(kernel).not.toBeNull();
    const bytes = new Int8Array(kernel!.buffer);
    for (let i = 0; i < stride * 4; i++) bytes[i] = ((i * 37) % 255) - 127;
    kernel!.dots(stride, 3, stride, 0, 1024);
    const out = new Int32Array(kernel!.buffer, 1024, 3);
    for (let r = 0; r < 3; r++) expect(out[r]).toBe(int8RowDot(bytes, stride, r));
  });

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
      { numRuns: 60 },
    );
  });

  it('keeps recall@10 = 1 through sets, overwrites, swap-removes and an eligibility filter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.oneof(fc.record({ set: fc.integer({ min: 0, max: 150 }) }), fc.record({ remove: fc.integer({ min: 0, max: 150 }) })), { minLength: 50, maxLength: 300 }),
        (seed, ops) => {
          const pool = clustered(seed, 160, 48);
          const index = new VectorIndex(48, new QuantizedScan(), 1);
          const model = new Map<string, Float32Array>();
          const order: string[] = [];
          ops.forEach((op, step) => {
            if ('set' in op) {
              const id = `m${op.set}`;
              const v = pool[(op.set + step) % pool.length]!;
              index.set(id, v);
              if (!model.has(id)) order.push(id);
              model.set(id, v);
            } else {
              const id = `m${op.remove}`;
              index.remove(id);
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
            const got = index.search(query, 10, keep).map((h) => h.id);
            const recall = expected.length === 0 ? 1 : got.filter((id) => expected.includes(id)).length / expected.length;
            expect(recall).toBeGreaterThanOrEqual(0.99);
            expect(got).toEqual(expected);
          }
        },
      ),
      { numRuns: 60 },
    );
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
