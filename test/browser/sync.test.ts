/**
 * Sync in real Chromium (issue 33): two persistent profiles, each a Memory on OPFS in its worker, syncing through a
 * local S3 server (s3rver, another origin) whose bucket CORS is set as docs/sync.md says; the worker signs its
 * requests with aws4fetch.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
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
