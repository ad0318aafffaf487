/**
 * Removing a device by rotating the sync key (docs/sync.md, Keys): real engines through a real local S3 server
 * (s3rver over HTTP), B's database in a file so it can be reopened with the new passphrase.
 */
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { createEngine, type Engine } from '../../../src/engine/engine.js';
import { ErrorCode } from '../../../src/errors.js';
import { openNodeStore } from '../../../src/store/node/file-store.js';
import type { Store } from '../../../src/store/store.js';
import { epochBase, KEY_RECORD, newKeyRecord, open, seal, syncKey, type SyncSecret } from '../../../src/sync/envelope.js';
import { formatHlc } from '../../../src/sync/hlc.js';
import { objectName } from '../../../src/sync/sync.js';
import type { SyncTransport } from '../../../src/sync/transport.js';
import type { MemoryRecord } from '../../../src/types.js';
import { testEmbedder } from '../helpers/embedder.js';
import { bucketHolds, s3Suite } from './s3-server.js';

const suite = s3Suite('rotate');
const { engines } = suite;
let run = 0;

const OLD = 'the old sync passphrase';
const NEW = 'the new sync passphrase';
const ITERATIONS = 100_000;

async function device(prefix: string, secret: SyncSecret, store?: Store): Promise<Engine> {
  const engine = await createEngine({
    embedder: testEmbedder(),
    ...(store ? { store } : {}),
    sync: { transport: suite.s3.config, prefix, intervalMs: 0, ...('passphrase' in secret ? { passphrase: secret.passphrase, iterations: ITERATIONS } : { key: secret.key }) },
  });
  engines.push(engine);
  return engine;
}

const byId = (records: MemoryRecord[]) => records.map(({ sessions: _, ...rest }) => rest).sort((a, b) => (a.id < b.id ? -1 : 1));
async function converge(...devices: Engine[]) {
  for (const d of devices) await d.syncNow();
  for (const d of devices) await d.syncNow();
}

/** A transport holding only `record` as the key record: derives the key a device holding `secret` would use on it. */
async function keyFor(prefix: string, record: Uint8Array, secret: SyncSecret): Promise<CryptoKey> {
  const bucket = new Map([[prefix + KEY_RECORD, record]]);
  const local: SyncTransport = { list: async () => [], get: async (k) => bucket.get(k) ?? null, put: async () => undefined };
  return (await syncKey(local, prefix, secret)).aes;
}

/** A version 1 key record, as builds before key epochs made (no epoch: objects straight under the prefix). */
async function seedVersion1(prefix: string, passphrase: string): Promise<void> {
  const { epoch: _, ...rest } = JSON.parse((await newKeyRecord({ passphrase, iterations: ITERATIONS })).record) as Record<string, unknown>;
  await suite.transport.put(prefix + KEY_RECORD, new TextEncoder().encode(JSON.stringify({ ...rest, version: 1 })));
}

const SEALED = /(?:^|\/)(log|snap)\/([0-9a-z]+)\/(\d{12})(?:\/(head|data))?$/;

