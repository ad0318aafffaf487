/**
 * A Memory's side of sync in Node: the worker's host (worker/host.ts, storage 'memory') opens the engine with the
 * options a page sends, and `syncNow` and `status().sync` answer through the method table.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createMemory } from '../../../src/client/create-memory.js';
import type { MemoryStatus } from '../../../src/contract/protocol.js';
import { ErrorCode } from '../../../src/errors.js';
import { s3Transport } from '../../../src/sync/s3.js';
import { openHost } from '../../../worker/host.js';
import { closeFakeWorkers, fakeWorker } from '../helpers/fake-worker.js';
import { startS3, type LocalS3 } from './s3-server.js';

let s3: LocalS3;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  closeFakeWorkers();
  await s3.close();
});

const key = crypto.getRandomValues(new Uint8Array(32));
const host = (name: string) =>
  openHost({ name, storage: 'memory', embedder: null, loadEmbedder: () => Promise.reject(new Error('no model here')), sync: { transport: s3.config, key, prefix: 'memory/', intervalMs: 0 } });

test('two Memory hosts sync through the bucket: syncNow through the method table, status().sync', async () => {
  const a = await host('a');
  const b = await host('b');
  await a.call('add', [{ text: 'added through the worker on device A' }]);
  expect(((await a.call('status', [])) as MemoryStatus).sync).toMatchObject({ pending: 1, lastSyncAt: null, error: null });
  expect(await a.call('syncNow', [])).toMatchObject({ pending: 0, error: null });
  await b.call('syncNow', []);
  expect(await b.call('count', [])).toBe(1);
  const status = (await b.call('status', [])) as MemoryStatus;
  expect(status.sync?.lastSyncAt).toEqual(expect.any(Number));
  expect(status.sync?.device).not.toBe(((await a.call('status', [])) as MemoryStatus).sync?.device);
  await a.close();
  await b.close();
});

test('createMemory refuses a transport that cannot cross to the worker', async () => {
  const { worker, received } = fakeWorker();
  await expect(createMemory({ worker, storage: 'memory', embedder: null, sync: { transport: s3Transport(s3.config) as never, key } })).rejects.toMatchObject({
    code: ErrorCode.INVALID_INPUT,
  });
  expect(received).toEqual([]);
});
