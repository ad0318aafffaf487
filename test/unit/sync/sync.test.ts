/**
 * Sync between real engines through a real local S3 server (s3rver over HTTP): each test gets its own bucket
 * prefix, its devices their own clocks.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEngine, type Engine, type EngineOptions } from '../../../src/engine/engine.js';
import { memoryStore } from '../../../src/store/memory-store.js';
import type { Store } from '../../../src/store/store.js';
import { ErrorCode } from '../../../src/errors.js';
import { openNodeStore } from '../../../src/store/node/file-store.js';
import { epochBase, KEY_RECORD } from '../../../src/sync/envelope.js';
import { s3Transport } from '../../../src/sync/s3.js';
import { snapshotName } from '../../../src/sync/snapshot.js';
import { objectName, type SyncOptions } from '../../../src/sync/sync.js';
import type { SyncTransport } from '../../../src/sync/transport.js';
import type { MemoryRecord } from '../../../src/types.js';
import { testEmbedder } from '../helpers/embedder.js';
import { bucketHolds, startS3, type LocalS3 } from './s3-server.js';

let s3: LocalS3;
let transport: SyncTransport;
let run = 0;
const engines: Engine[] = [];
beforeAll(async () => {
  s3 = await startS3();
  transport = s3Transport(s3.config);
});
afterAll(async () => {
  for (const engine of engines) await engine.close().catch(() => undefined);
  await s3.close();
});

const DAY = 86_400_000;
const key = crypto.getRandomValues(new Uint8Array(32));

/** A fresh prefix (one bucket per test) and a way to open devices on it, each with its own settable clock. */
function setup(options: { passphrase?: string; key?: Uint8Array; transport?: SyncTransport } = {}) {
  const prefix = `t${++run}/`;
  return {
    prefix,
    async device(extra: { store?: Store; limits?: EngineOptions['limits']; start?: number; transport?: SyncTransport; key?: Uint8Array; passphrase?: string; sync?: Pick<SyncOptions, 'snapshotEvery' | 'retainMs' | 'maxClockDriftMs'> } = {}) {
      const clock = { now: extra.start ?? Date.UTC(2026, 0, 1) };
      const secret = extra.key ? undefined : (extra.passphrase ?? options.passphrase);
      const engine = await createEngine({
        embedder: testEmbedder(),
        clock: () => clock.now,
        ...(extra.store ? { store: extra.store } : {}),
        ...(extra.limits ? { limits: extra.limits } : {}),
        sync: {
          transport: extra.transport ?? options.transport ?? s3.config,
          prefix,
          intervalMs: 0,
          ...extra.sync,
          ...(secret !== undefined ? { passphrase: secret, iterations: 100_000 } : { key: extra.key ?? options.key ?? key }),
        },
      });
      engines.push(engine);
      return Object.assign(engine, { clock });
    },
  };
}

/** Where the bucket's current key epoch keeps its objects (every key record made now has its own epoch). */
async function baseOf(prefix: string): Promise<string> {
  const { epoch } = JSON.parse(new TextDecoder().decode((await transport.get(prefix + KEY_RECORD))!)) as { epoch?: string };
  return epochBase(prefix, epoch ?? '');
}

/** Records by id, without the retrieval sessions (session ids are this device's own: they do not sync). */
const byId = (records: MemoryRecord[]) => records.map(({ sessions: _, ...rest }) => rest).sort((a, b) => (a.id < b.id ? -1 : 1));
/** Sync both ways until both have seen everything: A, B, then A again. */
async function converge(...devices: Engine[]) {
  for (const d of devices) await d.syncNow();
  for (const d of devices) await d.syncNow();
}

/** Two devices on a fresh prefix, both holding `texts` (added on A, then synced). */
async function twoDevicesWith(...texts: string[]) {
  const { device } = setup();
  const a = await device();
  const b = await device();
  const ids = await a.add(texts.map((text) => ({ text })));
  await converge(a, b);
  return { a, b, ids };
}

