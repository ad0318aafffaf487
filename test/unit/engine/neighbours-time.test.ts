import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.js';
import { neighbourBonuses, NEIGHBOURS_BY_TIME, NEIGHBOURS_TIME_GAP_MS } from '../../../src/search/neighbours.js';
import { ThreadIndex } from '../../../src/search/thread-index.js';
import type { MemoryRecord } from '../../../src/types.js';
import { memoryRecord } from '../helpers/records.js';

const MINUTE = 60_000;

function note(id: string, createdAt: number, thread?: string): MemoryRecord {
  return memoryRecord(id, { text: id, createdAt, ...(thread === undefined ? {} : { meta: { thread } }) });
}

const ids = (list: { id: string }[]) => list.map((n) => n.id);

describe('ThreadIndex: the time sequence of memories without a thread', () => {
  it('gives them neighbours only when asked (byTime), by createdAt then arrival, never a threaded memory', () => {
    const index = new ThreadIndex();
    index.upsertAll([note('n2', 20), note('t', 15, 'T'), note('n1', 10), note('n3a', 30), note('n4', 31)]);
    expect(index.neighbours('n2', 2)).toEqual([]);
    expect(index.neighbours('n2', 2, true)).toEqual([
      { id: 'n1', distance: 1 },
      { id: 'n3a', distance: 1 },
      { id: 'n4', distance: 2 },
    ]);
    expect(index.neighbours('t', 2, true)).toEqual([]);
    expect(index.around('n1', 0, 0)?.by).toBe('time');
    expect(index.around('t', 0, 0)?.by).toBe('thread');
    expect(index.around('nope', 0, 0)).toBeUndefined();
    expect(index.size).toBe(1); // `size` counts threaded memories only, as before
  });

  it('stops each side at the first step longer than maxGapMs; threads ignore the gap', () => {
    const index = new ThreadIndex();
    // Two sittings an hour apart, and a thread with the same spacing.
    index.upsertAll([0, 1, 2, 62, 63].map((m, i) => note(`n${i}`, m * MINUTE)));
    index.upsertAll([0, 1, 2, 62, 63].map((m, i) => note(`t${i}`, m * MINUTE, 'T')));
    expect(ids(index.neighbours('n2', 3, true, 30 * MINUTE))).toEqual(['n1', 'n0']);
    // n3 and n4 are a sitting of two: no sequence, no neighbours (a sitting is three memories at least).
    expect(ids(index.neighbours('n3', 3, true, 30 * MINUTE))).toEqual([]);
    expect(ids(index.neighbours('n2', 3, true, 60 * MINUTE))).toEqual(['n1', 'n3', 'n0', 'n4']);
    expect(ids(index.neighbours('n1', 1, true, 0))).toEqual([]);
    expect(ids(index.neighbours('t2', 3, true, 0))).toEqual(['t1', 't3', 't0', 't4']);
  });

  it('never joins memories stored at one instant (a batch, whose order says nothing); a thread still does', () => {
    const index = new ThreadIndex();
    index.upsertAll([note('b0', 5), note('b1', 5), note('b2', 5), note('c', 6), note('t0', 5, 'T'), note('t1', 5, 'T')]);
    expect(ids(index.neighbours('b1', 2, true, 30 * MINUTE))).toEqual([]);
    // b2 and c are a minute's step apart, but b1 before b2 is a step of zero: two are no sitting.
    expect(ids(index.neighbours('b2', 2, true, 30 * MINUTE))).toEqual([]);
    index.upsertAll([note('d', 7)]);
    expect(ids(index.neighbours('b2', 2, true, 30 * MINUTE))).toEqual(['c', 'd']);
    expect(ids(index.neighbours('t0', 1, true, 30 * MINUTE))).toEqual(['t1']);
  });

  it('matches a naive reference for any createdAt, window and gap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        (times, window, gap) => {
          const index = new ThreadIndex();
          const notes = times.map((t, i) => note(`n${i}`, t));
          index.upsertAll(notes);
          const order = notes.slice().sort((a, b) => a.createdAt - b.createdAt || Number(a.id.slice(1)) - Number(b.id.slice(1)));
          const joins = (i: number) => i >= 0 && i + 1 < order.length && order[i + 1]!.createdAt - order[i]!.createdAt <= gap && order[i + 1]!.createdAt !== order[i]!.createdAt;
          for (const [at, anchor] of order.entries()) {
            const expected: { id: string; distance: number }[] = [];
            // A sitting of three at least: two steps that join, around the anchor.
            let run = 0;
            for (let i = at - 1; i >= 0 && joins(i) && run < 2; i--) run++;
            for (let i = at; joins(i) && run < 2; i++) run++;
            if (run < 2) {
              expect(index.neighbours(anchor.id, window, true, gap)).toEqual([]);
              continue;
            }
            for (let d = 1; d <= window; d++) {
              const reach = (to: number) => {
                if (to < 0 || to >= order.length) return false;
                const [lo, hi] = to < at ? [to, at] : [at, to];
                for (let i = lo; i < hi; i++) {
                  const step = order[i + 1]!.createdAt - order[i]!.createdAt;
                  if (step > gap || step === 0) return false;
                }
                return true;
              };
              if (reach(at - d)) expected.push({ id: order[at - d]!.id, distance: d });
              if (reach(at + d)) expected.push({ id: order[at + d]!.id, distance: d });
            }
            expect(index.neighbours(anchor.id, window, true, gap)).toEqual(expected);
          }
        },
      ),
    );
  });
});

