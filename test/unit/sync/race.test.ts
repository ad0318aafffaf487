/**
 * Races between devices through a real local S3 server (s3rver over HTTP), driven by transport wrappers: an upload
 * landing while another device rotates the key, and two devices setting up an empty bucket at once.
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { createEngine, type Engine } from '../../../src/engine/engine.js';
import { openNodeStore } from '../../../src/store/node/file-store.js';
import type { Store } from '../../../src/store/store.js';
import { ErrorCode } from '../../../src/errors.js';
import { epochBase, KEY_RECORD, newKeyRecord, syncKey } from '../../../src/sync/envelope.js';
import type { SyncTransport } from '../../../src/sync/transport.js';
import type { MemoryRecord } from '../../../src/types.js';
import { testEmbedder } from '../helpers/embedder.js';
import { bucketHolds, s3Suite } from './s3-server.js';

const suite = s3Suite('race');
const { engines } = suite;
let run = 0;

const OLD = 'the old sync passphrase';
const NEW = 'the new sync passphrase';

async function device(prefix: string, passphrase: string, options: { store?: Store; transport?: SyncTransport } = {}): Promise<Engine> {
  const engine = await createEngine({
    embedder: testEmbedder(),
    ...(options.store ? { store: options.store } : {}),
    sync: { transport: options.transport ?? suite.transport, prefix, intervalMs: 0, passphrase, iterations: 100_000 },
  });
  engines.push(engine);
  return engine;
}

const byId = (records: MemoryRecord[]) => records.map(({ sessions: _, ...rest }) => rest).sort((a, b) => (a.id < b.id ? -1 : 1));
async function converge(...devices: Engine[]) {
  for (const d of devices) await d.syncNow();
  for (const d of devices) await d.syncNow();
}
async function epochOf(prefix: string): Promise<string> {
  return (JSON.parse(new TextDecoder().decode((await suite.transport.get(prefix + KEY_RECORD))!)) as { epoch?: string }).epoch ?? '';
}

test('an upload landing between the rotating device\'s round and its switch reaches every device given the new key, with its edit, removal and link, without rolling back a newer edit', async () => {
  const prefix = `race${++run}/`;
  const [bPath, cPath] = [join(suite.dir, `b${run}.db`), join(suite.dir, `c${run}.db`)];
  let race: (() => Promise<void>) | null = null;
  let oldBase = '';
  // A's transport: just before A's first object in the new epoch (the rotation's snapshot, after A read its state), B uploads.
  const aTransport: SyncTransport = {
    list: (k) => suite.transport.list(k),
    get: (k) => suite.transport.get(k),
    delete: (k) => suite.transport.delete!(k),
    async put(key, bytes) {
      // (The old epoch's objects are straight under the prefix when it is a version 1 record's.)
      if (race !== null && key.startsWith(`${prefix}e/`) && (oldBase === prefix || !key.startsWith(oldBase))) {
        const run_ = race;
        race = null;
        await run_();
      }
      await suite.transport.put(key, bytes);
    },
  };
  const a = await device(prefix, OLD, { transport: aTransport });
  let b = await device(prefix, OLD, { store: await openNodeStore({ path: bPath }) });
  let c = await device(prefix, OLD, { store: await openNodeStore({ path: cPath }) });
  const [x] = await a.add({ text: 'the boat is in the north shed', tags: ['boat'] });
  await b.add({ text: 'B wrote this long before the rotation' });
  await c.add({ text: 'C wrote this before the rotation' });
  await converge(a, b, c);
  oldBase = epochBase(prefix, await epochOf(prefix));
  let racingId = '';
  race = async () => {
    racingId = (await b.add({ text: 'racingcanary: the oars are in the loft' }))[0]!;
    await b.update(x!, { tags: ['racing'], priority: 2 });
    await b.link(racingId, x!, 'references');
    await b.remove((await b.export()).find((r) => r.text.startsWith('B wrote'))!.id);
    await b.syncNow();
  };
  await a.rotateSyncKey({ passphrase: NEW, iterations: 100_000 });
  expect(race).toBeNull();
  expect(racingId).not.toBe('');
  // B's racing object was deleted with the old epoch before reaching anyone.
  expect(await suite.transport.list(`${oldBase}log/`)).toEqual([]);
  expect(await a.get(racingId)).toBeNull();
  // A edits the tags after the rotation: a later clock than B's racing edit, which must not roll it back.
  await new Promise((resolve) => setTimeout(resolve, 5));
  await a.update(x!, { tags: ['newer'] });

  for (const old of [b, c]) await old.close();
  b = await device(prefix, NEW, { store: await openNodeStore({ path: bPath }) });
  c = await device(prefix, NEW, { store: await openNodeStore({ path: cPath }) });
  await converge(a, b, c);
  expect(byId(await a.export())).toEqual(byId(await b.export()));
  expect(byId(await c.export())).toEqual(byId(await a.export()));
  expect((await a.search('where are the oars racingcanary')).hits[0]?.id).toBe(racingId);
  expect(await a.get(x!)).toMatchObject({ tags: ['newer'], priority: 2 });
  expect(await a.count()).toBe(3);
  expect((await a.why(racingId)).edges).toHaveLength(1);
  // B sent again only what the rotation's snapshot lacked (one object); C, whose uploads it holds, nothing.
  const base = epochBase(prefix, await epochOf(prefix));
  const [bDevice, cDevice] = [(await b.stats()).sync!.device, (await c.stats()).sync!.device];
  expect(await suite.transport.list(`${base}log/${bDevice}/`)).toHaveLength(1);
  expect(await suite.transport.list(`${base}log/${cDevice}/`)).toEqual([]);
  expect(bucketHolds(suite.s3, 'racingcanary')).toEqual([]);
  expect(bucketHolds(suite.s3, 'oars')).toEqual([]);
});

test('two devices setting up an empty bucket at once: neither is refused, both end with both memories', async () => {
  const prefix = `race${++run}/`;
  let waiting!: () => void;
  const bWaits = new Promise<void>((resolve) => (waiting = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  // B's key record PUT waits until A has set the bucket up and uploaded a memory, then overwrites A's record.
  const bTransport: SyncTransport = {
    list: (k) => suite.transport.list(k),
    get: (k) => suite.transport.get(k),
    delete: (k) => suite.transport.delete!(k),
    async put(key, bytes) {
      if (key === prefix + KEY_RECORD) {
        waiting();
        await released;
      }
      await suite.transport.put(key, bytes);
    },
  };
  const a = await device(prefix, OLD);
  const b = await device(prefix, OLD, { transport: bTransport });
  const [fromB] = await b.add({ text: 'set up by B: the spare key is under the mat' });
  const bFirst = b.syncNow();
  await bWaits;
  const [fromA] = await a.add({ text: 'set up by A: the wifi password is on the fridge' });
  await a.syncNow();
  const aEpoch = await epochOf(prefix);
  expect(await suite.transport.list(`${epochBase(prefix, aEpoch)}log/`)).toHaveLength(1);
  release();
  await bFirst;
  // B's record replaced A's: A's object sits in an epoch nobody reads, and A sends its state again into B's.
  expect(await epochOf(prefix)).not.toBe(aEpoch);
  for (let round = 0; round < 3; round++) for (const d of [a, b]) await d.syncNow();
  for (const d of [a, b]) expect((await d.stats()).sync).toMatchObject({ pending: 0, error: null });
  expect(byId(await a.export())).toEqual(byId(await b.export()));
  expect((await a.get(fromB!))?.text).toContain('spare key');
  expect((await b.get(fromA!))?.text).toContain('wifi password');
  // A removed its objects from the epoch it left: the bucket holds the key record and the live epoch only.
  const live = epochBase(prefix, await epochOf(prefix));
  expect((await suite.transport.list(prefix)).filter((k) => k !== prefix + KEY_RECORD && !k.startsWith(live))).toEqual([]);
  expect(bucketHolds(suite.s3, 'wifi')).toEqual([]);
});

test('a device whose new key record is overwritten at once adopts the stored record (or is WRONG_KEY for another secret)', async () => {
  const theirs = await newKeyRecord({ passphrase: OLD, iterations: 100_000 });
  const bucket = new Map<string, Uint8Array>();
  // Another device's record lands right after this one's.
  const racing: SyncTransport = {
    list: async () => [...bucket.keys()],
    get: async (k) => bucket.get(k) ?? null,
    put: async (k, bytes) => {
      bucket.set(k, bytes);
      if (k.endsWith(KEY_RECORD)) bucket.set(k, new TextEncoder().encode(theirs.record));
    },
  };
  const mine = await syncKey(racing, 'p/', { passphrase: OLD });
  expect(mine).toMatchObject({ epoch: theirs.epoch, record: theirs.record });
  bucket.clear();
  await expect(syncKey(racing, 'p/', { passphrase: NEW })).rejects.toMatchObject({ code: ErrorCode.WRONG_KEY });
});
