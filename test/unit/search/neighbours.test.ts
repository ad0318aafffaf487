import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.js';
import type { FusedCandidate } from '../../../src/search/fuse.js';
import { neighbourBonuses, supportNeighbours } from '../../../src/search/neighbours.js';
import { threadOf, ThreadIndex } from '../../../src/search/thread-index.js';
import type { MemoryRecord } from '../../../src/types.js';
import { memoryRecord } from '../helpers/records.js';

function record(id: string, thread: unknown, createdAt = 0): MemoryRecord {
  return memoryRecord(id, { text: id, createdAt, meta: thread === undefined ? {} : { thread } });
}

const ids = (list: { id: string }[]) => list.map((n) => n.id);

describe('threadOf', () => {
  it('reads meta.thread when it is a non-empty string or a finite number', () => {
    expect(threadOf(record('a', 's1'))).toBe('s1');
    expect(threadOf(record('a', 7))).toBe('7');
    for (const bad of ['', NaN, null, {}, ['s1'], undefined]) expect(threadOf(record('a', bad))).toBeUndefined();
    expect(threadOf({})).toBeUndefined();
  });
});

describe('ThreadIndex', () => {
  it('orders a thread by createdAt, ties by arrival, and never crosses threads', () => {
    const index = new ThreadIndex();
    index.upsertAll([record('t1', 'A', 10), record('t2', 'A', 10), record('x', 'B', 10), record('t0', 'A', 5), record('t3', 'A', 10)]);
    index.upsertAll([record('none', undefined, 10)]);
    expect(ids(index.neighbours('t1', 5))).toEqual(['t0', 't2', 't3']);
    expect(index.neighbours('t2', 2)).toEqual([
      { id: 't1', distance: 1 },
      { id: 't3', distance: 1 },
      { id: 't0', distance: 2 },
    ]);
    expect(index.neighbours('x', 3)).toEqual([]);
    expect(index.neighbours('none', 3)).toEqual([]);
    expect(index.neighbours('unknown', 3)).toEqual([]);
    expect(index.size).toBe(5);
  });

  it('follows removals, thread changes and createdAt changes', () => {
    const index = new ThreadIndex();
    index.upsertAll(['a', 'b', 'c', 'd'].map((id, i) => record(id, 'T', i)));
    index.remove('b');
    expect(ids(index.neighbours('a', 1))).toEqual(['c']);
    index.upsertAll([record('c', 'U', 2)]);
    expect(ids(index.neighbours('a', 1))).toEqual(['d']);
    index.upsertAll([record('d', 'T', -1)]);
    expect(ids(index.neighbours('a', 1))).toEqual(['d']);
    expect(index.neighbours('d', 1)).toEqual([{ id: 'a', distance: 1 }]);
    index.upsertAll([record('d', undefined, -1)]);
    expect(index.neighbours('a', 1)).toEqual([]);
    index.clear();
    expect(index.size).toBe(0);
  });
});

describe('neighbourBonuses', () => {
  const chat = () => {
    const index = new ThreadIndex();
    index.upsertAll(['m0', 'm1', 'm2', 'm3', 'm4', 'm5'].map((id) => record(id, 'chat')));
    return index;
  };

  it('lends weight × score / distance to neighbours within the window', () => {
    const lent = neighbourBonuses([{ id: 'm2', score: 1 }], chat(), { window: 2, weight: 0.5, lenders: 10 });
    expect(Object.fromEntries([...lent].map(([id, l]) => [id, l.bonus]))).toEqual({ m1: 0.5, m3: 0.5, m0: 0.25, m4: 0.25 });
    expect(lent.get('m4')?.from).toBe('m2');
  });

  it('takes the largest offer, not a sum, and only from the best `lenders` candidates', () => {
    const scored = [
      { id: 'm1', score: 0.9 },
      { id: 'm3', score: 0.8 },
      { id: 'm5', score: 0.7 },
    ];
    const lent = neighbourBonuses(scored, chat(), { window: 1, weight: 0.5, lenders: 2 });
    expect(lent.get('m2')).toEqual({ bonus: 0.45, from: 'm1' });
    expect(lent.has('m5')).toBe(false); // m5 is not a neighbour of m1 or m3 within 1 and is not a lender
    expect(lent.get('m4')).toEqual({ bonus: 0.4, from: 'm3' });
  });

  it('does nothing when off, and lends nothing from non-positive scores', () => {
    expect(neighbourBonuses([{ id: 'm2', score: 1 }], chat(), { window: 2, weight: 0, lenders: 10 }).size).toBe(0);
    expect(neighbourBonuses([{ id: 'm2', score: 1 }], chat(), { window: 0, weight: 1, lenders: 10 }).size).toBe(0);
    expect(neighbourBonuses([{ id: 'm2', score: 0 }], chat(), { window: 2, weight: 1, lenders: 10 }).size).toBe(0);
  });

  it('never lends more than weight × the best lender score (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 10, noNaN: true }), { minLength: 1, maxLength: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 4 }),
        (scores, weight, window) => {
          const scored = scores.map((score, i) => ({ id: `m${i}`, score })).sort((a, b) => b.score - a.score);
          const lent = neighbourBonuses(scored, chat(), { window, weight, lenders: 6 });
          const best = Math.max(...scores);
          for (const { bonus, from } of lent.values()) {
            expect(bonus).toBeLessThanOrEqual(weight * best + 1e-12);
            expect(bonus).toBeLessThanOrEqual(weight * scored.find((s) => s.id === from)!.score + 1e-12);
          }
        },
      ),
    );
  });
});

