import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SignCodes, type ApproxRows } from '../../../src/vector/sign-codes.js';
import { normalize } from '../../../src/vector/similarity.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import { exactAndScanned, randomSource } from '../helpers/vectors.js';
import { FAST_TIER, runs } from '../helpers/tier.js';

/** Anisotropic, clustered unit vectors (a shared direction, topic centres, noise), like real embeddings. */
function clustered(seed: number, n: number, dim: number, topics = 12, noise = 1): Float32Array[] {
  const { random, gauss } = randomSource(seed);
  const shared = Array.from({ length: dim }, gauss);
  const centres = Array.from({ length: topics }, () => Array.from({ length: dim }, gauss));
  return Array.from({ length: n }, () => {
    const centre = centres[Math.floor(random() * topics)]!;
    return normalize(Array.from({ length: dim }, (_, d) => 0.8 * shared[d]! + 0.6 * centre[d]! + noise * gauss()));
  });
}

const popcount = (x: number) => {
  let n = 0;
  for (let v = x; v; v &= v - 1) n++;
  return n;
};

/** The naive shortlist: each row's Hamming distance to the query under `centre`, then the `count` smallest (ties: lower row). */
function naiveShortlist(index: VectorIndex, centre: Float32Array, query: Float32Array, count: number): number[] {
  const dim = index.dim;
  const bits = (v: Float32Array, from: number) => Array.from({ length: dim }, (_, j) => (v[from + j]! > centre[j]! ? 1 : 0));
  const q = bits(query, 0);
  const matrix = index.matrix;
  return Array.from({ length: index.size }, (_, row) => {
    const b = bits(matrix, row * dim);
    return { row, distance: b.reduce<number>((sum, bit, j) => sum + (bit ^ q[j]!), 0) };
  })
    .sort((a, b) => a.distance - b.distance || a.row - b.row)
    .slice(0, count)
    .map((r) => r.row)
    .sort((a, b) => a - b);
}

