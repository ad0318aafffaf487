/**
 * The compact vector index saved in the store (engine/vector-persistence.ts): restored on open only when current
 * and whole, with the same answers as the index it was saved from; saves rewrite only changed chunks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openNodeStore } from '../../../src/node.js';
import { createEngine, isEngramError, memoryStore, type Engine, type Store } from '../../../src/index.js';
import type { IvfIndex, ListedRows } from '../../../src/vector/ivf.js';
import { SAVED_CHUNK_ROWS } from '../../../src/vector/saved-rows.js';
import { testEmbedder } from '../helpers/embedder.js';
import { reopenable } from '../helpers/stores.js';
import { ListsWatchingScan, randomSource } from '../helpers/vectors.js';

const VOCABULARY = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}`);
const SPACE = 'test-embedder';
const HEADER = `engram.vector-rows.${SPACE}`;

function texts(seed: number, n: number): string[] {
  const { random } = randomSource(seed);
  return Array.from({ length: n }, () => Array.from({ length: 4 + Math.floor(random() * 6) }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]).join(' '));
}

const QUERIES = texts(99, 12);

/** Lists each engine's compact index takes from its scan, to read their status. */
const made: IvfIndex<ListedRows>[] = [];

const open = (store: Store) =>
  createEngine({
    store,
    embedder: testEmbedder({ dim: 32, id: SPACE }),
    supersede: false,
    vectorMemory: 'compact',
    vectorScan: () => new ListsWatchingScan(made, { ivfMinRows: 2_000, minCandidates: 200 }),
  });

async function answers(engine: Engine) {
  const out = [];
  for (const query of QUERIES) out.push((await engine.search(query, { mode: 'vector', touch: false, k: 10 })).hits.map((h) => [h.id, h.score]));
  return out;
}

async function filled(store: Store, n: number): Promise<Engine> {
  const engine = await open(store);
  const input = texts(1, n).map((text, i) => ({ id: `m${i}`, text }));
  for (let start = 0; start < n; start += 2_500) await engine.import(input.slice(start, start + 2_500));
  await made.at(-1)!.idle();
  expect(made.at(-1)!.status().answering).toBe('lists');
  return engine;
}

