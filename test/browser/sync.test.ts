/**
 * Sync in real Chromium (issue 33): two persistent profiles, each a Memory on OPFS in its worker, syncing through a
 * local S3 server (s3rver, another origin) whose bucket CORS is set as docs/sync.md says; the worker signs its
 * requests with aws4fetch. Then a key rotation through a Memory (a removed device, a kept one, a follower tab that
 * is refused) and a new device that starts from a snapshot, each under a prefix of its own.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { s3Transport } from '../../src/sync/s3.js';
import { objectName } from '../../src/sync/sync.js';
import { bucketHolds, startS3, type LocalS3 } from '../unit/sync/s3-server.js';
import { launchPersistent, tempProfileDir } from './harness.js';
import { openLab } from './pages/memory-lab.js';

const profiles = [tempProfileDir(), tempProfileDir()];
const contexts: BrowserContext[] = [];
const pages: Page[] = [];
let s3: LocalS3;
const CANARY = 'quokkacanary5521';

beforeAll(async () => {
  s3 = await startS3();
  for (const profile of profiles) {
    const context = await launchPersistent(profile.dir, { webgpu: false });
    contexts.push(context);
    pages.push(await openLab(context));
  }
});

afterAll(async () => {
  for (const context of contexts) await context.close();
  for (const profile of profiles) profile.dispose();
  await s3?.close();
});

/** Opens (or reopens) the profile's Memory with sync, runs `body` with it in the page. */
function inPage<T>(page: Page, body: string, arg: unknown = null): Promise<T> {
  return page.evaluate(
    async ([config, body, arg]) => {
      const memory = (window.memories ??= {}).sync ??= await window.engram.createMemory({
        name: 'synced',
        storage: 'opfs',
        embedder: null,
        sync: { transport: config as never, passphrase: 'correct horse battery', iterations: 100_000, intervalMs: 0 },
      });
      const run = new Function('memory', 'arg', `return (async () => { ${body} })()`) as (memory: unknown, arg: unknown) => Promise<unknown>;
      return run(memory, arg);
    },
    [s3.config, body, arg] as const,
  ) as Promise<T>;
}

test('a memory added in one profile reaches the other through the bucket, searchable there; the bucket holds no canary', async () => {
  const id = await inPage<string>(pages[0]!, `const [id] = await memory.add({ text: 'the ${CANARY} lives in Rottnest', tags: ['${CANARY}tag'] }); await memory.syncNow(); return id;`);
  const found = await inPage<{ count: number; hit: string | null; sync: { pending: number; error: unknown } }>(
    pages[1]!,
    `await memory.syncNow(); const { hits } = await memory.search('${CANARY}'); const status = await memory.status(); return { count: status.count, hit: hits[0]?.id ?? null, sync: status.sync };`,
  );
  expect(found).toEqual({ count: 1, hit: id, sync: expect.objectContaining({ pending: 0, error: null }) });
  // An edit in the second profile goes back.
  await inPage(pages[1]!, `await memory.update(arg, { pinned: true }); await memory.syncNow();`, id);
  const back = await inPage<{ pinned: boolean }>(pages[0]!, `await memory.syncNow(); return memory.get(arg);`, id);
  expect(back.pinned).toBe(true);
  expect(bucketHolds(s3, CANARY)).toEqual([]);
});

interface Device {
  page: Page;
  /** The database's name: one device per (profile, name). */
  name: string;
  prefix: string;
  passphrase: string;
  snapshotEvery?: number;
  retainMs?: number;
}

/** Runs `body` with the device's Memory in its page, opened with sync on first use (or after `reopen`). */
function onDevice<T>(device: Device, body: string, arg: unknown = null): Promise<T> {
  const { page, ...options } = device;
  return page.evaluate(
    async ([config, options, body, arg]) => {
      const memory = (window.memories ??= {})[options.name] ??= await window.engram.createMemory({
        name: options.name,
        storage: 'opfs',
        embedder: null,
        sync: {
          transport: config as never,
          passphrase: options.passphrase,
          iterations: 100_000,
          intervalMs: 0,
          prefix: options.prefix,
          ...(options.snapshotEvery !== undefined ? { snapshotEvery: options.snapshotEvery } : {}),
          ...(options.retainMs !== undefined ? { retainMs: options.retainMs } : {}),
        },
      });
      const run = new Function('memory', 'arg', `return (async () => { ${body} })()`) as (memory: unknown, arg: unknown) => Promise<unknown>;
      return run(memory, arg);
    },
    [s3.config, options, body, arg] as const,
  ) as Promise<T>;
}

