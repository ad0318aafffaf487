/**
 * `signal` across the worker in real Chromium: the page's Memory keeps the AbortSignal, its abort crosses to the
 * worker (and from a follower tab on to the leader), which stops the add between embedding batches of the built-in
 * model. The worker, and the database after a reopen, hold nothing of the aborted call.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from './harness.js';
import { openLab } from './pages/memory-lab.js';

let browser: Browser;
let context: BrowserContext;
beforeAll(async () => {
  browser = await launchBrowser({ webgpu: false });
  context = await browser.newContext();
});
afterAll(async () => {
  await browser?.close();
});

/** Opens `name` in the page as `window.memories[key]` with the built-in model, and waits for the model. */
async function open(page: Page, key: string, name: string): Promise<void> {
  await page.evaluate(
    async ([key, name]) => {
      window.memories[key] = await window.engram.createMemory({ name, embedder: {} });
      await window.memories[key]!.ready;
    },
    [key, name] as const,
  );
}

/** Adds `count` memories through `memories[key]`, aborting on the first progress event; what the page saw. */
function addAndAbort(page: Page, key: string, count: number) {
  return page.evaluate(
    async ([key, count]) => {
      const memory = window.memories[key]!;
      const controller = new AbortController();
      const progress: number[] = [];
      const items = Array.from({ length: count }, (_, i) => ({ text: `harbour note ${i} about the tide, the boats and the lighthouse ${i % 13}` }));
      const error = await memory
        .add(items, {
          signal: controller.signal,
          onProgress: ({ done }) => {
            progress.push(done);
            controller.abort();
          },
        })
        .then(
          () => null,
          (e: { code?: string; details?: Record<string, unknown> }) => ({ code: e.code, method: e.details?.method }),
        );
      return { error, progress, count: await memory.count(), hits: (await memory.search('harbour tide lighthouse', { k: 5 })).hits.length };
    },
    [key, count] as const,
  );
}

const TOTAL = 128 * 60;

test("an add aborted in the page stops in the worker: nothing is stored, before or after a reopen", async () => {
  const page = await openLab(context);
  await open(page, 'a', 'abort-page');
  const seen = await addAndAbort(page, 'a', TOTAL);
  expect(seen.error).toEqual({ code: 'ABORTED', method: 'add' });
  expect(seen.progress.length).toBeGreaterThan(0);
  expect(Math.max(...seen.progress)).toBeLessThan(TOTAL); // never reported its total: it stopped before the commit
  expect(seen).toMatchObject({ count: 0, hits: 0 });

  // The database itself: closed and opened again, it holds nothing; a signal that never aborts changes nothing.
  const after = await page.evaluate(async (total) => {
    await window.memories.a!.close();
    const memory = await window.engram.createMemory({ name: 'abort-page', embedder: null });
    const reopened = await memory.count();
    const ids = await memory.add(Array.from({ length: 5 }, (_, i) => ({ text: `kept ${i}` })), { signal: new AbortController().signal });
    const aborted = await memory.import([{ text: 'never stored' }], { signal: AbortSignal.abort() }).catch((e: { code?: string }) => e.code);
    const count = await memory.count();
    await memory.close();
    return { reopened, added: ids.length, aborted, count, total };
  }, TOTAL);
  expect(after).toEqual({ reopened: 0, added: 5, aborted: 'ABORTED', count: 5, total: TOTAL });
  await page.close();
});

test("a follower tab's abort reaches the leader tab's worker: nothing is stored in either tab", async () => {
  const leader = await openLab(context);
  await open(leader, 'l', 'abort-tabs');
  const follower = await openLab(context);
  await open(follower, 'f', 'abort-tabs');
  expect(await follower.evaluate(async () => (await window.memories.f!.status()).leader)).toBe(false);
  const seen = await addAndAbort(follower, 'f', TOTAL);
  expect(seen.error).toEqual({ code: 'ABORTED', method: 'add' });
  expect(Math.max(...seen.progress)).toBeLessThan(TOTAL);
  expect(seen).toMatchObject({ count: 0, hits: 0 });
  expect(await leader.evaluate(async () => window.memories.l!.count())).toBe(0);
  await follower.evaluate(async () => window.memories.f!.close());
  await leader.evaluate(async () => window.memories.l!.close());
  await Promise.all([follower.close(), leader.close()]);
});

test('remember and consolidate aborted in the page: the worker stops waiting for the page\'s model and stores nothing', async () => {
  const page = await openLab(context);
  const outcome = await page.evaluate(async () => {
    const { createMemory, functionModel } = window.engram;
    let asked = 0;
    // The page's model never answers: only the abort ends the calls (its own timeout is 30 s).
    const llm = functionModel(() => {
      asked++;
      return new Promise<string>(() => {});
    });
    const memory = await createMemory({ name: 'abort-formation', embedder: {}, llm });
    await memory.ready;
    const code = (e: { code?: string }) => e.code;
    const aborted = <T>(start: (signal: AbortSignal) => Promise<T>) => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      return start(controller.signal).then(() => 'resolved', code);
    };
    const remembered = await aborted((signal) => memory.remember('I moved to Lisbon last spring', { signal }));
    await memory.import([
      { text: 'the user likes green tea in the morning', createdAt: Date.now() - 10_000 + 1 },
      { text: 'the user likes green tea in the morning', createdAt: Date.now() - 10_000 + 2 },
      { text: 'grandma garden tulips in spring', createdAt: Date.now() - 10_000 + 3 },
      { text: 'grandma garden roses in summer', createdAt: Date.now() - 10_000 + 4 },
    ]);
    // The fold of the two teas is planned, then the summary waits on the model: the abort leaves both unwritten.
    const consolidated = await aborted((signal) => memory.consolidate({ clusterSimilarity: 0, minCluster: 2, signal }));
    const result = { remembered, consolidated, asked, count: await memory.count(), superseded: (await memory.export()).filter((r) => r.supersededBy).length };
    // Without a signal, the fold is written (the summary is not asked for).
    const folded = (await memory.consolidate({ summarize: false })).folded.length;
    await memory.close();
    return { ...result, folded };
  });
  expect(outcome).toEqual({ remembered: 'ABORTED', consolidated: 'ABORTED', asked: 2, count: 4, superseded: 0, folded: 1 });
  await page.close();
});

test('createMemory rejects with ABORTED for an aborted signal, and when aborted during the open', async () => {
  const page = await openLab(context);
  const codes = await page.evaluate(async () => {
    const { createMemory } = window.engram;
    const code = (e: { code?: string }) => e.code;
    const before = await createMemory({ name: 'abort-open', signal: AbortSignal.abort() }).then(() => 'opened', code);
    const controller = new AbortController();
    const opening = createMemory({ name: 'abort-open', embedder: null, signal: controller.signal });
    controller.abort();
    const during = await opening.then(() => 'opened', code);
    // The database is free again: a Memory opens it, and it holds nothing.
    const memory = await createMemory({ name: 'abort-open', embedder: null });
    const count = await memory.count();
    await memory.close();
    return { before, during, count };
  });
  expect(codes).toEqual({ before: 'ABORTED', during: 'ABORTED', count: 0 });
  await page.close();
});
