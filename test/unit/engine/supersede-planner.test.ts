/**
 * The supersede planner on its own (no engine, no store): for random stored memories (some already superseded)
 * and a random batch, its plan must equal a brute-force walk over every pair's calibrated cosine, one new memory
 * at a time; it must leave its inputs alone; and it must look past the first probe of matches when all are dead.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planSupersede, SUPERSEDE_PROBE, type SupersedeContext, type SupersedePlan } from '../../../src/engine/supersede.js';
import type { MemoryRecord } from '../../../src/types.js';
import { exactScan } from '../../../src/vector/exact-scan.js';
import { QuantizedScan } from '../../../src/vector/quantized-scan.js';
import type { VectorScan } from '../../../src/vector/scan.js';
import { calibratedCosine, dot, meanPairwiseCosine, normalize } from '../../../src/vector/similarity.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import { randomSource } from '../helpers/vectors.js';
import { runs } from '../helpers/tier.js';
import { memoryRecord } from '../helpers/records.js';

interface Memory {
  record: MemoryRecord;
  vector: Float32Array;
}

function record(id: string, createdAt: number, supersededBy?: string): MemoryRecord {
  return memoryRecord(id, { createdAt, ...(supersededBy === undefined ? {} : { supersededBy }) });
}

/** The planner's inputs for `stored` memories (in row order) and a threshold. */
function contextFor(stored: readonly Memory[], dim: number, threshold: number | false, calibrate: boolean, makeScan: () => VectorScan): SupersedeContext {
  const index = new VectorIndex(dim, makeScan());
  index.setMany(stored.map((m) => m.record.id), stored.map((m) => m.vector));
  const byId = new Map(stored.map((m) => [m.record.id, m.record]));
  return { index, storedRecord: (id) => byId.get(id), threshold, calibrate, makeScan };
}

/** Every memory's `supersededBy` once the plan is applied. */
function applied(stored: readonly Memory[], plan: SupersedePlan): Map<string, string | undefined> {
  const out = new Map(stored.map((m) => [m.record.id, m.record.supersededBy]));
  for (const r of [...plan.stored, ...plan.batch]) out.set(r.id, r.supersededBy);
  return out;
}

/**
 * Brute force: the cosine of every (new memory, earlier memory) pair; each new memory, in batch order, takes the
 * live memory with the highest cosine (stored ones first, then earlier batch items created at another instant; the
 * first on a tie) and, when
 * its calibrated cosine reaches the threshold, the one created earlier (the new one on a tie) is superseded.
 */
function naivePlan(stored: readonly Memory[], batch: readonly Memory[], dim: number, threshold: number, calibrate: boolean): Map<string, string | undefined> {
  const sum = new Float64Array(dim);
  for (const m of [...stored, ...batch]) for (let d = 0; d < dim; d++) sum[d] = sum[d]! + m.vector[d]!;
  const baseline = calibrate ? meanPairwiseCosine(sum, stored.length + batch.length) : 0;
  const state = new Map<string, { createdAt: number; supersededBy?: string }>();
  for (const m of stored) state.set(m.record.id, { ...m.record });
  const earlier = [...stored];
  const inBatch = new Set(batch.map((m) => m.record.id));
  for (const m of batch) {
    const query = normalize(m.vector);
    const candidates = earlier.filter((other) => !inBatch.has(other.record.id) || other.record.createdAt !== m.record.createdAt);
    const cosines = candidates.map((other) => ({ id: other.record.id, cosine: dot(query, other.vector) }));
    let best: { id: string; cosine: number } | undefined;
    for (const pair of cosines) {
      if (state.get(pair.id)!.supersededBy === undefined && (!best || pair.cosine > best.cosine)) best = pair;
    }
    const self = { createdAt: m.record.createdAt } as { createdAt: number; supersededBy?: string };
    state.set(m.record.id, self);
    if (best && calibratedCosine(best.cosine, baseline) >= threshold) {
      const other = state.get(best.id)!;
      if (other.createdAt <= self.createdAt) other.supersededBy = m.record.id;
      else self.supersededBy = best.id;
    }
    earlier.push(m);
  }
  return new Map([...state].map(([id, s]) => [id, s.supersededBy]));
}

/**
 * Seeded memories whose vectors have components in {−1, 0, 1}: in few dimensions many are equal (ties, and more
 * equal matches than the probe keeps), in more dimensions they are merely close.
 */
function memories(seed: number, prefix: string, count: number, dim: number, deadRate: number): Memory[] {
  const { random } = randomSource(seed);
  return Array.from({ length: count }, (_, i) => {
    const components = Array.from({ length: dim }, () => Math.floor(random() * 3) - 1);
    if (!components.some((c) => c !== 0)) components[0] = 1;
    const dead = random() < deadRate;
    return { record: record(`${prefix}${i}`, Math.floor(random() * 4), dead ? 'someone' : undefined), vector: normalize(components) };
  });
}