/** Closes the device's Memory: the next `onDevice` opens it again, with the device's options of then. */
async function reopen(device: Device): Promise<void> {
  await device.page.evaluate(async (name) => {
    await window.memories[name]?.close();
    delete window.memories[name];
  }, device.name);
}

/** The code of what `body` rejects with, or 'resolved'. */
const codeOf = (device: Device, body: string, arg: unknown = null) =>
  onDevice<string>(device, `try { ${body}; return 'resolved'; } catch (error) { return error.code ?? String(error); }`, arg);

const texts = (device: Device) => onDevice<string[]>(device, `return (await memory.export()).map((r) => r.text).sort();`);

test('memory.rotateSyncKey removes a device: refused in a follower tab, the removed device gets WRONG_KEY, the kept one converges under the new passphrase', async () => {
  const OLD = 'rotation passphrase, the first';
  const NEW = 'rotation passphrase, the second';
  const REMOVED = 'wallabycanary7730';
  const a: Device = { page: pages[0]!, name: 'rot-a', prefix: 'rotation/', passphrase: OLD };
  const removed: Device = { page: pages[1]!, name: 'rot-removed', prefix: 'rotation/', passphrase: OLD };
  const kept: Device = { page: pages[1]!, name: 'rot-kept', prefix: 'rotation/', passphrase: OLD };
  await onDevice(a, `await memory.add({ text: 'before the rotation: the shed key hangs by the door' }); await memory.syncNow();`);
  for (const device of [removed, kept]) await onDevice(device, `await memory.syncNow();`);
  expect(await texts(kept)).toEqual(['before the rotation: the shed key hangs by the door']);

  // A second tab of A's profile on the same database follows A's tab: the new passphrase is refused there, unsent.
  const follower: Device = { ...a, page: await openLab(contexts[0]!) };
  try {
    expect(await onDevice(follower, `return (await memory.status()).leader;`)).toBe(false);
    expect(await codeOf(follower, `await memory.rotateSyncKey({ passphrase: arg })`, NEW)).toBe('NOT_LEADER');
  } finally {
    await follower.page.close();
  }
  expect(await onDevice(a, `return (await memory.status()).leader;`)).toBe(true);

  const rotated = await onDevice<{ error: unknown; pending: number }>(a, `return memory.rotateSyncKey({ passphrase: arg, iterations: 100000 });`, NEW);
  expect(rotated).toMatchObject({ error: null, pending: 0 });
  await onDevice(a, `await memory.add({ text: 'after the rotation: the boat is in the north shed' }); await memory.syncNow();`);

  // The removed device: WRONG_KEY before it uploads anything; what it writes stays on it.
  await onDevice(removed, `await memory.add({ text: 'the ${REMOVED} was written after the removal' });`);
  expect(await codeOf(removed, `await memory.syncNow()`)).toBe('WRONG_KEY');
  expect(await onDevice(removed, `return (await memory.status()).sync;`)).toMatchObject({ pending: 1, error: { code: 'WRONG_KEY' } });

  // The kept device: WRONG_KEY too until it is given the new passphrase, then it converges both ways.
  expect(await codeOf(kept, `await memory.syncNow()`)).toBe('WRONG_KEY');
  await reopen(kept);
  kept.passphrase = NEW;
  await onDevice(kept, `await memory.add({ text: 'kept device: the oars are in the loft' }); await memory.syncNow();`);
  await onDevice(a, `await memory.syncNow();`);
  const all = ['after the rotation: the boat is in the north shed', 'before the rotation: the shed key hangs by the door', 'kept device: the oars are in the loft'];
  expect(await texts(kept)).toEqual(all);
  expect(await texts(a)).toEqual(all);
  expect(bucketHolds(s3, REMOVED)).toEqual([]);
  expect(bucketHolds(s3, 'oars')).toEqual([]);
});

