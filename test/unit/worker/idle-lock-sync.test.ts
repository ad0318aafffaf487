/**
 * The idle lock (worker/idle-lock.ts) never waits on sync: with the storage hanging every request and a background
 * round in flight, the lock still closes the host at once (sync's close aborts the round), and calls answer LOCKED,
 * not a hang.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { MemoryStatus } from '../../../src/contract/protocol.js';
import { ErrorCode } from '../../../src/errors.js';
import { openHost } from '../../../worker/host.js';
import { LockingHost } from '../../../worker/idle-lock.js';
import { startFaultProxy, type FaultProxy } from '../sync/fault-proxy.js';
import { startS3, type LocalS3 } from '../sync/s3-server.js';

let s3: LocalS3;
let proxy: FaultProxy;
beforeAll(async () => {
  s3 = await startS3();
  proxy = await startFaultProxy(s3.config);
});
afterAll(async () => {
  await proxy.close();
  await s3.close();
});

test('a hung storage does not keep the idle lock from closing the host', async () => {
  const key = crypto.getRandomValues(new Uint8Array(32));
  let hung = 0;
  proxy.fault = () => (hung++, { kind: 'hang' });
  const open = () =>
    openHost({
      name: 'idle-lock-sync',
      storage: 'memory',
      embedder: null,
      loadEmbedder: () => Promise.reject(new Error('no model here')),
      // Background rounds every 50 ms, with timeouts far beyond this test: only close() can end a round.
      sync: { transport: proxy.config, key, prefix: 'idle/', intervalMs: 50, requestTimeoutMs: 600_000, roundTimeoutMs: 600_000 },
    });
  const host = await LockingHost.open(open, 1_000, 'memory', false);
  let locked = false;
  host.onLock(() => (locked = true));
  await host.call('add', [{ text: 'written before the storage hung' }]);
  // Calls keep the host awake until a background round hangs on the storage (the sync code loads first, which on a
  // loaded machine can outlast the idle time); from the last call the idle lock has to close it with the round in flight.
  for (const until = performance.now() + 10_000; hung === 0 && performance.now() < until; ) {
    await host.call('count', []);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const started = performance.now();
  while (!locked && performance.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(hung).toBeGreaterThan(0);
  expect(locked).toBe(true);
  expect(host.locked).toBe(true);
  await expect(host.call('count', [])).rejects.toMatchObject({ code: ErrorCode.LOCKED });
  expect(((await host.call('status', [])) as MemoryStatus).locked).toBe(true);
  await host.close();
}, 30_000);
