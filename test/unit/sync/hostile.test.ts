/**
 * Sync against a broken or hostile bucket (docs/sync.md, Threat model): real engines, a real local S3 server
 * (s3rver), and a fault-injecting proxy in front of it (fault-proxy.ts) for errors, cut bodies, hangs, listings
 * that leave keys out and withheld objects. Junk objects, replayed key records, a cloned database and a clock
 * years ahead are made directly in the bucket or the store.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEngine, type Engine } from '../../../src/engine/engine.js';
import { ErrorCode } from '../../../src/errors.js';
import { openNodeStore } from '../../../src/store/node/file-store.js';
import type { Store } from '../../../src/store/store.js';
import { epochBase, KEY_RECORD, seal, syncKey } from '../../../src/sync/envelope.js';
import { formatHlc, MAX_COUNT, parseHlc, receive, tick } from '../../../src/sync/hlc.js';
import { META } from '../../../src/sync/log.js';
import { objectName, type SyncOptions } from '../../../src/sync/sync.js';
import type { MemoryRecord } from '../../../src/types.js';
import { testEmbedder } from '../helpers/embedder.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { s3Suite } from './s3-server.js';

const suite = s3Suite('hostile');
const { engines } = suite;
let proxy: FaultProxy;
beforeAll(async () => {
  proxy = await startFaultProxy(suite.s3.config);
});
afterAll(() => proxy.close());

const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);
let run = 0;
const key = crypto.getRandomValues(new Uint8Array(32));
const byId = (records: MemoryRecord[]) => records.map(({ sessions: _, ...rest }) => rest).sort((a, b) => (a.id < b.id ? -1 : 1));

type Extra = Partial<Pick<SyncOptions, 'requestTimeoutMs' | 'roundTimeoutMs' | 'maxObjectBytes' | 'maxClockDriftMs' | 'snapshotEvery' | 'retainMs' | 'key'>> & {
  store?: Store;
  start?: number;
  direct?: boolean;
};

/** A fresh prefix; its devices go through the proxy unless `direct`, each with its own settable clock. */
function bucket() {
  const prefix = `h${++run}/`;
  return {
    prefix,
    async device({ store, start, direct, ...sync }: Extra = {}) {
      const clock = { now: start ?? START };
      const engine = await createEngine({
        embedder: testEmbedder(),
        clock: () => clock.now,
        ...(store ? { store } : {}),
        sync: { transport: direct ? suite.s3.config : proxy.config, prefix, intervalMs: 0, key, ...sync },
      });
      engines.push(engine);
      return Object.assign(engine, { clock });
    },
    async base() {
      const { epoch } = JSON.parse(new TextDecoder().decode((await suite.transport.get(prefix + KEY_RECORD))!)) as { epoch?: string };
      return epochBase(prefix, epoch ?? '');
    },
  };
}

const deviceOf = async (engine: Engine) => (await engine.stats()).sync!.device;
const texts = async (engine: Engine) => (await engine.export()).map((r) => r.text).sort();
async function converge(...devices: Engine[]) {
  for (let pass = 0; pass < 2; pass++) for (const d of devices) await d.syncNow();
}
function clearFaults() {
  proxy.fault = () => null;
  proxy.hide = () => false;
  proxy.withhold = () => false;
  proxy.serve = () => null;
}

test('one junk object under a plausible name is set aside and reported; every other device still syncs, snapshots and compaction included', async () => {
  clearFaults();
  const { device, base } = bucket();
  const a = await device({ snapshotEvery: 2, retainMs: 0 });
  const b = await device();
  await a.add({ text: 'before the junk' });
  await a.syncNow();
  const junk = objectName(await base(), 'deadbeef', 1);
  await suite.transport.put(junk, crypto.getRandomValues(new Uint8Array(64)));
  for (let i = 0; i < 3; i++) {
    await a.add({ text: `after the junk ${i}` });
    await b.add({ text: `from B ${i}` });
    await converge(a, b);
  }
  for (const engine of [a, b]) {
    const status = (await engine.stats()).sync!;
    expect(status.error).toBeNull();
    expect(status.problems).toEqual([expect.objectContaining({ device: 'deadbeef', object: junk, code: ErrorCode.SYNC_TAMPERED })]);
  }
  expect(byId(await a.export())).toEqual(byId(await b.export()));
  expect(await a.count()).toBe(7);
  // A wrote snapshots and compacted its log; a new device starts from the snapshot, past the junk.
  expect((await suite.transport.list(`${await base()}snap/${await deviceOf(a)}/`)).length).toBeGreaterThan(0);
  expect(await suite.transport.get(objectName(await base(), await deviceOf(a), 1))).toBeNull();
  const c = await device();
  const status = await c.syncNow();
  expect(status.problems.map((p) => p.object)).toEqual([junk]);
  expect(byId(await c.export())).toEqual(byId(await a.export()));
  await suite.transport.delete!(junk);
  expect((await c.syncNow()).problems).toEqual([]);
}, 60_000);