describe('supportNeighbours (the neighbours stage)', () => {
  const candidate = (id: string, fused: number): FusedCandidate => ({ id, fused, rank: { lexical: 1, vector: null }, legScore: { lexical: fused, vector: null } });

  it('adds bonuses to candidates, brings in neighbours no leg returned, and re-sorts', () => {
    const index = new ThreadIndex();
    index.upsertAll(['a', 'b', 'c', 'd'].map((id) => record(id, 'T')));
    const out = supportNeighbours([candidate('b', 1), candidate('d', 0.4)], index, { window: 1, weight: 0.5, lenders: 20 });
    // c is offered 0.5 by b and 0.2 by d: it keeps the larger; b is two places from d, outside the window.
    expect(out.map((c) => [c.id, c.fused])).toEqual([['b', 1], ['a', 0.5], ['c', 0.5], ['d', 0.4]]);
    expect(out.find((c) => c.id === 'c')).toMatchObject({ rank: { lexical: null, vector: null }, neighbour: { from: 'b', bonus: 0.5 } });
    expect(out.find((c) => c.id === 'b')!.neighbour).toBeUndefined();
    const withD = supportNeighbours([candidate('c', 1), candidate('d', 0.4)], index, { window: 1, weight: 0.5, lenders: 20 });
    expect(withD.find((c) => c.id === 'd')).toMatchObject({ fused: 0.9, neighbour: { from: 'c', bonus: 0.5 } });
  });
});

describe('neighbour support through createEngine', () => {
  const NOW = Date.UTC(2024, 5, 1);
  const session = [
    { id: 't1', text: 'Did you finish the painting of the lake?' },
    { id: 't2', text: 'Yes! Took me three weekends, I am so proud of it.' },
    { id: 't3', text: 'We should get lunch on Friday.' },
  ].map((turn, i) => ({ ...turn, createdAt: NOW - 1000 + i, meta: { thread: 'chat-1' } }));

  it('brings the reply next to a matching turn, says so in explain, and follows the filters', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add([...session, { id: 'other', text: 'weekends are for hiking', createdAt: NOW, meta: { thread: 'chat-2' } }]);
    const result = await engine.search('painting lake', { k: 5 });
    expect(result.trace.stages.map((s) => s.name)).toContain('neighbours');
    const ids = result.hits.map((h) => h.id);
    expect(ids[0]).toBe('t1');
    expect(ids).toContain('t2');
    const reply = result.hits.find((h) => h.id === 't2')!;
    expect(reply.explain.neighbour).toEqual({ from: 't1', bonus: expect.any(Number) });
    expect(reply.score).toBeLessThan(result.hits[0]!.score);
    expect(ids).not.toContain('other');

    const off = await engine.search('painting lake', { k: 5, neighbours: false });
    expect(off.hits.map((h) => h.id)).toEqual(['t1']);
    expect(off.trace.stages.map((s) => s.name)).not.toContain('neighbours');

    const filtered = await engine.search('painting lake', { k: 5, filter: { until: NOW - 1000 } });
    expect(filtered.hits.map((h) => h.id)).toEqual(['t1']);
  });

  it('follows removals and thread changes', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(session);
    await engine.remove('t2');
    expect((await engine.search('painting lake', { k: 5 })).hits.map((h) => h.id)).toEqual(['t1', 't3']);
    await engine.update('t3', { meta: { thread: 'elsewhere' } });
    expect((await engine.search('painting lake', { k: 5 })).hits.map((h) => h.id)).toEqual(['t1']);
  });
});
