import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.js';
import { IvfScan, type IvfIndex, type ListedRows } from '../../../src/vector/ivf.js';
import { testEmbedder } from '../helpers/embedder.js';
import { reopenable } from '../helpers/stores.js';
import { ListsWatchingScan, randomSource } from '../helpers/vectors.js';

const WORDS = 'river stone garden lamp violin harbor pepper winter ticket cobalt meadow falcon quartz ember saddle orbit maple canyon thistle lantern'.split(' ');

function texts(seed: number, n: number): string[] {
  const { random } = randomSource(seed);
  return Array.from({ length: n }, () => Array.from({ length: 3 + Math.floor(random() * 5) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' '));
}

const KEY = 'engram.vector-index.test-embedder';

describe('the vector scan saved in the store', () => {
  it('saves the IVF centroids after a build, restores them on open, and rebuilds from a form it refuses', async () => {
    const store = reopenable();
    const scans: IvfScan[] = [];
    // The first scan an engine makes is its index's (supersede makes one per add for the batch).
    let first = 0;
    const open = () => {
      first = scans.length;
      return createEngine({
        store,
        embedder: testEmbedder({ dim: 64, id: 'test-embedder' }),
        supersedeThreshold: 1,
        vectorScan: () => {
          const scan = new IvfScan({ ivfMinRows: 1_500, minCandidates: 100 });
          scans.push(scan);
          return scan;
        },
      });
    };
    const engine = await open();
    const input = texts(1, 2_000).map((text, i) => ({ id: `m${i}`, text }));
    for (let start = 0; start < input.length; start += 500) await engine.add(input.slice(start, start + 500));
    const scan = scans[first]!;
    await scan.idle();
    await engine.add([{ id: 'last', text: 'river stone' }]); // queued after the save
    const saved = await store.readMeta(KEY);
    expect(saved).toBeInstanceOf(Uint8Array);
    const trained = scan.status().trainedRows;
    expect(trained).toBeGreaterThanOrEqual(1_500);
    await engine.close();

    const reopened = await open();
    const restoredScan = scans[first]!;
    await restoredScan.idle();
    expect(restoredScan.status().trainedRows).toBe(trained);
    const hits = await reopened.search('river stone garden', { mode: 'vector', touch: false });
    expect(hits.hits.length).toBeGreaterThan(0);
    await reopened.close();

    // A form of another version is refused: the index trains again on open, and saves its own form.
    const other = (saved as Uint8Array).slice();
    other[4] = 99;
    await store.write({ meta: { [KEY]: other } });
    const rebuilt = await open();
    const rebuiltScan = scans[first]!;
    await rebuiltScan.idle();
    expect(rebuiltScan.status().trainedRows).toBe(2_001);
    await rebuilt.add([{ id: 'after', text: 'maple canyon' }]);
    expect(((await store.readMeta(KEY)) as Uint8Array)[4]).toBe(1);
    await rebuilt.close();
  }, 120_000);
});

describe('the compact index’s lists saved in the store', () => {
  it('builds IVF lists over the codes, saves their centroids, restores them on open and rebuilds from a form of another version', async () => {
    const store = reopenable();
    const lists: IvfIndex<ListedRows>[] = [];
    const open = () =>
      createEngine({
        store,
        embedder: testEmbedder({ dim: 64, id: 'test-embedder' }),
        supersedeThreshold: 1,
        vectorMemory: 'compact',
        vectorScan: () => new ListsWatchingScan(lists, { ivfMinRows: 1_500, minCandidates: 100 }),
      });
    const engine = await open();
    const input = texts(2, 2_000).map((text, i) => ({ id: `m${i}`, text }));
    for (let start = 0; start < input.length; start += 500) await engine.add(input.slice(start, start + 500));
    expect(lists).toHaveLength(1);
    await lists[0]!.idle();
    await engine.add([{ id: 'last', text: 'river stone' }]); // queued after the save
    const saved = await store.readMeta(KEY);
    expect(saved).toBeInstanceOf(Uint8Array);
    const trained = lists[0]!.status().trainedRows;
    expect(trained).toBeGreaterThanOrEqual(1_500);
    await engine.close();

    const reopened = await open();
    const restored = lists.at(-1)!;
    expect(restored).not.toBe(lists[0]);
    await restored.idle();
    expect(restored.status().trainedRows).toBe(trained);
    expect((await reopened.search('river stone garden', { mode: 'vector', touch: false })).hits.length).toBeGreaterThan(0);
    await reopened.close();

    const other = (saved as Uint8Array).slice();
    other[4] = 99;
    await store.write({ meta: { [KEY]: other } });
    const rebuilt = await open();
    const rebuilding = lists.at(-1)!;
    // The lists train again in the background; searches answer meanwhile.
    expect((await rebuilt.search('maple canyon', { mode: 'vector', touch: false })).hits.length).toBeGreaterThan(0);
    await rebuilding.idle();
    expect(rebuilding.status().trainedRows).toBe(2_001);
    await rebuilt.add([{ id: 'after', text: 'maple canyon' }]);
    expect(((await store.readMeta(KEY)) as Uint8Array)[4]).toBe(1);
    await rebuilt.close();
  }, 120_000);
});