test('junk under a device\'s own next name is written over by it (nobody\'s write): same id, the stream heals', async () => {
  clearFaults();
  const { device, base } = bucket();
  const a = await device();
  const b = await device();
  await a.add({ text: 'first from A' });
  await converge(a, b);
  const aId = await deviceOf(a);
  const next = objectName(await base(), aId, 2);
  await suite.transport.put(next, crypto.getRandomValues(new Uint8Array(64)));
  expect((await b.syncNow()).problems).toEqual([expect.objectContaining({ device: aId, object: next, code: ErrorCode.SYNC_TAMPERED })]);
  await a.add({ text: 'over the junk' });
  const after = await a.syncNow();
  expect(after.device).toBe(aId);
  expect(after.notices).toEqual([]);
  expect((await b.syncNow()).problems).toEqual([]);
  expect(await texts(b)).toEqual(['first from A', 'over the junk']);
}, 60_000);

test('transient faults are retried and reported as SYNC_FAILED, never SYNC_TAMPERED: 5xx, a body cut short', async () => {
  clearFaults();
  const { device } = bucket();
  const a = await device();
  const b = await device();
  const own = await deviceOf(a);
  const isObject = (r: { method: string; key: string; list: boolean }) => r.method === 'GET' && !r.list && r.key.includes(`/log/${own}/`);
  // One failure (any kind) is retried within the round: nothing to report.
  for (const [i, fault] of ([{ kind: 'error', status: 503 }, { kind: 'truncate' }] as const).entries()) {
    await a.add({ text: `through a flaky storage ${i}` });
    await a.syncNow();
    let left = 1;
    proxy.fault = (r) => (isObject(r) && left-- > 0 ? fault : null);
    const status = await b.syncNow();
    expect(left).toBe(-1);
    expect(status.problems).toEqual([]);
  }
  expect(await texts(b)).toEqual(['through a flaky storage 0', 'through a flaky storage 1']);
  // Persistent: A's stream is set aside with SYNC_FAILED while the others go on; healed once the storage is.
  await a.add({ text: 'second from A' });
  await a.syncNow();
  const c = await device();
  await c.add({ text: 'from C' });
  await c.syncNow();
  for (const fault of [{ kind: 'error', status: 500 }, { kind: 'truncate' }] as const) {
    proxy.fault = (r) => (isObject(r) ? fault : null);
    const status = await b.syncNow();
    expect(status.error).toBeNull();
    expect(status.problems).toEqual([expect.objectContaining({ device: own, code: ErrorCode.SYNC_FAILED })]);
    expect(await texts(b)).toEqual(['from C', 'through a flaky storage 0', 'through a flaky storage 1']);
  }
  clearFaults();
  expect((await b.syncNow()).problems).toEqual([]);
  expect(await texts(b)).toEqual(['from C', 'second from A', 'through a flaky storage 0', 'through a flaky storage 1']);
}, 60_000);

test('a hung storage: each request times out, syncNow settles within its bound, and close() ends a round at once', async () => {
  clearFaults();
  const { device } = bucket();
  const a = await device({ requestTimeoutMs: 2_000 });
  await a.add({ text: 'queued while the storage hangs' });
  proxy.fault = () => ({ kind: 'hang' });
  const started = performance.now();
  await expect(a.syncNow()).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED });
  expect(performance.now() - started).toBeLessThan(10_000);
  expect((await a.stats()).sync?.pending).toBe(1);
  // Long request timeouts, but a round bound.
  const b = await device({ requestTimeoutMs: 60_000, roundTimeoutMs: 500 });
  await expect(b.syncNow()).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED });
  // No bound at all that would fire in this test: close() aborts the round in flight.
  const c = await device({ requestTimeoutMs: 600_000, roundTimeoutMs: 600_000 });
  const round = c.syncNow();
  round.catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const closing = performance.now();
  await c.close();
  expect(performance.now() - closing).toBeLessThan(5_000);
  await expect(round).rejects.toMatchObject({ code: ErrorCode.SYNC_FAILED });
  clearFaults();
  const status = await a.syncNow();
  expect(status.pending).toBe(0);
}, 60_000);

