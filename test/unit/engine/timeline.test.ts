import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, type MemoryInput } from '../../../src/index.js';
import { threadIndexCounters } from '../../../src/search/thread-index.js';
import type { Timeline } from '../../../src/types.js';
import { testEmbedder } from '../helpers/embedder.js';
import { reopenable } from '../helpers/stores.js';
import { runs } from '../helpers/tier.js';

const NOW = Date.UTC(2024, 5, 1);

/** The memories' times are milliseconds after T0 (a small epoch-ms createdAt reads as seconds and is refused). */
const T0 = Date.UTC(2024, 0, 1);

const turn = (id: string, thread: string | undefined, at: number, extra: Partial<MemoryInput> = {}): MemoryInput => ({
  id, text: `memory ${id}`, createdAt: T0 + at, ...(thread === undefined ? {} : { meta: { thread } }), ...extra,
});

/** A timeline as ids: [before…], anchor, [after…], by. */
const shape = (t: Timeline) => ({ before: t.before.map((r) => r.id), anchor: t.anchor.id, after: t.after.map((r) => r.id), by: t.by });

async function engineWith(memories: MemoryInput[]) {
  const engine = await createEngine({ clock: () => NOW });
  await engine.add(memories);
  return engine;
}

describe('timeline: in a thread', () => {
  it('returns up to 3 memories each side by default, oldest first, from the anchor thread only', async () => {
    const engine = await engineWith([
      ...['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'].map((id, i) => turn(id, 'A', i)),
      turn('b0', 'B', 4),
      turn('loose', undefined, 4),
    ]);
    expect(shape(await engine.timeline('a4'))).toEqual({ before: ['a1', 'a2', 'a3'], anchor: 'a4', after: ['a5', 'a6', 'a7'], by: 'thread' });
    expect(shape(await engine.timeline('a1', { before: 5, after: 1 }))).toEqual({ before: ['a0'], anchor: 'a1', after: ['a2'], by: 'thread' });
    expect(shape(await engine.timeline('a7', { before: 0 }))).toEqual({ before: [], anchor: 'a7', after: [], by: 'thread' });
    expect(shape(await engine.timeline('b0', { before: 100, after: 100 }))).toEqual({ before: [], anchor: 'b0', after: [], by: 'thread' });
  });

  it('orders by createdAt, ties by the order the memories arrived, whatever order the thread was added in', async () => {
    const engine = await engineWith([turn('late', 'T', 30), turn('tie1', 'T', 20), turn('early', 'T', 10), turn('tie2', 'T', 20)]);
    expect(shape(await engine.timeline('tie1'))).toEqual({ before: ['early'], anchor: 'tie1', after: ['tie2', 'late'], by: 'thread' });
    // A numeric meta.thread is the same thread as its string form.
    await engine.add(turn('numeric', undefined, 25, { meta: { thread: 7 } }));
    await engine.add(turn('string', '7', 26));
    expect(shape(await engine.timeline('numeric'))).toEqual({ before: [], anchor: 'numeric', after: ['string'], by: 'thread' });
  });

  it('returns full copies: the records as get returns them, and mutating them changes nothing', async () => {
    const engine = await engineWith([turn('x', 'T', 1, { tags: ['t'], quality: 0.5 }), turn('y', 'T', 2, { meta: { thread: 'T', n: { deep: 1 } } })]);
    const t = await engine.timeline('x');
    expect(t.anchor).toEqual(await engine.get('x'));
    expect(t.after).toEqual([await engine.get('y')]);
    t.anchor.tags.push('changed');
    (t.after[0]!.meta!.n as { deep: number }).deep = 2;
    expect((await engine.timeline('x')).anchor.tags).toEqual(['t']);
    expect((await engine.get('y'))!.meta).toEqual({ thread: 'T', n: { deep: 1 } });
  });
});