test('A rotates: B converges with the new passphrase, C with the old one gets WRONG_KEY and nothing it writes arrives', async () => {
  const prefix = `r${++run}/`;
  const bPath = join(suite.dir, `b${run}.db`);
  // A bucket set up by an earlier build: its objects straight under the prefix, until the rotation.
  await seedVersion1(prefix, OLD);
  const a = await device(prefix, { passphrase: OLD });
  let b = await device(prefix, { passphrase: OLD }, await openNodeStore({ path: bPath }));
  const c = await device(prefix, { passphrase: OLD });
  const [shared] = await a.add({ text: 'shared before the rotation' });
  await c.add({ text: 'written by C while it was trusted' });
  await converge(a, b, c);
  // B writes just before the rotation: A's rotation round pulls it first.
  await b.add({ text: 'B wrote this right before the rotation' });
  await b.syncNow();
  const oldRecord = (await suite.transport.get(prefix + KEY_RECORD))!;
  const oldKey = await keyFor(prefix, oldRecord, { passphrase: OLD });
  expect(JSON.parse(new TextDecoder().decode(oldRecord))).toMatchObject({ version: 1 });

  await a.rotateSyncKey({ passphrase: NEW, iterations: ITERATIONS });
  const record = JSON.parse(new TextDecoder().decode((await suite.transport.get(prefix + KEY_RECORD))!));
  expect(record).toMatchObject({ version: 3, generation: 1, epoch: expect.stringMatching(/^[0-9a-f]{16}$/) });
  expect(record.salt).not.toBe(JSON.parse(new TextDecoder().decode(oldRecord)).salt);
  expect(await a.count()).toBe(3);

  // Byte scan: every object left in the bucket, opened with the old key under its own name, fails.
  const left = (await suite.transport.list(prefix)).filter((k) => k !== prefix + KEY_RECORD);
  expect(left.length).toBeGreaterThan(0);
  expect(left.filter((k) => k.startsWith(`${prefix}log/`) || k.startsWith(`${prefix}snap/`))).toEqual([]);
  for (const name of left) {
    const match = SEALED.exec(name)!;
    expect(match, name).not.toBeNull();
    await expect(open(oldKey, name, match[2]!, Number(match[3]), (await suite.transport.get(name))!)).rejects.toMatchObject({ code: ErrorCode.SYNC_TAMPERED });
  }

  // C, removed: WRONG_KEY at once, nothing applied, and its later writes are not uploaded.
  await a.add({ text: 'after the rotation, only for A and B' });
  const before = (await suite.transport.list(prefix)).sort();
  await expect(c.syncNow()).rejects.toMatchObject({ code: ErrorCode.WRONG_KEY });
  expect(await c.count()).toBe(2);
  await c.add({ text: 'removedcanary written by C after the rotation' });
  await expect(c.syncNow()).rejects.toMatchObject({ code: ErrorCode.WRONG_KEY });
  expect((await c.stats()).sync).toMatchObject({ pending: 1, error: { code: ErrorCode.WRONG_KEY } });
  expect((await suite.transport.list(prefix)).sort()).toEqual(before);
  expect(bucketHolds(suite.s3, 'removedcanary')).toEqual([]);

  // B with the old passphrase is refused too; reopened with the new one it converges, both ways.
  await expect(b.syncNow()).rejects.toMatchObject({ code: ErrorCode.WRONG_KEY });
  await b.add({ text: 'B wrote this offline, during the rotation' });
  await b.close();
  b = await device(prefix, { passphrase: NEW }, await openNodeStore({ path: bPath }));
  await b.update(shared!, { tags: ['after'] });
  await converge(a, b);
  expect(await a.count()).toBe(5);
  expect(byId(await a.export())).toEqual(byId(await b.export()));
  expect((await a.get(shared!))!.tags).toEqual(['after']);
  expect((await a.export()).filter((r) => r.text.includes('removedcanary'))).toEqual([]);
  // A fresh device with the new passphrase starts from the rotation's snapshot and the new epoch's log.
  const d = await device(prefix, { passphrase: NEW });
  await d.syncNow();
  expect(byId(await d.export())).toEqual(byId(await a.export()));
});

