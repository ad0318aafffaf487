/**
 * EngineLease: two leases on one file take turns. Two leases in one process stand for two processes here: a second
 * open of an open file is STORE_LOCKED in the same process too (file-store.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { readSnapshot } from '../../../src/engine/lexical-persistence.js';
import { isEngramError } from '../../../src/errors.js';
import { EngineLease } from '../../../src/node/engine-lease.js';
import { createEngine, openNodeStore } from '../../../src/node.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-lease-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lexical = Promise.resolve(null);

it('a busy lease releases the file after maxHoldMs, so the other gets its turn before the busy one is done', async () => {
  const path = join(dir, 'busy.sqlite3');
  const busy = new EngineLease({ path, embedder: lexical, maxHoldMs: 300 });
  const other = new EngineLease({ path, embedder: lexical });
  let busyDone = false;
  const busyLoop = (async () => {
    const started = Date.now();
    for (let i = 0; Date.now() - started < 2000; i++) await busy.use((engine) => engine.add({ text: `busy note ${i}` }), { writes: true });
    busyDone = true;
  })();
  await new Promise((r) => setTimeout(r, 100));
  // Not idle once in two seconds: only the hold limit lets the other lease in.
  await other.use((engine) => engine.add({ text: 'the other lease wrote this' }), { writes: true });
  expect(busyDone).toBe(false);
  await busyLoop;
  await Promise.all([busy.end(), other.end()]);
  const store = await openNodeStore({ path });
  const engine = await createEngine({ store, indexSnapshot: await readSnapshot(store) });
  expect((await engine.search('other lease', { k: 1 })).hits[0]?.text).toBe('the other lease wrote this');
  // The last release saved the lexical index: the next open restores it rather than re-indexing.
  expect(engine.lexicalSource).toBe('snapshot');
  await engine.close();
});

it('an idle lease releases the file after idleMs; a call then reopens it', async () => {
  const path = join(dir, 'idle.sqlite3');
  const lease = new EngineLease({ path, embedder: lexical, idleMs: 100 });
  const [id] = await lease.use((engine) => engine.add({ text: 'kept across a release' }), { writes: true });
  expect(isEngramError(await openNodeStore({ path }).catch((e: unknown) => e), 'STORE_LOCKED')).toBe(true);
  await new Promise((r) => setTimeout(r, 400));
  // Released: another opener gets the file, and the lease waits for it to close again.
  const store = await openNodeStore({ path });
  const waiting = lease.use((engine) => engine.get(id!));
  await new Promise((r) => setTimeout(r, 200));
  await store.close();
  expect((await waiting)?.text).toBe('kept across a release');
  await lease.end();
  await expect(lease.use((engine) => engine.count())).rejects.toMatchObject({ code: 'CLOSED' });
});