describe('1-bit sign codes (prefilter)', () => {
  it('shortlists the rows nearest by Hamming distance, as a naive loop does', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 200 }), fc.constantFrom(5, 64, 100, 384, 1000), (seed, n, dim) => {
        const vectors = clustered(seed, n + 1, dim);
        const query = vectors.pop()!;
        const index = new VectorIndex(dim);
        index.setMany(vectors.map((_, i) => `m${i}`), vectors);
        const codes = new SignCodes();
        const count = Math.max(1, Math.floor(n / 3));
        const got = Array.from(codes.shortlist(index, query, count)!);
        expect(got).toEqual(naiveShortlist(index, codes.centre!, query, count));
      }),
      { numRuns: runs(40) },
    );
  });

  it('keeps the codes of every row right through sets, overwrites and swap-removes after they were built', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.oneof(fc.record({ set: fc.integer({ min: 0, max: 120 }) }), fc.record({ remove: fc.integer({ min: 0, max: 120 }) })), { maxLength: 200 }),
        (seed, ops) => {
          const pool = clustered(seed, 130, 40);
          const index = new VectorIndex(40);
          const codes = new SignCodes();
          index.setMany(pool.slice(0, 60).map((_, i) => `m${i}`), pool.slice(0, 60));
          const query = pool[129]!;
          codes.shortlist(index, query, 10); // builds the codes
          const follow = (rows: readonly number[]) => codes.rowsChanged(index, rows);
          ops.forEach((op, step) => {
            const before = index.size;
            if ('set' in op) {
              const id = `m${op.set}`;
              const row = index.rowOf(id) ?? before;
              index.set(id, pool[(op.set + step) % 129]!);
              follow([row]);
            } else {
              const row = index.rowOf(`m${op.remove}`);
              if (index.remove(`m${op.remove}`) && row !== undefined && row < index.size) follow([row]);
            }
          });
          if (index.size === 0) return;
          const count = Math.max(1, Math.floor(index.size / 4));
          const got = Array.from(codes.shortlist(index, query, count)!);
          expect(got).toEqual(naiveShortlist(index, codes.centre!, query, count));
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it('reads rows through a scratch-buffer source (compact mode) as from the matrix, and keeps codes written from floats', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 2, max: 150 }), fc.constantFrom(40, 100, 384), (seed, n, dim) => {
        const vectors = clustered(seed, n + 1, dim);
        const query = vectors.pop()!;
        const index = new VectorIndex(dim);
        index.setMany(vectors.map((_, i) => `m${i}`), vectors);
        const count = Math.max(1, Math.floor(n / 3));
        const rowsOf = (approx: ApproxRows['approx']): ApproxRows => ({ dim, size: index.size, sumOfRows: () => index.sumOfRows(), approx });
        const copied = rowsOf((row, out) => {
          out.set(index.matrix.subarray(row * dim, (row + 1) * dim));
          return out;
        });
        const fromMatrix = new SignCodes();
        const fromScratch = new SignCodes();
        const expected = Array.from(fromMatrix.shortlist(index, query, count)!);
        expect(Array.from(fromScratch.shortlist(copied, query, count)!)).toEqual(expected);
        expect(fromScratch.centre).toEqual(fromMatrix.centre);

        // Centred up front and written row by row from the floats: the (zero) approximate rows are never read.
        const written = new SignCodes();
        expect(written.prepare(dim)).toBe(true);
        written.centreIfNone(index.sumOfRows(), index.size, index.size);
        for (let row = 0; row < index.size; row++) written.write(row, index.matrix, row * dim);
        const zeros = rowsOf((_, out) => out.fill(0));
        expect(Array.from(written.shortlist(zeros, query, count)!)).toEqual(naiveShortlist(index, written.centre!, query, count));
        // A swap-remove moves the last row's code.
        const last = index.size - 1;
        const removed = `m${seed % last}`;
        const row = index.rowOf(removed)!;
        index.remove(removed);
        written.move(last, row);
        const fewer = Math.max(1, Math.floor(index.size / 3));
        expect(Array.from(written.shortlist(rowsOf((_, out) => out.fill(0)), query, fewer)!)).toEqual(naiveShortlist(index, written.centre!, query, fewer));
      }),
      { numRuns: runs(40) },
    );
  });

  // A recall measurement over a large index: left to `npm test`.
  it.skipIf(FAST_TIER)('prefiltered search keeps recall@10 ≥ 0.99 against the exact scan, and falls back to it under a tight filter', () => {
    // Sentence-embedding-like: same-topic pairs have a centred cosine of about 0.6.
    const dim = 384;
    const vectors = clustered(20261122, 6000, dim, 40, 0.5);
    const queries = vectors.splice(0, 100);
    const { exact, scanned: prefiltered } = exactAndScanned(dim, vectors, { prefilterMinRows: 1000, prefilterShortlist: 400, prefilterShortlistShare: 0 });
    let recall = 0;
    for (const query of queries) {
      const truth = new Set(exact.search(query, 10).map((h) => h.id));
      recall += prefiltered.search(query, 10).filter((h) => truth.has(h.id)).length / 10;
    }
    expect(recall / queries.length).toBeGreaterThanOrEqual(0.99);

    // One row in 500 passes the filter: the shortlist cannot hold 10 of them, so the exact scan answers.
    const rare = (id: string) => Number(id.slice(1)) % 500 === 0;
    for (const query of queries.slice(0, 10)) {
      expect(prefiltered.search(query, 10, rare)).toEqual(exact.search(query, 10, rare));
    }
  });

  it('never prefilters short vectors: their answers stay exact', () => {
    const dim = 96;
    const vectors = clustered(7, 3000, dim, 40);
    const queries = vectors.splice(0, 20);
    const { exact, scanned: gated } = exactAndScanned(dim, vectors, { prefilterMinRows: 1000, prefilterShortlist: 100, prefilterShortlistShare: 0 });
    for (const query of queries) expect(gated.search(query, 10)).toEqual(exact.search(query, 10));
  });
});