describe('timeline: without a thread, by time', () => {
  it('uses the memories without a thread, by createdAt (ties by arrival); threaded memories never appear', async () => {
    const engine = await engineWith([
      turn('n3', undefined, 300),
      turn('n1', undefined, 100),
      turn('t', 'T', 150),
      turn('n2a', undefined, 200),
      turn('n2b', undefined, 200),
      turn('n4', undefined, 400),
    ]);
    expect(shape(await engine.timeline('n2b'))).toEqual({ before: ['n1', 'n2a'], anchor: 'n2b', after: ['n3', 'n4'], by: 'time' });
    expect(shape(await engine.timeline('n1', { after: 2 }))).toEqual({ before: [], anchor: 'n1', after: ['n2a', 'n2b'], by: 'time' });
    expect(shape(await engine.timeline('t'))).toEqual({ before: [], anchor: 't', after: [], by: 'thread' });
  });

  it('includes superseded and expired memories, which their records mark', async () => {
    const engine = await createEngine({ clock: () => NOW, embedder: testEmbedder() });
    await engine.add([turn('old', undefined, 1, { text: 'the garden irrigation schedule runs at six' }), turn('gone', undefined, 2, { validUntil: 3 })]);
    await engine.add(turn('new', undefined, 4, { text: 'the garden irrigation schedule runs at six' }));
    expect((await engine.get('old'))!.supersededBy).toBe('new');
    const t = await engine.timeline('new');
    expect(shape(t)).toEqual({ before: ['old', 'gone'], anchor: 'new', after: [], by: 'time' });
    expect(t.before.map((r) => [r.supersededBy, r.validUntil])).toEqual([['new', undefined], [undefined, 3]]);
    expect((await engine.search('garden irrigation schedule', { k: 5 })).hits.map((h) => h.id)).toEqual(['new']);
  });
});

describe('timeline: follows every change', () => {
  it('update (thread or createdAt), remove, import, and a reopen from the store', async () => {
    const store = reopenable();
    const engine = await createEngine({ store, clock: () => NOW });
    await engine.add([turn('a', 'T', 1), turn('b', 'T', 2), turn('c', 'T', 3), turn('d', undefined, 2), turn('e', undefined, 5)]);
    await engine.update('b', { meta: null }); // leaves the thread, joins the time sequence
    expect(shape(await engine.timeline('a'))).toEqual({ before: [], anchor: 'a', after: ['c'], by: 'thread' });
    expect(shape(await engine.timeline('b'))).toEqual({ before: [], anchor: 'b', after: ['d', 'e'], by: 'time' });
    await engine.update('e', { createdAt: T0 });
    expect(shape(await engine.timeline('b'))).toEqual({ before: ['e'], anchor: 'b', after: ['d'], by: 'time' });
    await engine.remove('d');
    expect(shape(await engine.timeline('b'))).toEqual({ before: ['e'], anchor: 'b', after: [], by: 'time' });
    await engine.import([{ id: 'f', text: 'imported', createdAt: T0 + 4, meta: { thread: 'T' } }]);
    expect(shape(await engine.timeline('c'))).toEqual({ before: ['a'], anchor: 'c', after: ['f'], by: 'thread' });
    const reopened = await createEngine({ store, clock: () => NOW });
    expect(shape(await reopened.timeline('c'))).toEqual({ before: ['a'], anchor: 'c', after: ['f'], by: 'thread' });
    expect(shape(await reopened.timeline('b'))).toEqual({ before: ['e'], anchor: 'b', after: [], by: 'time' });
  });

  it('matches a naive reference over random adds, updates and removes', async () => {
    const threads = [undefined, 'A', 'B'] as const;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), id: fc.integer({ min: 0, max: 11 }), thread: fc.constantFrom(...threads), at: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('update' as const), id: fc.integer({ min: 0, max: 11 }), thread: fc.constantFrom(...threads), at: fc.integer({ min: 0, max: 5 }) }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 11 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 40 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 }), async (ops, before, after) => {
        const engine = await createEngine({ clock: () => NOW });
        // The reference: each live memory's thread, createdAt and arrival number (kept by an update, new after a remove).
        const live = new Map<string, { thread: string | undefined; at: number; arrival: number }>();
        let arrivals = 0;
        for (const o of ops) {
          const id = `m${o.id}`;
          if (o.kind === 'add' && !live.has(id)) {
            await engine.add(turn(id, o.thread, o.at));
            live.set(id, { thread: o.thread, at: o.at, arrival: arrivals++ });
          } else if (o.kind === 'update' && live.has(id)) {
            await engine.update(id, { createdAt: T0 + o.at, meta: o.thread === undefined ? null : { thread: o.thread } });
            live.set(id, { ...live.get(id)!, thread: o.thread, at: o.at });
          } else if (o.kind === 'remove') {
            await engine.remove(id);
            live.delete(id);
          }
        }
        for (const [id, self] of live) {
          const sequence = [...live]
            .filter(([, other]) => other.thread === self.thread)
            .sort(([, x], [, y]) => x.at - y.at || x.arrival - y.arrival)
            .map(([other]) => other);
          const at = sequence.indexOf(id);
          expect(shape(await engine.timeline(id, { before, after }))).toEqual({
            before: sequence.slice(Math.max(0, at - before), at),
            anchor: id,
            after: sequence.slice(at + 1, at + 1 + after),
            by: self.thread === undefined ? 'time' : 'thread',
          });
        }
        await engine.close();
      }),
      { numRuns: runs(150) },
    );
  });
});