describe('neighbourBonuses over time', () => {
  const options = { window: 2, weight: 0.5, lenders: 20 };

  it('is on by default with a 30-minute gap; time: false turns it off; timeGapMs moves the limit', () => {
    expect(NEIGHBOURS_BY_TIME).toBe(true);
    expect(NEIGHBOURS_TIME_GAP_MS).toBe(30 * MINUTE);
    const index = new ThreadIndex();
    index.upsertAll([note('a', 0), note('b', 10 * MINUTE), note('b2', 20 * MINUTE), note('c', 110 * MINUTE)]);
    const bonuses = (extra: object) => Object.fromEntries([...neighbourBonuses([{ id: 'b2', score: 1 }], index, { ...options, ...extra })].map(([id, l]) => [id, l.bonus]));
    expect(bonuses({})).toEqual({ b: 0.5, a: 0.25 });
    expect(bonuses({ time: false })).toEqual({});
    expect(bonuses({ timeGapMs: 90 * MINUTE })).toEqual({ b: 0.5, c: 0.5, a: 0.25 });
    expect(bonuses({ timeGapMs: Infinity })).toEqual({ b: 0.5, c: 0.5, a: 0.25 });
  });

  it('never changes anything for memories in threads', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ thread: fc.constantFrom('A', 'B'), at: fc.integer({ min: 0, max: 5 }) }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 20 }),
        (memories, scores) => {
          const index = new ThreadIndex();
          index.upsertAll(memories.map((m, i) => note(`m${i}`, m.at, m.thread)));
          const scored = scores.slice(0, memories.length).map((score, i) => ({ id: `m${i}`, score }));
          const on = neighbourBonuses(scored, index, { ...options, time: true, timeGapMs: Infinity });
          const off = neighbourBonuses(scored, index, { ...options, time: false });
          expect([...on]).toEqual([...off]);
        },
      ),
    );
  });
});

describe('neighbour support over time through createEngine', () => {
  const NOW = Date.UTC(2024, 5, 1);
  // Notes without a thread: one sitting of four, and one written a day earlier.
  const notes = [
    { id: 'yesterday', text: 'Groceries: oat milk, lentils, limes', createdAt: NOW - 24 * 60 * MINUTE },
    { id: 'q', text: 'Did the landlord answer about the broken boiler?', createdAt: NOW - 3 * MINUTE },
    { id: 'a', text: 'Yes, a plumber comes Thursday morning', createdAt: NOW - 2 * MINUTE },
    { id: 'later', text: 'Book the dentist for next month', createdAt: NOW - MINUTE },
    { id: 'last', text: 'Water the balcony plants', createdAt: NOW },
  ];

  it('brings the note written next to a matching one, and only within the sitting', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(notes);
    const result = await engine.search('landlord boiler', { k: 5, mode: 'lexical' });
    expect(ids(result.hits)[0]).toBe('q');
    expect(ids(result.hits)).toContain('a');
    expect(result.hits.find((h) => h.id === 'a')!.explain.neighbour).toMatchObject({ from: 'q' });
    expect(ids(result.hits)).not.toContain('yesterday');
    const off = await engine.search('landlord boiler', { k: 5, mode: 'lexical', neighbours: false });
    expect(ids(off.hits)).toEqual(['q']);
    await engine.close();
  });

  it('a memory that gains a thread leaves the time sequence', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(notes);
    await engine.update('a', { meta: { thread: 'elsewhere' } });
    const result = await engine.search('landlord boiler', { k: 5, mode: 'lexical' });
    expect(ids(result.hits)).not.toContain('a');
    expect(ids(result.hits)).toContain('later'); // now the next note in the sitting
    await engine.close();
  });
});

describe('twelve unrelated notes imported in one add call (issue 28)', () => {
  const NOW = Date.UTC(2024, 5, 1);
  // No thread, no dates: an app importing a folder of notes. Their order means nothing.
  const notes = [
    'Coffee: the burr grinder on setting 14 makes the best pour-over',
    'JWT tokens expire after fifteen minutes; refresh them with the rotating refresh token',
    'YAML parsing breaks on tabs; the config loader needs spaces only',
    'Backups run nightly at 2am to the NAS and weekly to cold storage',
    'Billing: the invoice run happens on the first business day of the month',
    'Database migration: add the new column nullable first, backfill, then add the constraint',
    'parseConfig returns defaults when the file is missing',
    'The database migration for the orders table took four hours on staging',
    'Garden: water the tomatoes every other evening in July',
    'Passport renewal needs two photos and the old passport',
    'Running plan: three easy runs and one long run each week',
    'Dentist appointment moved to the 14th at 9:30',
  ].map((text, i) => ({ id: `n${i}`, text }));

  it.each(['lexical', 'hybrid'] as const)('no hit that neither leg returned ranks above one that a leg returned (%s)', async (mode) => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(notes);
    for (const query of ['coffee', 'database migration', 'JWT refresh token', 'garden watering plan']) {
      const { hits } = await engine.search(query, { k: 12, mode, touch: false });
      const matched = hits.map((h) => h.explain.bm25Rank !== null || h.explain.vecRank !== null);
      const lastMatched = matched.lastIndexOf(true);
      const firstUnmatched = matched.indexOf(false);
      expect(firstUnmatched === -1 || firstUnmatched > lastMatched, `${mode} "${query}": ${hits.map((h) => h.id)}`).toBe(true);
      expect(hits.filter((h) => h.explain.neighbour !== undefined)).toEqual([]);
    }
    const migration = await engine.search('database migration', { k: 12, mode, touch: false });
    expect(ids(migration.hits).slice(0, 2).sort()).toEqual(['n5', 'n7']);
    expect(ids((await engine.search('coffee', { k: 12, mode, touch: false })).hits)[0]).toBe('n0');
    // Distinct documents on shared words are not versions of each other: nothing is superseded.
    expect((await engine.export()).filter((r) => r.supersededBy !== undefined)).toEqual([]);
    await engine.close();
  });
});