test('a withheld object, and listings that leave keys out: the device reports what it waits for and since when, then catches up', async () => {
  clearFaults();
  const { device, base } = bucket();
  const a = await device();
  const b = await device();
  const c = await device();
  for (const text of ['a one', 'a two', 'a three']) {
    await a.add({ text });
    await a.syncNow();
  }
  const writer = await deviceOf(a);
  const second = objectName(await base(), writer, 2);
  const third = objectName(await base(), writer, 3);
  // A gap: object 2 is withheld while 3 is listed.
  proxy.withhold = (k) => k === second;
  await b.syncNow();
  b.clock.now += 60_000;
  const status = await b.syncNow();
  expect(status.waiting).toEqual([{ device: writer, object: second, since: START }]);
  expect(await texts(b)).toEqual(['a one']);
  // A withheld tail: nothing shows a gap, but C, which read all of A, says so in its next object.
  proxy.withhold = () => false;
  await c.syncNow();
  await c.add({ text: 'c saw all of A' });
  await c.syncNow();
  proxy.hide = (k) => k === second || k === third;
  const d = await device();
  await d.syncNow();
  expect((await d.syncNow()).waiting).toEqual([expect.objectContaining({ device: writer, object: second })]);
  // Keys left out of a listing now and then: nothing is skipped, everything arrives once they are listed.
  let calls = 0;
  proxy.hide = (k) => k.includes('/log/') && calls++ % 3 === 0;
  for (let i = 0; i < 4; i++) await d.syncNow();
  clearFaults();
  await d.syncNow();
  expect((await d.syncNow()).waiting).toEqual([]);
  expect(await texts(d)).toEqual(['a one', 'a three', 'a two', 'c saw all of A']);
  await converge(b);
  expect((await b.stats()).sync?.waiting).toEqual([]);
}, 60_000);

test('the key record is authenticated and remembered: a replayed older record, an altered one and a vanished one are refused, never WRONG_KEY or recreated', async () => {
  clearFaults();
  const { device, prefix } = bucket();
  const a = await device({ direct: true });
  const b = await device({ direct: true });
  await a.add({ text: 'before the rotation' });
  await converge(a, b);
  const old = (await suite.transport.get(prefix + KEY_RECORD))!;
  // A rotates to remove R (which holds the old key); B is given the new key.
  const next = crypto.getRandomValues(new Uint8Array(32));
  await a.rotateSyncKey({ key: next });
  const b2 = await device({ direct: true, key: next });
  await b2.syncNow();
  const current = (await suite.transport.get(prefix + KEY_RECORD))!;
  // R puts the old record back: refused as older, nothing uploaded under the old key.
  await suite.transport.put(prefix + KEY_RECORD, old);
  await b2.add({ text: 'written while the old record is back' });
  for (const engine of [a, b2]) {
    await expect(engine.syncNow()).rejects.toMatchObject({ code: ErrorCode.SYNC_TAMPERED, details: { keyRecord: 'older' } });
  }
  expect((await b2.stats()).sync?.pending).toBe(1);
  // An altered record (its epoch rewritten): refused, not re-uploaded into a new epoch.
  const altered = { ...(JSON.parse(new TextDecoder().decode(current)) as Record<string, unknown>), epoch: '0123456789abcdef' };
  await suite.transport.put(prefix + KEY_RECORD, new TextEncoder().encode(JSON.stringify(altered)));
  await expect(a.syncNow()).rejects.toMatchObject({ code: ErrorCode.SYNC_TAMPERED, details: { keyRecord: 'altered' } });
  // Gone: not made again by a device that had accepted one.
  await suite.transport.delete!(prefix + KEY_RECORD);
  await expect(a.syncNow()).rejects.toMatchObject({ code: ErrorCode.SYNC_TAMPERED, details: { keyRecord: 'vanished' } });
  expect(await suite.transport.get(prefix + KEY_RECORD)).toBeNull();
  // Put back: everything goes on.
  await suite.transport.put(prefix + KEY_RECORD, current);
  await converge(b2, a);
  expect(await texts(a)).toEqual(['before the rotation', 'written while the old record is back']);
}, 60_000);