test('a new device starts from a snapshot once the log it covers is compacted away, and finds the memories by search', async () => {
  const writer: Device = { page: pages[0]!, name: 'snap-writer', prefix: 'snapshots/', passphrase: 'snapshot passphrase', snapshotEvery: 1, retainMs: 0 };
  const ids = await onDevice<string[]>(writer, `return memory.add([{ text: 'the ferry to Kangaroo Island leaves at nine' }, { text: 'the lighthouse tour is on Sundays' }]);`);
  await onDevice(writer, `await memory.remove(arg); await memory.add({ text: 'pelicans are fed at five at the wharf' });`, ids[1]);
  // One round: uploads, writes a snapshot (one object is enough here) and, as retainMs is 0, deletes the log it covers.
  await onDevice(writer, `await memory.syncNow();`);
  const names = s3.files().map((file) => file.replaceAll('\\', '/'));
  // Objects live under the key epoch's folder (e/<epoch>/).
  expect(names.filter((file) => /\/snapshots\/e\/[0-9a-f]+\/snap\//.test(file) && /\/data\b/.test(file)).length).toBeGreaterThan(0);
  expect(names.filter((file) => /\/snapshots\/(e\/[0-9a-f]+\/)?log\//.test(file))).toEqual([]);

  const fresh: Device = { page: pages[1]!, name: 'snap-new', prefix: 'snapshots/', passphrase: 'snapshot passphrase' };
  const found = await onDevice<{ texts: string[]; hit: string | null; sync: { error: unknown } }>(
    fresh,
    `await memory.syncNow(); const { hits } = await memory.search('pelicans wharf'); return { texts: (await memory.export()).map((r) => r.text).sort(), hit: hits[0]?.text ?? null, sync: (await memory.status()).sync };`,
  );
  expect(found).toEqual({
    texts: ['pelicans are fed at five at the wharf', 'the ferry to Kangaroo Island leaves at nine'],
    hit: 'pelicans are fed at five at the wharf',
    sync: expect.objectContaining({ error: null, pending: 0 }),
  });
});

test('a junk object in the bucket is set aside and reported in the page, and the other profile still receives every change', async () => {
  const passphrase = 'junk passphrase, long enough';
  const a: Device = { page: pages[0]!, name: 'junk-a', prefix: 'junk/', passphrase };
  const b: Device = { page: pages[1]!, name: 'junk-b', prefix: 'junk/', passphrase };
  await onDevice(a, `await memory.add({ text: 'before the junk' }); await memory.syncNow();`);
  // 64 random bytes under a plausible log-object name of a device that never existed (the bucket's own epoch base).
  const transport = s3Transport(s3.config);
  const written = (await transport.list('junk/')).find((key) => key.includes('/log/'));
  expect(written).toBeDefined();
  const junk = objectName(written!.slice(0, written!.indexOf('log/')), 'deadbeef', 1);
  await transport.put(junk, crypto.getRandomValues(new Uint8Array(64)));
  await onDevice(a, `await memory.add({ text: 'after the junk' }); await memory.syncNow();`);
  const sync = await onDevice<{ error: unknown; problems: { device: string; object: string; code: string }[] }>(b, `await memory.syncNow(); return (await memory.status()).sync;`);
  expect(await texts(b)).toEqual(['after the junk', 'before the junk']);
  expect(sync.problems).toEqual([expect.objectContaining({ device: 'deadbeef', object: junk, code: 'SYNC_TAMPERED' })]);
  // The writer goes on too, and reports the same object.
  await onDevice(b, `await memory.add({ text: 'from the second profile' }); await memory.syncNow();`);
  expect(await onDevice<string[]>(a, `await memory.syncNow(); return (await memory.export()).map((r) => r.text).sort();`)).toEqual(['after the junk', 'before the junk', 'from the second profile']);
});