describe('timeline: refusals', () => {
  it('NOT_FOUND for an unknown id; INVALID_INPUT for a bad id, bad options or before/after outside 0-100', async () => {
    const engine = await engineWith([turn('a', 'T', 1)]);
    await expect(engine.timeline('nope')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('"nope"') });
    await expect(engine.timeline('' as string)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.timeline(42 as unknown as string)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    for (const bad of [-1, 101, 1.5, NaN, Infinity, '3', null, true]) {
      for (const side of ['before', 'after'] as const) {
        await expect(engine.timeline('a', { [side]: bad } as unknown as { before: number }), `${side}: ${String(bad)}`).rejects.toMatchObject({
          code: 'INVALID_INPUT',
          message: expect.stringContaining(`timeline option ${side} must be an integer from 0 to 100`),
        });
      }
    }
    for (const bad of [null, 3, 'x', []]) {
      await expect(engine.timeline('a', bad as unknown as object)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(shape(await engine.timeline('a', { before: 100, after: 0 }))).toEqual({ before: [], anchor: 'a', after: [], by: 'thread' });
    await engine.close();
    await expect(engine.timeline('a')).rejects.toMatchObject({ code: 'CLOSED' });
  });
});

describe('timeline: scale', () => {
  it('removing thousands of memories from a long time sequence in one call costs one pass, not one per memory', async () => {
    const engine = await createEngine({ clock: () => NOW });
    // Work is counted, not timed, so a few thousand memories show it as well as many.
    const n = 4000;
    await engine.add(Array.from({ length: n }, (_, i) => turn(`n${i}`, undefined, i)));
    await engine.timeline('n0');
    const before = { ...threadIndexCounters };
    await engine.remove(Array.from({ length: n / 4 }, (_, i) => `n${2 * i + 1}`));
    const t = await engine.timeline('n1000', { before: 2, after: 2 });
    expect(shape(t)).toEqual({ before: ['n996', 'n998'], anchor: 'n1000', after: ['n1002', 'n1004'], by: 'time' });
    expect(shape(await engine.timeline('n1998', { before: 1, after: 2 }))).toEqual({ before: ['n1996'], anchor: 'n1998', after: ['n2000', 'n2001'], by: 'time' });
    // One pass over the 4,000 entries, at the first read; re-indexing after each of the 1,000 removals would walk
    // 1,000 × 4,000.
    expect({ passes: threadIndexCounters.passes - before.passes, walked: threadIndexCounters.entriesWalked - before.entriesWalked }).toEqual({ passes: 1, walked: n });
    await engine.close();
  });
});
