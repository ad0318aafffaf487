/**
 * Supersede on add asks one threshold question per new memory ("which live memories are at least this
 * similar?") for a whole batch at once. These tests hold it to the one-memory-at-a-time definition, computed
 * naively, and the quantised threshold scan to the exact one.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/engine.js';
import { createInt8Kernel, groupBytes, interleaveQueries } from '../../../src/vector/int8-kernel.js';
import { QuantizedScan } from '../../../src/vector/quantized-scan.js';
import { calibratedCosine, meanPairwiseCosine } from '../../../src/vector/similarity.js';
import type { MemoryInput } from '../../../src/types.js';
import { dot, exactRowsAbove, exactScan, normalize, VectorIndex } from '../../../src/vector/vector-index.js';
import { bagOfWordsVector, testEmbedder } from '../helpers/embedder.js';
import { randomSource } from '../helpers/vectors.js';

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
      { numRuns: 200 },
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
      { numRuns: 60 },
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

/**
 * The definition, one new memory at a time: its best live match (stored memories first, then the earlier
 * items of its batch; ties to the earliest), if the calibrated cosine reaches the threshold; the one created
 * earlier (the new one on a tie) is superseded by the other.
 */
function naiveSupersede(batches: MemoryInput[][], dim: number, threshold: number, calibrate: boolean): Map<string, string | undefined> {
  type Row = { id: string; createdAt: number; vector: Float32Array; supersededBy?: string };
  const rows: Row[] = [];
  const sum = new Float64Array(dim);
  for (const inputs of batches) {
    const batch: Row[] = inputs.map((m) => ({ id: m.id!, createdAt: m.createdAt as number, vector: normalize(bagOfWordsVector(m.text, dim)) }));
    const total = sum.slice();
    for (const row of batch) for (let d = 0; d < dim; d++) total[d] = total[d]! + row.vector[d]!;
    const baseline = calibrate ? meanPairwiseCosine(total, rows.length + batch.length) : 0;
    batch.forEach((row, i) => {
      const unit = normalize(row.vector);
      let best: { other: Row; score: number } | undefined;
      for (const other of [...rows, ...batch.slice(0, i)]) {
        if (other.supersededBy !== undefined) continue;
        const score = dot(unit, other.vector);
        if (!best || score > best.score) best = { other, score };
      }
      if (best && calibratedCosine(best.score, baseline) >= threshold) {
        const [older, newer] = best.other.createdAt <= row.createdAt ? [best.other, row] : [row, best.other];
        older.supersededBy = newer.id;
      }
    });
    for (const row of batch) {
      rows.push(row);
      for (let d = 0; d < dim; d++) sum[d] = sum[d]! + row.vector[d]!;
    }
  }
  return new Map(rows.map((r) => [r.id, r.supersededBy]));
}

describe('supersede over a batch', () => {
  const words = ['server', 'staging', 'ip', 'lunch', 'ana', 'friday', 'the', 'is'];
  const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }).map((w) => w.join(' '));
  const memory = fc.record({ text, day: fc.integer({ min: 0, max: 5 }) });

  it('equals the one-memory-at-a-time definition (duplicates beyond the probe, ties, calibration on and off)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(memory, { minLength: 1, maxLength: 25 }), { minLength: 1, maxLength: 4 }),
        fc.double({ min: 0.3, max: 1, noNaN: true }),
        fc.boolean(),
        fc.constantFrom(8, 32),
        async (batches, threshold, calibrate, dim) => {
          let n = 0;
          const inputs = batches.map((batch) => batch.map((m) => ({ id: `m${n++}`, text: m.text, createdAt: m.day * 1000 })));
          const expected = naiveSupersede(inputs, dim, threshold, calibrate);
          for (const vectorScan of [undefined, () => exactScan]) {
            const engine = await createEngine({ embedder: testEmbedder({ dim }), supersedeThreshold: threshold, calibrateSimilarity: calibrate, vectorScan });
            for (const batch of inputs) await engine.add(batch);
            const actual = new Map((await engine.export()).map((r) => [r.id, r.supersededBy]));
            expect(actual).toEqual(expected);
            await engine.close();
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});