test('a forked history (two readers shown different objects under one name) is detected from what each device says it read', async () => {
  clearFaults();
  const { device, base, prefix } = bucket();
  const a = await device({ direct: true });
  const b = await device({ direct: true });
  const c = await device();
  await a.add({ text: 'what A wrote' });
  await a.syncNow();
  // Another object under A's first name, sealed with the key (as a second writer of that name would): shown to C only.
  const writer = await deviceOf(a);
  const name = objectName(await base(), writer, 1);
  const aes = (await syncKey(suite.transport, prefix, { key })).aes;
  const other = { k: 'put', id: 'forked', h: formatHlc({ wall: START, count: 0 }, writer), f: { text: 'what C was shown', createdAt: START, priority: 1, pinned: false, tags: [] } };
  const forged = await seal(aes, name, writer, 1, { v: 2, entries: [other], seen: {} });
  proxy.serve = (k) => (k === name ? forged : null);
  await c.syncNow();
  expect(await texts(c)).toEqual(['what C was shown']);
  await b.syncNow();
  expect(await texts(b)).toEqual(['what A wrote']);
  // Neither can tell yet; each does once it reads what the other says it read there.
  await c.add({ text: 'from C' });
  await b.add({ text: 'from B' });
  await converge(c, b);
  for (const engine of [b, c]) {
    expect((await engine.stats()).sync?.notices).toEqual([expect.objectContaining({ code: ErrorCode.SYNC_TAMPERED, device: writer, object: name, message: expect.stringContaining('forked history') })]);
  }
  // A itself learns that someone read another object under its name.
  await a.syncNow();
  expect((await a.stats()).sync?.notices).toEqual([expect.objectContaining({ device: writer, object: name, message: expect.stringContaining('forked history') })]);
}, 60_000);

test('a copied database takes a new device id when it finds its names taken: no write is overwritten, a third device gets both sides', async () => {
  clearFaults();
  const { device } = bucket();
  const path = join(suite.dir, `clone${run}.db`);
  const a1 = await device({ store: await openNodeStore({ path }) });
  await a1.add({ text: 'before the copy' });
  await a1.syncNow();
  await a1.close();
  const copy = join(suite.dir, `clone${run}-copy.db`);
  copyFileSync(path, copy);
  for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) copyFileSync(path + suffix, copy + suffix);
  const a = await device({ store: await openNodeStore({ path }) });
  const b = await device({ store: await openNodeStore({ path: copy }) });
  const shared = await deviceOf(a);
  expect(await deviceOf(b)).toBe(shared);
  await a.add({ text: 'written on the original' });
  await b.add({ text: 'written on the copy' });
  await a.syncNow();
  const status = await b.syncNow();
  expect(status.device).not.toBe(shared);
  expect(status.notices).toEqual([expect.objectContaining({ device: shared, code: ErrorCode.SYNC_FAILED })]);
  const c = await device();
  await converge(a, b, c);
  const all = ['before the copy', 'written on the copy', 'written on the original'];
  for (const engine of [a, b, c]) expect(await texts(engine)).toEqual(all);
}, 60_000);

test('a clock years ahead cannot freeze the others: its entries are refused (SYNC_CLOCK, reported), the others\' clocks stay put', async () => {
  clearFaults();
  const { device } = bucket();
  const a = await device();
  const b = await device();
  const ahead = await device({ start: START + 5 * 365 * DAY });
  await ahead.add({ text: 'from the future' });
  await ahead.syncNow();
  await a.add({ text: 'from now' });
  await converge(a, b);
  const status = (await b.stats()).sync!;
  expect(status.notices).toEqual([expect.objectContaining({ device: await deviceOf(ahead), code: ErrorCode.SYNC_CLOCK })]);
  expect(await texts(b)).toEqual(['from now']);
  // B's edits still win over A's in clock order: its clock did not jump years ahead.
  const [x] = (await b.export()).map((r) => r.id);
  await b.update(x!, { text: 'edited on B' });
  a.clock.now += 1000;
  await a.update(x!, { text: 'edited on A later' });
  await converge(b, a);
  expect(await texts(b)).toEqual(['edited on A later']);
  // The far-ahead device still receives the others.
  await ahead.syncNow();
  expect((await texts(ahead)).sort()).toEqual(['edited on A later', 'from the future']);
}, 60_000);

