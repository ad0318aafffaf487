/**
 * Touch bookkeeping on its own, on fake timers: counted in memory at once, written to the store once searches
 * pause (TOUCH_WRITE_DELAY_MS) or at the latest TOUCH_WRITE_MAX_DELAY_MS after the first unsaved touch, at once
 * on flush, and a failed write goes to the error callback instead of being thrown.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordTable } from '../../../src/engine/record-table.js';
import { TOUCH_WRITE_DELAY_MS, TOUCH_WRITE_MAX_DELAY_MS, TOUCH_WRITE_MAX_PENDING, TouchWriter } from '../../../src/engine/touch-writer.js';
import { AssociationGraph } from '../../../src/engine/associations.js';
import { WriteQueue } from '../../../src/engine/write-queue.js';
import { EngramError, isEngramError } from '../../../src/errors.js';
import type { StoreWrite } from '../../../src/store/store.js';
import type { MemoryRecord } from '../../../src/types.js';
import { memoryRecord } from '../helpers/records.js';

function setup() {
  const records = new RecordTable();
  for (const id of ['a', 'b']) records.set(memoryRecord(id));
  const start = performance.now();
  /** Each store write: when it ran (ms after setup) and what it put. */
  const writes: { at: number; put: MemoryRecord[]; associations: StoreWrite['associations'] }[] = [];
  let failure: Error | null = null;
  const store = {
    write: async (change: StoreWrite) => {
      if (failure) throw failure;
      writes.push({ at: performance.now() - start, put: structuredClone(change.put ?? []), associations: structuredClone(change.associations) });
    },
  };
  const errors: EngramError[] = [];
  const graph = new AssociationGraph({ step: 0.1, decayDays: 90, maxPerMemory: 2 });
  const writer = new TouchWriter(records, new WriteQueue(store), store, (error) => errors.push(error), (keys) => graph.asWrite(keys));
  return { records, writes, errors, writer, graph, failWith: (error: Error | null) => (failure = error) };
}

describe('TouchWriter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts a touch in memory at once and writes once searches pause for the delay', async () => {
    const { records, writes, writer } = setup();
    writer.touch(['a'], 100);
    expect(records.get('a')).toMatchObject({ accessCount: 1, lastAccessedAt: 100 });
    await vi.advanceTimersByTimeAsync(300);
    writer.touch(['a', 'b'], 200);
    await vi.advanceTimersByTimeAsync(TOUCH_WRITE_DELAY_MS - 1);
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes.map((w) => w.at)).toEqual([300 + TOUCH_WRITE_DELAY_MS]);
    expect(writes[0]!.put.map((r) => [r.id, r.accessCount, r.lastAccessedAt])).toEqual([
      ['a', 2, 200],
      ['b', 1, 200],
    ]);
    await vi.advanceTimersByTimeAsync(5 * TOUCH_WRITE_MAX_DELAY_MS);
    expect(writes).toHaveLength(1);
  });

  it('during a steady stream of touches, writes at the max delay after the first unsaved one', async () => {
    const { writes, writer } = setup();
    const gap = TOUCH_WRITE_DELAY_MS / 2;
    const touches = Math.ceil((TOUCH_WRITE_MAX_DELAY_MS * 1.3) / gap);
    for (let i = 0; i < touches; i++) {
      writer.touch(['a'], i);
      await vi.advanceTimersByTimeAsync(gap);
    }
    expect(writes.map((w) => w.at)).toEqual([TOUCH_WRITE_MAX_DELAY_MS]);
    const lastTouch = (touches - 1) * gap;
    await vi.advanceTimersByTimeAsync(TOUCH_WRITE_DELAY_MS);
    expect(writes.map((w) => w.at)).toEqual([TOUCH_WRITE_MAX_DELAY_MS, lastTouch + TOUCH_WRITE_DELAY_MS]);
    expect(writes.at(-1)!.put[0]).toMatchObject({ id: 'a', accessCount: touches });
  });

  it('flush writes at once and cancels the timer; with nothing unsaved it writes nothing', async () => {
    const { writes, writer } = setup();
    await writer.flush();
    expect(writes).toEqual([]);
    writer.touch(['b'], 7);
    await writer.flush();
    expect(writes.map((w) => [w.at, w.put.map((r) => r.id)])).toEqual([[0, ['b']]]);
    await vi.advanceTimersByTimeAsync(2 * TOUCH_WRITE_MAX_DELAY_MS);
    expect(writes).toHaveLength(1);
  });

  it('writes the records as they are when the write runs', async () => {
    const { records, writes, writer } = setup();
    writer.touch(['a'], 1);
    records.set({ ...records.get('a')!, text: 'changed after the touch' });
    await writer.flush();
    expect(writes[0]!.put[0]).toMatchObject({ text: 'changed after the touch', accessCount: 1 });
  });

  it('reports a failed write through the error callback (from flush and from the timer), never throws', async () => {
    const { errors, writer, failWith } = setup();
    failWith(new Error('disk full'));
    writer.touch(['a'], 1);
    await expect(writer.flush()).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(isEngramError(errors[0], 'STORE_FAILED')).toBe(true);
    writer.touch(['b'], 2);
    await vi.advanceTimersByTimeAsync(TOUCH_WRITE_DELAY_MS);
    expect(errors).toHaveLength(2);
    expect(isEngramError(errors[1], 'STORE_FAILED')).toBe(true);
  });

  it('writes reinforced records and the associations as they are when the write runs, evicted ones as removals', async () => {
    const { records, writes, writer, graph } = setup();
    for (const id of ['c', 'd']) records.set(memoryRecord(id));
    writer.update([{ ...records.get('a')!, stability: 0.5 }], graph.strengthen(['a', 'b'], 10));
    writer.update([], graph.strengthen(['a', 'c'], 20));
    writer.update([], graph.strengthen(['a', 'd'], 30)); // 'a' holds 2 at most: (a, b), the weakest, goes
    await writer.flush();
    expect(writes).toHaveLength(1);
    expect(writes[0]!.put.map((r) => [r.id, r.stability])).toEqual([['a', 0.5]]);
    expect(writes[0]!.associations!.put!.map((e) => [e.a, e.b, e.lastAt])).toEqual([['a', 'c', 20], ['a', 'd', 30]]);
    expect(writes[0]!.associations!.remove).toEqual([['a', 'b']]);
  });

  it('writes at once when TOUCH_WRITE_MAX_PENDING records and associations wait', async () => {
    const { records, writes, writer } = setup();
    const ids = Array.from({ length: TOUCH_WRITE_MAX_PENDING - 1 }, (_, i) => `m${i}`);
    for (const id of ids) records.set(memoryRecord(id));
    writer.touch(ids, 1);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toEqual([]);
    writer.touch(['a'], 2);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes.map((w) => [w.at, w.put.length])).toEqual([[0, TOUCH_WRITE_MAX_PENDING]]);
  });

  it('writes nothing once the store is closed', async () => {
    const { writes, writer, records } = setup();
    writer.markStoreClosed();
    writer.touch(['a'], 1);
    await writer.flush();
    expect(writes).toEqual([]);
    expect(records.get('a')!.accessCount).toBe(1);
  });
});