describe('the compact vector index saved in the store', () => {
  it('restores codes and lists on open with the answers of the index saved, and saves only changed chunks after', async () => {
    const store = reopenable(memoryStore());
    const engine = await filled(store, 20_000);
    const before = await answers(engine);
    const full = await engine.saveVectorIndex();
    expect(full).toBeGreaterThan(20_000 * 32);
    expect(await engine.saveVectorIndex()).toBe(0); // nothing changed
    await engine.close();

    const reopened = await open(store);
    expect(reopened.vectorSource).toBe('saved');
    // The lists answer at once: no training, assignment or calibration after open.
    expect(made.at(-1)!.status()).toMatchObject({ answering: 'lists', building: false });
    expect(await answers(reopened)).toEqual(before);

    // A few writes: the next save rewrites their chunks (the first, where the last rows moved, and the last),
    // not the middle one.
    await reopened.add(texts(2, 5).map((text, i) => ({ id: `new${i}`, text })));
    await reopened.remove(['m3', 'm4']);
    const after = await answers(reopened);
    const chunks = async () => Promise.all([0, 1, 2].map((c) => store.readMeta(`${HEADER}.${c}`)));
    const saved = await chunks();
    const partial = await reopened.saveVectorIndex();
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(full);
    const resaved = await chunks();
    expect([0, 1, 2].map((c) => resaved[c]!.toString() === saved[c]!.toString())).toEqual([false, true, false]);
    await reopened.close();

    const third = await open(store);
    expect(third.vectorSource).toBe('saved');
    expect(await answers(third)).toEqual(after);
    expect(await third.count()).toBe(20_003);
    // Another embedder's vectors complete: the old space's vectors go, and its saved form with them.
    await third.saveVectorIndex();
    expect(await store.readMeta(`${HEADER}.lists.2`)).toBeInstanceOf(Uint8Array);
    await third.setEmbedder(testEmbedder({ dim: 32, id: 'other-embedder' }));
    await third.ready;
    await third.flush();
    expect(await store.readMeta(HEADER)).toBeNull();
    expect(await store.readMeta(`${HEADER}.0`)).toBeNull();
    expect(await store.readMeta(`${HEADER}.lists.2`)).toBeNull();
    await third.close();
  }, 120_000);

  it('is not restored once a vector was written after the save, nor from a corrupt chunk or a save cut short', async () => {
    const inner = memoryStore();
    let failHeader = false;
    const store: Store = {
      ...reopenable(inner),
      write: async (change) => {
        if (failHeader && change.meta && HEADER in change.meta) throw new Error('disk full');
        return inner.write(change);
      },
    };
    const engine = await filled(store, 20_000);
    await engine.saveVectorIndex();
    await engine.add({ id: 'late', text: 'w1 w2 w3' }); // after the save: the counter moves
    await engine.close();

    const stale = await open(store);
    expect(stale.vectorSource).toBe('loaded');
    expect((await stale.search('w1 w2 w3', { mode: 'vector', touch: false })).hits[0]!.id).toBe('late');
    expect(await stale.saveVectorIndex()).toBeGreaterThan(0);
    await stale.close();

    // One flipped byte in the second chunk: refused (checksum), the vectors are read and encoded again.
    const chunk = (await inner.readMeta(`${HEADER}.1`)) as Uint8Array;
    expect(chunk.byteLength).toBeGreaterThan(SAVED_CHUNK_ROWS);
    chunk[chunk.byteLength - 2_000] = chunk[chunk.byteLength - 2_000]! ^ 1;
    await inner.write({ meta: { [`${HEADER}.1`]: chunk } });
    const corrupt = await open(store);
    expect(corrupt.vectorSource).toBe('loaded');
    expect(await corrupt.count()).toBe(20_001);
    await corrupt.saveVectorIndex();
    await corrupt.close();
    const mended = await open(store);
    expect(mended.vectorSource).toBe('saved');

    // A save whose header write fails: its chunks carry a tag the stored header does not name.
    await mended.add({ id: 'later', text: 'w4 w5 w6' });
    failHeader = true;
    const failed = await mended.saveVectorIndex().catch((error: unknown) => error);
    expect(isEngramError(failed) && failed.code).toBe('STORE_FAILED');
    failHeader = false;
    await mended.close();
    const cut = await open(store);
    expect(cut.vectorSource).toBe('loaded');
    expect((await cut.search('w4 w5 w6', { mode: 'vector', touch: false })).hits[0]!.id).toBe('later');
    await cut.close();
  }, 120_000);

  it('in a SQLite file: lists built after the codes were saved are saved at once, and answer at the next open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-vector-rows-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'memories.sqlite3');
    const engine = await open(await openNodeStore({ path }));
    const input = texts(1, 20_000).map((text, i) => ({ id: `m${i}`, text }));
    for (let start = 0; start < input.length; start += 5_000) await engine.import(input.slice(start, start + 5_000));
    const lists = made.at(-1)!;
    expect(lists.status().answering).toBe('scan'); // the build waits for writes to pause
    expect(await engine.saveVectorIndex()).toBeGreaterThan(0);
    await lists.idle();
    expect(lists.status().answering).toBe('lists');
    await engine.flush(); // the lists' save, queued when they started answering
    const before = await answers(engine);
    expect(await engine.saveVectorIndex()).toBe(0);
    await engine.close();

    const reopened = await open(await openNodeStore({ path }));
    expect(reopened.vectorSource).toBe('saved');
    expect(made.at(-1)!.status()).toMatchObject({ answering: 'lists', building: false });
    expect(await answers(reopened)).toEqual(before);
    await reopened.close();
  }, 120_000);
});