test('the clock text form never overflows: past the counter\'s four digits it moves to the next millisecond', () => {
  const full = { wall: 1000, count: MAX_COUNT };
  expect(tick(full, 0)).toEqual({ wall: 1001, count: 0 });
  expect(receive({ wall: 5, count: 0 }, full, 0)).toEqual({ wall: 1001, count: 0 });
  const before = formatHlc(full, 'd');
  const after = formatHlc(tick(full, 0), 'd');
  expect(after > before).toBe(true);
  expect(parseHlc(after)).toEqual({ wall: 1001, count: 0, device: 'd' });
});

test('a damaged sync state fails loudly and is rebuilt: a queued add and removal still reach the others; so does a change whose queued part is damaged', async () => {
  clearFaults();
  const { device } = bucket();
  const path = join(suite.dir, `damaged${run}.db`);
  const a1 = await device({ store: await openNodeStore({ path }) });
  const [x, y] = await a1.add([{ text: 'kept' }, { text: 'removed offline' }]);
  await a1.syncNow();
  const b = await device();
  await b.syncNow();
  expect(await b.count()).toBe(2);
  await a1.add({ text: 'added offline' });
  await a1.remove(y!);
  await a1.close();
  const store = await openNodeStore({ path });
  await store.write({ meta: { [META.state]: '{"device": 17, "broken' } });
  const a = await device({ store });
  const status = (await a.stats()).sync!;
  expect(status.error?.code).toBe(ErrorCode.SYNC_FAILED);
  expect(status.notices).toEqual([expect.objectContaining({ code: ErrorCode.SYNC_FAILED, message: expect.stringContaining('damaged') })]);
  await converge(a, b);
  expect((await a.stats()).sync?.error).toBeNull();
  expect(await texts(b)).toEqual(['added offline', 'kept']);
  expect(byId(await b.export())).toEqual(byId(await a.export()));
  void x;
  // A damaged queued change: said, and everything held here is sent again, so the change still arrives.
  await a.add({ text: 'queued, then its part damaged' });
  await a.close();
  const reopened = await openNodeStore({ path });
  const { outSeq } = JSON.parse((await reopened.readMeta(META.state)) as string) as { outSeq: number };
  await reopened.write({ meta: { [META.out + outSeq]: 'not json' } });
  const a2 = await device({ store: reopened });
  await a2.syncNow();
  expect((await a2.stats()).sync?.notices.at(-1)).toMatchObject({ code: ErrorCode.SYNC_FAILED, message: expect.stringContaining(`queued change ${outSeq}`) });
  await b.syncNow();
  expect(await texts(b)).toEqual(['added offline', 'kept', 'queued, then its part damaged']);
}, 60_000);

test('reading reveals nothing and weak settings are refused: a search uploads nothing, device ids carry no time, PBKDF2 below the minimum, downloads over the cap', async () => {
  clearFaults();
  const { device, base } = bucket();
  const a = await device();
  await a.add([{ text: 'searched often' }, { text: 'searched together' }]);
  await a.syncNow();
  const listed = await suite.transport.list(await base());
  proxy.seen.length = 0;
  await a.search('searched');
  await a.flush();
  await a.syncNow();
  expect(proxy.seen.filter((r) => r.method === 'PUT')).toEqual([]);
  expect(await suite.transport.list(await base())).toEqual(listed);
  // Ids: 128 random bits, not a UUIDv7 (whose first 48 bits are the time).
  const ids = await Promise.all([device(), device()].map(async (d) => deviceOf(await d)));
  expect(ids[0]).toMatch(/^[0-9a-f]{32}$/);
  const stamp = Date.now().toString(16).padStart(12, '0').slice(0, 8);
  expect(ids.every((id) => id.startsWith(stamp))).toBe(false);
  await expect(createEngine({ sync: { transport: suite.s3.config, passphrase: 'a long enough passphrase', iterations: 1 } })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  await expect(a.rotateSyncKey({ passphrase: 'a long enough passphrase', iterations: 99_999 })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  // A download over the cap is set aside unread (SYNC_FAILED), not the whole round.
  const small = await device({ maxObjectBytes: 512 });
  const status = await small.syncNow();
  expect(status.problems).toEqual([expect.objectContaining({ device: await deviceOf(a), code: ErrorCode.SYNC_FAILED, message: expect.stringContaining('more than 512 bytes') })]);
}, 60_000);