test('objects a removed device seals under the old key are never applied: ignored in the old epoch, refused in the new one', async () => {
  const prefix = `r${++run}/`;
  const a = await device(prefix, { passphrase: OLD });
  const b = await device(prefix, { passphrase: OLD });
  await a.add({ text: 'before' });
  await converge(a, b);
  const oldRecord = (await suite.transport.get(prefix + KEY_RECORD))!;
  const oldKey = await keyFor(prefix, oldRecord, { passphrase: OLD });
  const oldBase = epochBase(prefix, (JSON.parse(new TextDecoder().decode(oldRecord)) as { epoch: string }).epoch);
  await a.rotateSyncKey({ passphrase: NEW, iterations: ITERATIONS });
  const { epoch } = JSON.parse(new TextDecoder().decode((await suite.transport.get(prefix + KEY_RECORD))!)) as { epoch: string };
  // What an old build of C (which never rereads the key record) would upload after the rotation.
  const entry = { k: 'put', id: 'stale', h: formatHlc({ wall: Date.now() + 1000, count: 0 }, 'c0ffee'), f: { text: 'stale write', createdAt: 1, priority: 1, pinned: false, tags: [] } };
  const stale = objectName(oldBase, 'c0ffee', 1);
  await suite.transport.put(stale, await seal(oldKey, stale, 'c0ffee', 1, { v: 1, entries: [entry] }));
  const b2 = await device(prefix, { passphrase: NEW });
  await converge(a, b2);
  expect(await a.get('stale')).toBeNull();
  expect(await b2.get('stale')).toBeNull();
  // The same object under the new epoch's name: set aside as tampered, nothing of it applied.
  const inEpoch = objectName(`${prefix}e/${epoch}/`, 'c0ffee', 1);
  await suite.transport.put(inEpoch, await seal(oldKey, inEpoch, 'c0ffee', 1, { v: 1, entries: [entry] }));
  expect((await a.syncNow()).problems).toEqual([expect.objectContaining({ device: 'c0ffee', object: inEpoch, code: ErrorCode.SYNC_TAMPERED })]);
  expect(await a.get('stale')).toBeNull();
  await suite.transport.delete!(inEpoch);
  expect((await a.syncNow()).problems).toEqual([]);
  // Control: the same entries sealed under the new key are applied, so the refusals above are the old key's.
  const newKey = await keyFor(prefix, (await suite.transport.get(prefix + KEY_RECORD))!, { passphrase: NEW });
  await suite.transport.put(inEpoch, await seal(newKey, inEpoch, 'c0ffee', 1, { v: 1, entries: [entry] }));
  await a.syncNow();
  expect((await a.get('stale'))?.text).toBe('stale write');
});

test('rotation to a raw key and again to a passphrase; a weak or malformed next secret changes nothing', async () => {
  const prefix = `r${++run}/`;
  const a = await device(prefix, { passphrase: OLD });
  await a.add({ text: 'kept through two rotations' });
  await a.syncNow();
  const before = (await suite.transport.get(prefix + KEY_RECORD))!;
  await expect(a.rotateSyncKey({ passphrase: 'short' })).rejects.toMatchObject({ code: ErrorCode.WEAK_PASSPHRASE });
  await expect(a.rotateSyncKey({ key: new Uint8Array(16) })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  await expect(a.rotateSyncKey({ passphrase: NEW, key: new Uint8Array(32) } as never)).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  await expect(a.rotateSyncKey(null as never)).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  expect(await suite.transport.get(prefix + KEY_RECORD)).toEqual(before);
  const key = crypto.getRandomValues(new Uint8Array(32));
  await a.rotateSyncKey({ key });
  const first = JSON.parse(new TextDecoder().decode((await suite.transport.get(prefix + KEY_RECORD))!)) as { epoch: string; kdf: string };
  expect(first.kdf).toBe('HKDF-SHA-256');
  const withKey = await device(prefix, { key });
  await withKey.syncNow();
  expect(await withKey.count()).toBe(1);
  await a.rotateSyncKey({ passphrase: NEW, iterations: ITERATIONS });
  // The previous epoch's objects are gone: a rotation deletes what it leaves behind.
  expect(await suite.transport.list(`${prefix}e/${first.epoch}/`)).toEqual([]);
  await expect(withKey.syncNow()).rejects.toMatchObject({ code: ErrorCode.WRONG_KEY });
  const withNew = await device(prefix, { passphrase: NEW });
  await withNew.syncNow();
  expect(byId(await withNew.export())).toEqual(byId(await a.export()));
});

test('rotateSyncKey without sync options is INVALID_INPUT', async () => {
  const engine = await createEngine({ embedder: null });
  engines.push(engine);
  await expect(engine.rotateSyncKey({ passphrase: NEW })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
});