test('memories added on A appear on B, found by hybrid search; the bucket holds no text, tag or meta value and only padded objects', async () => {
  const { device, prefix } = setup();
  const a = await device();
  const b = await device();
  const [id] = await a.add({ text: 'Grandma zanzibarcanary likes tulips and orchids', tags: ['tagcanaryxyz'], project: 'projcanary', meta: { secret: 'metacanaryvalue' } });
  await a.link(id!, (await a.add({ text: 'orchids need little water' }))[0]!, 'references');
  const status = await a.syncNow();
  expect(status.pending).toBe(0);
  await b.syncNow();
  const got = await b.get(id!);
  expect(got).toMatchObject({ text: 'Grandma zanzibarcanary likes tulips and orchids', tags: ['tagcanaryxyz'], project: 'projcanary', meta: { secret: 'metacanaryvalue' } });
  const { hits } = await b.search('which flowers does grandma like zanzibarcanary');
  expect(hits[0]?.id).toBe(id);
  expect(hits[0]!.explain.vecRank).not.toBeNull();
  expect(hits[0]!.explain.bm25Rank).not.toBeNull();
  expect((await b.why(id!)).edges).toHaveLength(1);
  expect((await b.stats()).sync).toMatchObject({ pending: 0, error: null });
  for (const canary of ['zanzibarcanary', 'tagcanaryxyz', 'projcanary', 'metacanaryvalue', 'orchids', 'references']) expect(bucketHolds(s3, canary)).toEqual([]);
  const base = await baseOf(prefix);
  const objects = s3.files().filter((f) => f.includes(`${base}log`) && f.endsWith('._S3rver_object'));
  expect(objects.length).toBeGreaterThan(0);
  // 4 bytes magic + 12 IV + 16 tag around a plaintext padded to a power of two ≥ 1 KiB.
  for (const file of objects) {
    const size = statSync(file).size - 32;
    expect(size >= 1024 && (size & (size - 1)) === 0).toBe(true);
  }
});

test('edits made offline on both devices converge to the same records, field by field', async () => {
  const { device } = setup();
  const a = await device();
  const b = await device();
  const [x] = await a.add({ text: 'the shared note about sailing', tags: ['boat'] });
  await converge(a, b);
  a.clock.now += 1000;
  b.clock.now += 2000;
  await a.update(x!, { text: 'the shared note about sailing to Crete', priority: 1.5 });
  await b.update(x!, { tags: ['boat', 'summer'], pinned: true, priority: 2 });
  await a.add({ text: 'only on A: buy rope' });
  await b.add({ text: 'only on B: check the weather' });
  await converge(a, b);
  const [exportA, exportB] = [byId(await a.export()), byId(await b.export())];
  expect(exportA).toEqual(exportB);
  expect(exportA).toHaveLength(3);
  // Different fields both survive; the same field goes to the later writer (B, priority 2).
  expect(await b.get(x!)).toMatchObject({ text: 'the shared note about sailing to Crete', tags: ['boat', 'summer'], pinned: true, priority: 2 });
  expect((await b.search('Crete')).hits[0]?.id).toBe(x);
});

test('a removal wins over an older update, and over an update made later without seeing it', async () => {
  const { a, b, ids: [x, y] } = await twoDevicesWith('first memory to go', 'second memory to go');
  b.clock.now += 1000;
  await b.update(x!, { text: 'edited before the removal' });
  a.clock.now += 5000;
  await a.remove(x!);
  await b.remove(y!);
  a.clock.now += 10_000;
  await a.update(y!, { priority: 2 });
  await converge(a, b);
  for (const d of [a, b]) {
    expect(await d.get(x!)).toBeNull();
    expect(await d.get(y!)).toBeNull();
    expect(await d.count()).toBe(0);
    expect((await d.search('memory to go')).hits).toEqual([]);
  }
});

