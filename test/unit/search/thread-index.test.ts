import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ThreadIndex, threadIndexCounters } from '../../../src/search/thread-index.js';

const note = (id: string, createdAt: number, thread?: string) => ({ id, createdAt, ...(thread ? { meta: { thread } } : {}) });
/** A small deterministic shuffle of 0..n-1 (LCG), so dates arrive out of order. */
const shuffled = (n: number) => {
  const out = Array.from({ length: n }, (_, i) => i);
  let x = 12345;
  for (let i = n - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
};
/** Every memory's time neighbours (window 2, no gap limit), from the index. */
const allNeighbours = (index: ThreadIndex, ids: string[]) => ids.map((id) => index.neighbours(id, 2, true).map((n) => n.id));

describe('ThreadIndex: a memory added out of order', () => {
  it('goes into its place in an indexed sequence: the same neighbours as a sort, no re-indexing pass', () => {
    const dates = shuffled(3000).map((i) => i * 1000);
    const index = new ThreadIndex();
    index.upsertAll(dates.slice(0, 2000).map((t) => note(`m${t}`, t)));
    index.neighbours(`m${dates[0]}`, 1, true); // the first read sorts once
    const before = { ...threadIndexCounters };
    // One at a time, as a chat app adds: each lands inside the sorted sequence.
    const present = dates.slice(0, 2000).sort((a, b) => a - b);
    for (const t of dates.slice(2000)) {
      index.upsertAll([note(`m${t}`, t)]);
      const at = present.findIndex((x) => x > t);
      present.splice(at < 0 ? present.length : at, 0, t);
      const i = present.indexOf(t);
      const expected = [present[i - 1], present[i + 1]].filter((x) => x !== undefined).map((x) => `m${x}`);
      expect(index.neighbours(`m${t}`, 1, true).map((n) => n.id).sort()).toEqual(expected.sort());
    }
    expect(threadIndexCounters.passes - before.passes).toBe(0);
    expect(threadIndexCounters.entriesShifted - before.entriesShifted).toBeGreaterThan(0);
    // The same answers as an index given everything at once (sorted by its one pass).
    const reference = new ThreadIndex();
    reference.upsertAll(dates.map((t) => note(`m${t}`, t)));
    const ids = dates.map((t) => `m${t}`);
    expect(allNeighbours(index, ids)).toEqual(allNeighbours(reference, ids));
  });

  it('ties keep arrival order; a thread is kept in place the same way', () => {
    const index = new ThreadIndex();
    index.upsertAll([note('a', 10, 'T'), note('b', 20, 'T'), note('c', 30, 'T')]);
    expect(index.around('a', 0, 2)!.after).toEqual(['b', 'c']);
    index.upsertAll([note('d', 20, 'T')]);
    expect(index.around('a', 0, 3)!.after).toEqual(['b', 'd', 'c']);
    index.upsertAll([note('e', 5, 'T')]);
    expect(index.around('c', 4, 0)!.before).toEqual(['e', 'a', 'b', 'd']);
  });

  it('a large out-of-order batch is left to one pass at the next read', () => {
    const index = new ThreadIndex();
    index.upsertAll(Array.from({ length: 2000 }, (_, i) => note(`m${i}`, 2 * i)));
    index.neighbours('m0', 1, true);
    const before = { ...threadIndexCounters };
    // 2,000 memories between the stored ones: inserting each in place would renumber about 2,000 × 2,000 entries.
    index.upsertAll(Array.from({ length: 2000 }, (_, i) => note(`o${i}`, 2 * (1999 - i) + 1)));
    expect(index.neighbours('o1', 1, true).map((n) => n.id).sort()).toEqual(['m1998', 'm1999']);
    expect(threadIndexCounters.passes - before.passes).toBe(1);
    expect(threadIndexCounters.entriesShifted - before.entriesShifted).toBeLessThanOrEqual(2 * 4000);
  });
});

describe('ThreadIndex.inSequence', () => {
  it('is true in a thread or in a sitting of three (steps over 0 and at most the gap), false elsewhere (naive reference)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.integer({ min: 0, max: 30 }), thread: fc.constantFrom(undefined, 'A', 'B') }), { maxLength: 25 }),
        fc.integer({ min: 0, max: 8 }),
        (memories, gap) => {
          const index = new ThreadIndex();
          const records = memories.map((m, i) => note(`m${i}`, m.at, m.thread));
          index.upsertAll(records);
          // The memories without a thread by time (ties by arrival), cut at every step of zero or over the gap.
          const timed = records.filter((r) => r.meta === undefined).sort((a, b) => a.createdAt - b.createdAt || Number(a.id.slice(1)) - Number(b.id.slice(1)));
          const runs: string[][] = [];
          timed.forEach((r, i) => {
            const step = i === 0 ? -1 : r.createdAt - timed[i - 1]!.createdAt;
            if (step > 0 && step <= gap) runs[runs.length - 1]!.push(r.id);
            else runs.push([r.id]);
          });
          const inSitting = new Set(runs.filter((run) => run.length >= 3).flat());
          for (const r of records) expect(index.inSequence(r.id, gap)).toBe(r.meta !== undefined || inSitting.has(r.id));
          expect(index.inSequence('unknown', gap)).toBe(false);
        },
      ),
    );
  });
});

describe('ThreadIndex.load (open)', () => {
  it('files stored memories as upsertAll does: the same neighbours, order around each, sameThread and size (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            at: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.constant(-0), fc.double({ min: -1e13, max: 1e13, noNaN: true })),
            thread: fc.constantFrom<unknown>(undefined, 'A', 'B', '', 7, Number.NaN, { x: 1 }),
          }),
          { maxLength: 60 },
        ),
        (rows) => {
          const stored = rows.map((row, i) => ({ id: `m${i}`, createdAt: row.at, thread: row.thread }));
          const loaded = new ThreadIndex();
          loaded.load(stored);
          const upserted = new ThreadIndex();
          upserted.upsertAll(stored.map((r) => ({ id: r.id, createdAt: r.createdAt, meta: { thread: r.thread } as Record<string, unknown> })));
          expect(loaded.size).toBe(upserted.size);
          for (const { id } of stored) {
            expect(loaded.neighbours(id, 3, true)).toEqual(upserted.neighbours(id, 3, true));
            expect(loaded.around(id, 4, 4)).toEqual(upserted.around(id, 4, 4));
            expect(loaded.sameThread(id, 'm0')).toBe(upserted.sameThread(id, 'm0'));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('sorts a large out-of-order sequence with no re-indexing pass at the first read, and later writes keep it in order', () => {
    const dates = shuffled(20000).map((i) => Math.floor(i / 3) * 1000); // ties of three
    const index = new ThreadIndex();
    index.load(dates.map((t, i) => ({ id: `m${i}`, createdAt: t })));
    const before = { ...threadIndexCounters };
    const order = dates.map((t, i) => ({ t, i })).sort((a, b) => a.t - b.t || a.i - b.i);
    const at = order.findIndex((e) => e.i === 0);
    expect(index.around('m0', 1, 1)).toEqual({ before: [`m${order[at - 1]!.i}`], after: [`m${order[at + 1]!.i}`], by: 'time' });
    expect(threadIndexCounters.passes - before.passes).toBe(0);
    index.upsertAll([{ id: 'late', createdAt: order[10]!.t }]);
    expect(index.around('late', 1, 1)).toEqual({ before: [`m${order[11]!.i}`], after: [`m${order[12]!.i}`], by: 'time' });
    expect(() => index.load([])).toThrow(/not empty/);
  });
});
