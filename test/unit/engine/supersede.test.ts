/**
 * Supersede on add asks one threshold question per new memory ("which live memories are at least this
 * similar?") for a whole batch at once. These tests hold it to the one-memory-at-a-time definition, computed
 * naively (the threshold scan itself is tested in test/unit/vector/rows-above.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/engine/engine.js';
import { exactScan } from '../../../src/vector/exact-scan.js';
import { calibratedCosine, dot, meanPairwiseCosine, normalize } from '../../../src/vector/similarity.js';
import type { MemoryInput } from '../../../src/types.js';
import { bagOfWordsVector, testEmbedder } from '../helpers/embedder.js';
import { runs } from '../helpers/tier.js';

/**
 * The definition, one new memory at a time: its best live match (stored memories first, then the earlier
 * items of its batch created at another instant; ties to the earliest), if the calibrated cosine reaches the threshold; the one created
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
      for (const other of [...rows, ...batch.slice(0, i).filter((earlier) => earlier.createdAt !== row.createdAt)]) {
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
          const inputs = batches.map((batch) => batch.map((m) => ({ id: `m${n++}`, text: m.text, createdAt: Date.UTC(2024, 0, 1) + m.day * 1000 })));
          const expected = naiveSupersede(inputs, dim, threshold, calibrate);
          for (const vectorScan of [undefined, () => exactScan]) {
            const engine = await createEngine({ embedder: testEmbedder({ dim }), supersede: 'similar', supersedeThreshold: threshold, calibrateSimilarity: calibrate, vectorScan });
            for (const batch of inputs) await engine.add(batch);
            const actual = new Map((await engine.export()).map((r) => [r.id, r.supersededBy]));
            expect(actual).toEqual(expected);
            await engine.close();
          }
        },
      ),
      { numRuns: runs(80) },
    );
  });
});