test('a device offline for a month of clock catches up, and its next edit wins though its clock lags', async () => {
  // B's wall clock lags a month: within the drift it is given (the default refuses entries a day ahead of it).
  const { device } = setup();
  const a = await device();
  const b = await device({ sync: { maxClockDriftMs: 60 * DAY } });
  const [x] = await a.add({ text: 'plan the garden' });
  await converge(a, b);
  // B edits offline early in the month; A keeps working for thirty days.
  b.clock.now += DAY;
  await b.update(x!, { text: 'plan the garden: roses' });
  const added: string[] = [];
  for (let day = 1; day <= 30; day++) {
    a.clock.now += DAY;
    added.push(...(await a.add({ text: `day ${day} of the month: watered the lavender` })));
    if (day === 20) await a.update(x!, { text: 'plan the garden: tomatoes' });
  }
  await a.syncNow();
  await b.syncNow();
  expect(await b.count()).toBe(31);
  expect((await b.get(x!))?.text).toBe('plan the garden: tomatoes');
  // B's wall clock is still a month behind, but it has seen A's clock: its next edit is later.
  await b.update(x!, { text: 'plan the garden: beans' });
  await converge(b, a);
  expect((await a.get(x!))?.text).toBe('plan the garden: beans');
  expect(byId(await a.export())).toEqual(byId(await b.export()));
});

test('an upload killed midway leaves the bucket usable, and the retry sends the rest once', async () => {
  let puts = 0;
  let failAfter = Infinity;
  const flaky: SyncTransport = {
    list: (p) => transport.list(p),
    get: (k) => transport.get(k),
    async put(k, bytes) {
      if (puts >= failAfter) throw new Error('connection reset');
      puts++;
      await transport.put(k, bytes);
    },
  };
  const { device } = setup();
  const a = await device({ transport: flaky });
  const b = await device();
  await a.syncNow(); // the key record
  for (let i = 0; i < 450; i++) await a.add({ text: `memory number ${i}` });
  failAfter = puts + 1;
  await expect(a.syncNow()).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED });
  const stats = await a.stats();
  expect(stats.sync?.error?.code).toBe(ErrorCode.SYNC_FAILED);
  expect(stats.sync?.pending).toBe(250);
  await b.syncNow();
  expect(await b.count()).toBe(200);
  failAfter = Infinity;
  expect((await a.syncNow()).pending).toBe(0);
  await b.syncNow();
  expect(await b.count()).toBe(450);
  expect(byId(await a.export())).toEqual(byId(await b.export()));
});

test('a tampered, replayed, reordered, swapped or cut object is set aside with SYNC_TAMPERED: what comes before it applies, and it heals when put back', async () => {
  const { device, prefix } = setup();
  const a = await device();
  const b = await device();
  await a.add({ text: 'one' });
  await a.syncNow();
  await a.add({ text: 'two' });
  await a.syncNow();
  const device_ = (await a.stats()).sync!.device;
  const first = objectName(await baseOf(prefix), device_, 1);
  const second = objectName(await baseOf(prefix), device_, 2);
  const original = [(await transport.get(first))!, (await transport.get(second))!];
  // Each time, only A's bad object is set aside (a complete body failing its check twice: SYNC_TAMPERED); the
  // round itself succeeds, and what comes before the bad object applies.
  const setAside = async (engine: Engine, object: string, count: number) => {
    const status = await engine.syncNow();
    expect(status.error).toBeNull();
    expect(status.problems).toEqual([expect.objectContaining({ device: device_, object, code: ErrorCode.SYNC_TAMPERED })]);
    expect(await engine.count()).toBe(count);
  };
  // A flipped byte in the second object: the first, intact, applies.
  const flipped = new Uint8Array(original[1]!);
  flipped[flipped.length - 40]! ^= 1;
  await transport.put(second, flipped);
  await setAside(b, second, 1);
  // Reordered (the objects swap names), to a device that has read neither: the first is refused, so nothing applies.
  const c = await device();
  await transport.put(first, original[1]!);
  await transport.put(second, original[0]!);
  await setAside(c, first, 0);
  // Replayed: the first object again under the next name.
  await transport.put(first, original[0]!);
  await transport.put(second, original[0]!);
  await setAside(b, second, 1);
  // Cut short (stored so: a complete body that fails its check).
  await transport.put(second, original[1]!.subarray(0, 100));
  await setAside(b, second, 1);
  // Put back as written: everything arrives, and nothing is reported any more.
  await transport.put(second, original[1]!);
  for (const engine of [b, c]) {
    const status = await engine.syncNow();
    expect(status.problems).toEqual([]);
    expect((await engine.export()).map((r) => r.text).sort()).toEqual(['one', 'two']);
  }
});

