import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactScan } from '../../../src/vector/exact-scan.js';
import type { VectorScan } from '../../../src/vector/scan.js';
import { dot, normalize } from '../../../src/vector/similarity.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import { runs } from '../helpers/tier.js';

const vec = (...xs: number[]) => Float32Array.from(xs);

describe('vector leg: contiguous matrix, dot product, partial top-k', () => {
  it('normalises on entry so cosine is a dot product', () => {
    const index = new VectorIndex(2);
    index.setMany(['a', 'b'], [normalize([3, 4]), normalize([0, 5])]);
    expect(Array.from(index.get('a')!)).toEqual([Math.fround(0.6), Math.fround(0.8)]);
    const hits = index.search(vec(0, 2), 2);
    expect(hits.map((h) => h.id)).toEqual(['b', 'a']);
    expect(hits[0]!.score).toBeCloseTo(1, 6);
    expect(hits[1]!.score).toBeCloseTo(0.8, 6);
    expect(Array.from(normalize([0, 0]))).toEqual([0, 0]);
    expect(dot(vec(1, 2, 3, 4, 5), vec(5, 4, 3, 2, 1))).toBe(35);
  });

  it('keeps one contiguous Float32Array and swap-removes', () => {
    const index = new VectorIndex(2, exactScan, 1);
    index.setMany(['a', 'b', 'c'], [normalize([1, 0]), normalize([0, 1]), normalize([1, 1])]);
    expect(index.matrix).toBeInstanceOf(Float32Array);
    expect(index.matrix.length).toBe(6);
    expect(index.remove('a')).toBe(true);
    expect(index.remove('a')).toBe(false);
    expect(index.size).toBe(2);
    expect(index.rowOf('c')).toBe(0); // the last row moved into the hole
    expect(index.idAt(0)).toBe('c');
    expect(Array.from(index.get('c')!)).toEqual(Array.from(normalize([1, 1])));
    expect(() => index.setMany(['x'], [vec(1, 2, 3)])).toThrow(RangeError);
    expect(index.has('x')).toBe(false); // a bad call changes nothing
  });

  it('agrees with a Map model and a full sort under any sequence of sets and removes', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), id: fc.integer({ min: 0, max: 30 }), v: fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }) }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 30 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 }), fc.integer({ min: 1, max: 40 }),
        (ops, q, k) => {
          const index = new VectorIndex(3, exactScan, 2);
          const model = new Map<string, Float32Array>();
          for (const o of ops) {
            const id = `m${o.id}`;
            if (o.kind === 'set') {
              const v = normalize(o.v);
              index.set(id, v);
              model.set(id, v);
            } else {
              expect(index.remove(id)).toBe(model.delete(id));
            }
          }
          expect(index.size).toBe(model.size);
          expect(new Set(index.ids())).toEqual(new Set(model.keys()));
          for (const [id, v] of model) expect(Array.from(index.get(id)!)).toEqual(Array.from(v));
          const query = normalize(q);
          const eligible = (id: string) => Number(id.slice(1)) % 2 === 0;
          const naive = [...model.entries()]
            .filter(([id]) => eligible(id))
            .map(([id, v]) => ({ id, row: index.rowOf(id)!, score: dot(query, v) }))
            .sort((a, b) => b.score - a.score || a.row - b.row)
            .slice(0, k);
          const fast = index.search(query, k, eligible);
          expect(fast.map((h) => h.id)).toEqual(naive.map((h) => h.id));
          fast.forEach((h, i) => expect(h.score).toBeCloseTo(naive[i]!.score, 6));
        }),
      { numRuns: runs(200) },
    );
  });

  it('lets a custom scan follow row changes (the hook for a quantised scan)', () => {
    const seen: number[][] = [];
    let scans = 0;
    const scan: VectorScan = {
      rowsChanged: (_rows, changed) => seen.push(changed.slice()),
      topK: (index, query, k, eligible) => {
        scans++;
        return exactScan.topK(index, query, k, eligible);
      },
    };
    const index = new VectorIndex(2, scan);
    index.setMany(['a', 'b', 'c'], [normalize([1, 0]), normalize([0, 1]), normalize([1, 1])]);
    index.remove('a');
    index.set('b', normalize([1, 0]));
    expect(seen).toEqual([[0, 1, 2], [0], [1]]);
    expect(index.search(vec(1, 0), 1)[0]!.id).toBe('b');
    expect(scans).toBe(1);
  });
});
