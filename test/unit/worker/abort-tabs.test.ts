/**
 * `signal` across tabs, in Node (tabs-harness.ts): a follower's abort, and its timeout, reach the leader's engine,
 * which stops the add before its next embedding batch and writes nothing. The leader and the follower are real
 * `joinGroup` members hosting the real engine (worker/host.ts) on wa-sqlite's real build; the embedder is the
 * built-in model, each batch delayed so an abort lands between batches.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { installLocks } from './tabs-harness.js';

vi.mock('@journeyapps/wa-sqlite/dist/wa-sqlite.mjs', async (original) => (await import('./tabs-harness.js')).waSqliteWithBinary(original));
vi.mock('@journeyapps/wa-sqlite/src/examples/OPFSCoopSyncVFS.js', async () => (await import('./tabs-harness.js')).sharedMemoryVfs());

import { createEmbedder, type LocalEmbedder } from '../../../src/embedder/index.js';
import { ErrorCode } from '../../../src/errors.js';
import type { Progress } from '../../../src/types.js';
import { openHost, type Host } from '../../../worker/host.js';
import { LockingHost } from '../../../worker/idle-lock.js';
import { joinGroup } from '../../../worker/leader.js';

installLocks();

let databases = 0;
const open: Host[] = [];
afterEach(async () => {
  for (const host of open.splice(0).reverse()) await host.close().catch(() => undefined);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The engine's default `embedBatchSize`: the most texts in one embedding batch. */
const BATCH = 128;
const notes = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `n${i}`, text: `harbour note ${i} about the tide and boats ${i % 11}` }));

/** The built-in model, each batch `ms` slower: a real model whose batches an abort can land between. */
async function slowModel(ms: number): Promise<{ embedder: LocalEmbedder; batches: () => number }> {
  const real = await createEmbedder();
  let batches = 0;
  const embedder = Object.assign(Object.create(real) as LocalEmbedder, {
    async embed(texts: string[], role?: 'query' | 'document') {
      batches++;
      await sleep(ms);
      return real.embed(texts, role);
    },
  });
  return { embedder, batches: () => batches };
}

async function tabs(batchMs: number, followerTimeouts = { callMs: 4000, writeMs: 8000, openMs: 8000 }) {
  const name = `abort-${++databases}`;
  const lock = `engram:opfs:${name}`;
  const model = await slowModel(batchMs);
  const start = () => openHost({ name, storage: 'opfs', embedder: {}, loadEmbedder: async () => model.embedder });
  const leader = await joinGroup(lock, start, { timeouts: { callMs: 4000, writeMs: 8000, openMs: 8000 }, debug: false });
  open.push(leader);
  // The model is attached after the first call: wait until every memory (none) has a vector for it.
  await leader.call('count', []);
  for (let i = 0; i < 100 && (await leader.call('status', []) as { ready: unknown }).ready !== 'ready'; i++) await sleep(20);
  const follower = await joinGroup(lock, () => Promise.reject(new Error('the follower never leads here')), { timeouts: followerTimeouts, debug: false });
  open.push(follower);
  expect((await follower.call('status', []) as { leader: boolean }).leader).toBe(false);
  return { leader, follower, batches: model.batches };
}

test("a follower's abort reaches the leader: the add stops before its next batch and nothing is stored", async () => {
  const { leader, follower, batches } = await tabs(80);
  const controller = new AbortController();
  const seen: Progress[] = [];
  const adding = follower.call('add', [notes(4 * BATCH)], (progress) => {
    seen.push(progress);
    controller.abort(); // after the first batch: the abort crosses to the leader while the second one embeds
  }, false, controller.signal);
  await expect(adding).rejects.toMatchObject({ code: ErrorCode.ABORTED, details: { method: 'add' } });
  // The second batch, already with the model when the abort arrived, ran to its end; no third one started. (Batches
  // start at 8 texts and at most double: BatchSizer.)
  expect(seen).toHaveLength(2);
  expect(seen[0]).toEqual({ done: 8, total: 4 * BATCH });
  expect(seen[1]!.done).toBeGreaterThan(8);
  expect(seen[1]!.done).toBeLessThanOrEqual(8 + 16);
  expect(batches()).toBe(2);
  expect(await leader.call('count', [])).toBe(0);
  expect(await follower.call('count', [])).toBe(0);
  // Not aborted, the same add from the follower is stored.
  expect(await follower.call('add', [notes(BATCH + 1)], undefined, false, new AbortController().signal)).toHaveLength(BATCH + 1);
  expect(await leader.call('count', [])).toBe(BATCH + 1);
});

test('a signal aborted before the call is refused in the follower: nothing reaches the leader', async () => {
  const { leader, follower, batches } = await tabs(1);
  const before = batches();
  await expect(follower.call('add', [notes(3)], undefined, false, AbortSignal.abort())).rejects.toMatchObject({ code: ErrorCode.ABORTED });
  await sleep(100);
  expect(batches()).toBe(before);
  expect(await leader.call('count', [])).toBe(0);
});

test("a follower's timeout aborts the add in the leader, which then stores nothing", async () => {
  // Each batch outlasts the follower's write timeout, so the call times out during the first one.
  const { leader, follower, batches } = await tabs(400, { callMs: 4000, writeMs: 250, openMs: 8000 });
  await expect(follower.call('add', [notes(3 * BATCH)])).rejects.toMatchObject({ code: ErrorCode.TIMEOUT });
  // Without the abort the leader would go on through three batches (1.2 s) and store them all.
  await sleep(1500);
  expect(batches()).toBe(1);
  expect(await leader.call('count', [])).toBe(0);
});

test("an encrypted database's idle-locking host passes the signal on: the add stops and nothing is stored", async () => {
  const model = await slowModel(60);
  const host = await LockingHost.open(() => openHost({ name: `abort-lock-${++databases}`, storage: 'memory', embedder: {}, loadEmbedder: async () => model.embedder }), 60_000, 'memory', false);
  open.push(host);
  await host.call('count', []);
  for (let i = 0; i < 100 && (await host.call('status', []) as { ready: unknown }).ready !== 'ready'; i++) await sleep(20);
  const controller = new AbortController();
  const adding = host.call('add', [notes(3 * BATCH)], () => controller.abort(), false, controller.signal);
  await expect(adding).rejects.toMatchObject({ code: ErrorCode.ABORTED });
  // Aborted in the first batch's progress report, in this thread: the second batch never started.
  expect(model.batches()).toBe(1);
  expect(await host.call('count', [])).toBe(0);
});