const scans: [string, () => VectorScan][] = [
  ['exact scan', () => exactScan],
  ['int8 scan', () => new QuantizedScan()],
];

describe('planSupersede', () => {
  it.each(scans)('equals the brute-force walk over every pair (%s)', (_, makeScan) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 25 }),
        fc.constantFrom(4, 6, 16),
        fc.double({ min: 0, max: 0.9, noNaN: true }),
        fc.double({ min: -0.2, max: 1, noNaN: true }),
        fc.boolean(),
        (seed, storedCount, batchCount, dim, deadRate, threshold, calibrate) => {
          const stored = memories(seed, 's', storedCount, dim, deadRate);
          const batch = memories(seed + 1, 'b', batchCount, dim, 0);
          const before = structuredClone([stored.map((m) => m.record), batch.map((m) => m.record)]);
          const plan = planSupersede(contextFor(stored, dim, threshold, calibrate, makeScan), batch.map((m) => m.record), batch.map((m) => m.vector));
          expect(applied(stored, plan)).toEqual(naivePlan(stored, batch, dim, threshold, calibrate));
          expect(plan.batch.map((r) => r.id)).toEqual(batch.map((m) => m.record.id));
          // Only stored memories that were live and are superseded now are in the plan, each once.
          for (const r of plan.stored) expect(stored.find((m) => m.record.id === r.id)!.record.supersededBy).toBeUndefined();
          expect(new Set(plan.stored.map((r) => r.id)).size).toBe(plan.stored.length);
          // Pure: the inputs are as they were.
          expect([stored.map((m) => m.record), batch.map((m) => m.record)]).toEqual(before);
        },
      ),
      { numRuns: runs(150) },
    );
  });

  it('with threshold false, plans nothing even for identical memories', () => {
    const vector = normalize([1, 0, 0, 0]);
    const stored = [{ record: record('s0', 0), vector }];
    const batch = [record('b0', 1), record('b1', 1)];
    const plan = planSupersede(contextFor(stored, 4, false, false, () => exactScan), batch, [vector, vector]);
    expect(plan.stored).toEqual([]);
    expect(plan.batch).toEqual(batch);
  });

  it.each(scans)('looks past a probe of superseded stored matches to a live one ranked below them (%s)', (_, makeScan) => {
    // More equal dead matches than the probe keeps, ranked above the one live match.
    const best = normalize([1, 0, 0, 0]);
    const close = normalize([1, 0.1, 0, 0]);
    const stored: Memory[] = [
      ...Array.from({ length: SUPERSEDE_PROBE + 2 }, (_, i) => ({ record: record(`dead${i}`, 0, 'elsewhere'), vector: best })),
      { record: record('live', 0), vector: close },
    ];
    const plan = planSupersede(contextFor(stored, 4, 0.9, false, makeScan), [record('new', 1)], [best]);
    expect(plan.stored).toEqual([{ ...stored.at(-1)!.record, supersededBy: 'new' }]);
    expect(plan.batch[0]!.supersededBy).toBeUndefined();
  });

  it.each(scans)('looks at every earlier batch item when the first probe of them is superseded (%s)', (_, makeScan) => {
    // Equal memories, each created after the one before: each supersedes the one before it, so for item i only
    // item i − 1 is live, and from item SUPERSEDE_PROBE + 2 on it is ranked after a full probe of dead ones.
    const vector = normalize([0, 1, 0, 0]);
    const batch = Array.from({ length: SUPERSEDE_PROBE + 4 }, (_, i) => record(`b${i}`, 5 + i));
    const plan = planSupersede(contextFor([], 4, 0.9, false, makeScan), batch, batch.map(() => vector));
    expect(plan.batch.map((r) => r.supersededBy)).toEqual([...batch.slice(1).map((r) => r.id), undefined]);
    expect(plan.stored).toEqual([]);
  });

  it.each(scans)('never supersedes within a batch stored at one instant (an import of distinct items) (%s)', (_, makeScan) => {
    const vector = normalize([0, 1, 0, 0]);
    const batch = [record('a', 5), record('b', 5), record('c', 6)];
    const plan = planSupersede(contextFor([], 4, 0.9, false, makeScan), batch, batch.map(() => vector));
    // b is not a version of a (same instant); c, created later, is a version of a (the best live match, first on the tie).
    expect(plan.batch.map((r) => r.supersededBy)).toEqual(['c', undefined, undefined]);
  });
});