test('a device with another key or passphrase is WRONG_KEY; the same passphrase on a second device syncs', async () => {
  const { device } = setup({ passphrase: 'correct horse battery' });
  const a = await device();
  await a.add({ text: 'passphrase protected note' });
  await a.syncNow();
  const b = await device();
  await b.syncNow();
  expect(await b.count()).toBe(1);
  const wrong = await device({ passphrase: 'another passphrase' });
  await expect(wrong.syncNow()).rejects.toMatchObject({ code: ErrorCode.WRONG_KEY });
  const raw = await device({ key });
  await expect(raw.syncNow()).rejects.toMatchObject({ code: ErrorCode.WRONG_KEY });
  expect(await wrong.count()).toBe(0);
  await expect(createEngine({ sync: { transport: s3.config, passphrase: 'x' } as never })).resolves.toBeDefined();
  await expect(createEngine({ sync: { transport: s3.config, passphrase: 'x', key } as never })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  await expect(createEngine({ sync: { transport: {} as never, key } })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
});

test('queued changes survive a restart (file store), and learned state and unlinks sync', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'engram-sync-'));
  try {
    const { device, prefix } = setup();
    const path = join(dir, 'a.db');
    const a1 = await device({ store: await openNodeStore({ path }) });
    const [x, y] = await a1.add([{ text: 'kept across a restart' }, { text: 'linked to it' }]);
    await a1.link(x!, y!, 'references');
    await a1.close();
    const a = await device({ store: await openNodeStore({ path }), sync: { snapshotEvery: 1 } });
    expect((await a.stats()).sync?.pending).toBe(2);
    const b = await device();
    await converge(a, b);
    expect((await b.why(x!)).edges).toHaveLength(1);
    await a.unlink(x!, y!);
    // Retrieval on B raises access counts; A takes the larger value, once B uploads a change of its own: a
    // search alone uploads nothing (docs/sync.md, Threat model).
    await b.search('kept across a restart');
    await b.flush();
    const touched = (await b.get(x!))!.accessCount;
    expect(touched).toBeGreaterThan(0);
    const listed = (await transport.list(prefix)).length;
    await b.syncNow();
    expect((await transport.list(prefix)).length).toBe(listed);
    expect((await b.stats()).sync?.pending).toBeGreaterThan(0);
    await b.add({ text: 'a change of its own' });
    await converge(a, b);
    expect((await a.get(x!))!.accessCount).toBe(touched);
    expect((await b.why(x!)).edges).toHaveLength(0);
    expect(byId(await a.export())).toEqual(byId(await b.export()));
    // Records read back from the file still match their field clocks, so this device writes snapshots too.
    expect((await transport.list(`${await baseOf(prefix)}snap/${(await a.stats()).sync!.device}/`)).length).toBeGreaterThan(0);
    // The device id and the queue live in the file: a restart is the same device.
    expect(readFileSync(path).length).toBeGreaterThan(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('many objects arrive in batches, split to the call limit of the receiver; a record beyond its limits is left out, not a stall', async () => {
  const { device } = setup();
  const a = await device();
  for (let i = 0; i < 70; i++) {
    await a.add([{ text: `batch ${i} first` }, { text: `batch ${i} second` }]);
    await a.syncNow(); // one object per round
  }
  const [long] = await a.add({ text: `a long memory ${'word '.repeat(40)}` });
  await a.syncNow();
  const b = await device({ limits: { maxRecordsPerCall: 25, maxTextLength: 100 } });
  const status = await b.syncNow();
  expect(status.error).toBeNull();
  expect(await b.count()).toBe(140);
  expect(await b.get(long!)).toBeNull();
  expect(byId(await b.export())).toEqual(byId((await a.export()).filter((r) => r.id !== long)));
}, 60_000);

test('memories stored before sync was turned on are uploaded by the first round', async () => {
  const store = memoryStore();
  const plain = await createEngine({ store, embedder: null });
  const [x, y] = await plain.add([{ text: 'written before sync existed' }, { text: 'also from before' }]);
  await plain.link(x!, y!, 'derives_from');
  await plain.flush();
  // The same store, opened again with sync (a memory store survives its engine for this test).
  const { device } = setup();
  const a = await device({ store: Object.assign(Object.create(store) as Store, { close: async () => undefined }) });
  expect((await a.stats()).sync?.pending).toBe(1);
  const b = await device();
  await converge(a, b);
  expect(byId(await b.export())).toEqual(byId(await a.export()));
  expect((await b.why(x!)).edges.map((e) => e.kind)).toEqual(['derives_from']);
});

test('associations formed by retrieval on one device reach the other, each pair at the larger decayed weight', async () => {
  const { a, b, ids: [x, y] } = await twoDevicesWith('tulips bloom in spring', 'tulips need cold winters');
  // Retrieved together on B twice (stronger), on A once but later.
  await b.search('tulips');
  await b.flush();
  b.clock.now += 1000;
  await b.search('tulips');
  await b.flush();
  a.clock.now += 2000;
  await a.search('tulips');
  await a.flush();
  const [onA, onB] = [(await a.related(x!))[0], (await b.related(x!))[0]];
  expect(onA?.id).toBe(y);
  expect(onB?.id).toBe(y);
  expect(onB!.weight).toBeGreaterThan(onA!.weight);
  // What searches form travels with each device's next change.
  await a.add({ text: 'a change on A' });
  await b.add({ text: 'a change on B' });
  await converge(a, b);
  // The same stored edge on both (weights are decayed to each device's own clock when read).
  a.clock.now = b.clock.now;
  const [afterA, afterB] = [await a.related(x!), await b.related(x!)];
  expect(afterA).toEqual(afterB);
  expect(afterA[0]).toMatchObject({ id: y, lastAt: onB!.lastAt });
  expect((await a.stats()).associations).toBe(1);
});

/** A transport that counts the objects read, by kind. */
function counting() {
  const gets = { log: 0, snap: 0 };
  const counted: SyncTransport = {
    list: (p) => transport.list(p),
    get: (k) => {
      if (k.includes('/log/')) gets.log++;
      if (k.includes('/snap/')) gets.snap++;
      return transport.get(k);
    },
    put: (k, bytes) => transport.put(k, bytes),
  };
  return { gets, counted };
}

test('a new device starts from a snapshot: it reads fewer objects and ends with the same memories, removals and links', async () => {
  const { device, prefix } = setup();
  const a = await device({ sync: { snapshotEvery: 30 } });
  const b = await device();
  const [x, y, z] = await a.add([{ text: 'snapshot first' }, { text: 'snapshot second' }, { text: 'snapshot third, removed' }]);
  await a.link(x!, y!, 'references');
  await a.syncNow();
  await b.syncNow();
  b.clock.now += 1000;
  await b.update(x!, { tags: ['from-b'] });
  await b.syncNow();
  await a.remove(z!);
  for (let i = 0; i < 40; i++) {
    a.clock.now += 1000;
    await a.add({ text: `round ${i} of the snapshot test` });
    await a.syncNow();
  }
  const base = await baseOf(prefix);
  expect(await transport.list(`${base}snap/`)).toHaveLength(2);
  const logObjects = (await transport.list(`${base}log/`)).length;
  expect(logObjects).toBe(42);
  const { gets, counted } = counting();
  const c = await device({ transport: counted, sync: { snapshotEvery: 1 } });
  await c.syncNow();
  // One head and one data object, then only the log objects written after the snapshot.
  expect(gets.snap).toBe(2);
  expect(gets.log).toBeLessThan(logObjects - 25);
  expect(byId(await c.export())).toEqual(byId(await a.export()));
  expect(await c.get(z!)).toBeNull();
  expect((await c.get(x!))?.tags).toEqual(['from-b']);
  expect((await c.why(x!)).edges).toHaveLength(1);
  expect((await c.search('snapshot second')).hits[0]?.id).toBe(y);
  // What C received, stored through its own checks, still matches its clocks: C can write a snapshot in turn.
  expect(await transport.list(`${base}snap/${(await c.stats()).sync!.device}/`)).toHaveLength(2);
}, 60_000);

test('compaction deletes the objects a snapshot covers; a device offline across it still converges', async () => {
  const { device, prefix } = setup();
  const a = await device({ sync: { snapshotEvery: 5, retainMs: 0 } });
  const b = await device();
  const c = await device();
  const [x, y, z] = await a.add([{ text: 'kept and edited' }, { text: 'linked then unlinked' }, { text: 'removed while C was away' }]);
  await a.link(x!, y!, 'references');
  await converge(a, b, c);
  // C goes offline; B and A keep changing things.
  b.clock.now += 1000;
  await b.update(x!, { text: 'kept and edited on B' });
  await b.remove(z!);
  await b.syncNow();
  a.clock.now += 2000;
  await a.syncNow();
  await a.unlink(x!, y!);
  for (let i = 0; i < 5; i++) {
    a.clock.now += 1000;
    await a.add({ text: `written while C was away ${i}` });
    await a.syncNow();
  }
  const [deviceA, deviceB] = [(await a.stats()).sync!.device, (await b.stats()).sync!.device];
  // C applied A's first object and B's none: both are gone, so C cannot catch up from the log alone.
  const base = await baseOf(prefix);
  // Control: the names below are the epoch's (its log is not empty).
  expect((await transport.list(`${base}log/`)).length).toBeGreaterThan(0);
  expect(await transport.get(objectName(base, deviceA, 2))).toBeNull();
  expect(await transport.get(objectName(base, deviceB, 1))).toBeNull();
  expect((await transport.list(`${base}log/`)).length).toBeLessThan(3);
  await c.syncNow();
  expect(byId(await c.export())).toEqual(byId(await a.export()));
  expect(await c.get(z!)).toBeNull();
  expect((await c.get(x!))?.text).toBe('kept and edited on B');
  expect((await c.why(x!)).edges).toHaveLength(0);
  // C's own edits still reach the others afterwards.
  c.clock.now += 10_000;
  await c.update(y!, { pinned: true });
  await converge(c, b, a);
  expect((await a.get(y!))?.pinned).toBe(true);
  expect(byId(await b.export())).toEqual(byId(await a.export()));
}, 60_000);

test('a tampered, replayed or swapped snapshot is set aside with SYNC_TAMPERED and the device reads the log instead', async () => {
  const { device, prefix } = setup();
  const a = await device({ sync: { snapshotEvery: 2 } });
  for (let i = 0; i < 4; i++) {
    await a.add({ text: `snapshotted memory ${i}` });
    await a.syncNow();
  }
  const writer = (await a.stats()).sync!.device;
  const base = await baseOf(prefix);
  const names = [1, 2].map((seq) => ({ head: snapshotName(base, writer, seq, 'head'), data: snapshotName(base, writer, seq, 'data') }));
  const original = await Promise.all(names.map(async (n) => ({ head: (await transport.get(n.head))!, data: (await transport.get(n.data))! })));
  const d = await device();
  // The snapshot is set aside (SYNC_TAMPERED, reported), and the device reads the log instead.
  const setAside = async (engine: Engine, object: string) => {
    const status = await engine.syncNow();
    expect(status.problems).toEqual([expect.objectContaining({ device: writer, object, code: ErrorCode.SYNC_TAMPERED })]);
    expect(byId(await engine.export())).toEqual(byId(await a.export()));
  };
  const flipped = new Uint8Array(original[1]!.data);
  flipped[flipped.length - 40]! ^= 1;
  await transport.put(names[1]!.data, flipped);
  await setAside(d, names[1]!.data);
  // The older snapshot's data replayed under the newer name, to a fresh device.
  await transport.put(names[1]!.data, original[0]!.data);
  await setAside(await device(), names[1]!.data);
  // Head and data swapped.
  await transport.put(names[1]!.data, original[1]!.head);
  await setAside(await device(), names[1]!.data);
  await transport.put(names[1]!.data, original[1]!.data);
  // The older head replayed under the newer name (to a device that has not read that head yet).
  await transport.put(names[1]!.head, original[0]!.head);
  const e = await device();
  await setAside(e, names[1]!.head);
  await transport.put(names[1]!.head, original[1]!.head);
  for (const fresh of [d, e]) {
    await fresh.syncNow();
    expect(byId(await fresh.export())).toEqual(byId(await a.export()));
  }
});
