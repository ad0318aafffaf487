/**
 * createMemory end to end in real Chromium with a persistent profile: the page imports the library as users do,
 * the worker runs wa-sqlite on real OPFS, and the data survives reloads and browser restarts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchPersistent, recordRequests, tempProfileDir } from './harness.js';
import { lines, openLab } from './pages/memory-lab.js';

const profile = tempProfileDir();
let context: BrowserContext;
let requests: ReturnType<typeof recordRequests>;

// The built-in model when it is there; lexical-only otherwise (set ENGRAM_TEST_EMBEDDER=none to force).
const EMBEDDER = process.env.ENGRAM_TEST_EMBEDDER === 'none' ? null : {};

beforeAll(async () => {
  context = await launchPersistent(profile.dir);
  requests = recordRequests(context);
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

async function open(page: Page, key: string, options: Record<string, unknown> = {}): Promise<void> {
  await page.evaluate(
    async ([key, options]) => {
      window.memories[key] = await window.engram.createMemory(options);
    },
    [key, { embedder: EMBEDDER, ...options }] as const,
  );
}

describe('persistence', () => {
  test('1,000 memories survive a reload and a browser restart', async () => {
    let page = await openLab(context);
    await open(page, 'a', { name: 'persist' });
    const ids = await page.evaluate(async (items) => window.memories.a!.add(items), lines('P', 1000));
    expect(ids).toHaveLength(1000);

    await page.reload();
    await page.waitForFunction(() => window.engram !== undefined);
    await open(page, 'a', { name: 'persist' });
    const afterReload = await page.evaluate(async () => {
      const memory = window.memories.a!;
      const result = await memory.search('tokPx737', { k: 3 });
      return { count: await memory.count(), top: result.hits[0]?.id, status: await memory.status() };
    });
    expect(afterReload.count).toBe(1000);
    expect(afterReload.top).toBe(ids[737]);
    expect(afterReload.status).toMatchObject({ storage: 'opfs', count: 1000 });

    await context.close();
    context = await launchPersistent(profile.dir);
    requests = recordRequests(context);
    page = await openLab(context);
    await open(page, 'a', { name: 'persist' });
    const afterRestart = await page.evaluate(async () => {
      const memory = window.memories.a!;
      return { count: await memory.count(), top: (await memory.search('tokPx42', { k: 3 })).hits[0]?.id };
    });
    expect(afterRestart).toEqual({ count: 1000, top: ids[42] });
    await page.evaluate(() => window.memories.a!.close());
  });
});

describe('index snapshot', () => {
  test('a reopen restores the lexical index from its snapshot, and catches it up when the snapshot is stale', async () => {
    const page = await openLab(context);
    const outcome = await page.evaluate(async (items) => {
      const { createMemory } = window.engram;
      const first = await createMemory({ name: 'snapshot', embedder: null });
      await first.add(items);
      await first.close(); // saves the snapshot
      const second = await createMemory({ name: 'snapshot', embedder: null });
      const restored = { status: await second.status(), top: (await second.search('tokSx77', { k: 1 })).hits[0]?.text };
      await second.close();
      // A change the snapshot never saw: the worker is killed before it saves again.
      const worker = new Worker(new URL('/worker/index.ts', location.origin), { type: 'module' });
      const third = await createMemory({ name: 'snapshot', embedder: null, worker });
      await third.add({ text: 'added after the snapshot: tokSxNEW' });
      worker.terminate();
      const fourth = await createMemory({ name: 'snapshot', embedder: null });
      const caughtUp = { status: await fourth.status(), top: (await fourth.search('tokSxNEW', { k: 1 })).hits[0]?.text };
      await fourth.close();
      return { restored, caughtUp };
    }, lines('S', 300));
    expect(outcome.restored.status).toMatchObject({ lexicalIndex: 'snapshot', count: 300 });
    expect(outcome.restored.top).toContain('tokSx77 ');
    // The store's change counter moved past the snapshot's: the memory it lacks is indexed on open (snapshot.ts).
    expect(outcome.caughtUp.status).toMatchObject({ lexicalIndex: 'snapshot', count: 301 });
    expect(outcome.caughtUp.top).toBe('added after the snapshot: tokSxNEW');
  });
});

describe('atomicity', () => {
  // One add is one SQLite transaction, written after the last progress event. Chromium terminates a busy worker
  // only after a 2-second grace period, so with texts of ~3 KB (a write of a few seconds) the kills below land
  // before, inside or after the transaction, depending on the machine. With the model attached, the kill comes
  // halfway through embedding instead.
  const padding = ' lorem ipsum dolor sit amet'.repeat(110);
  const cases = [
    { model: false, delay: 0 },
    { model: false, delay: 500 },
    { model: false, delay: 1500 },
    { model: true, delay: 0 },
  ];
  test.each(cases)('a worker terminated in the middle of a 5,000-memory add leaves all of it or none (model $model, $delay ms)', async ({ model, delay }) => {
    const name = `crash-${model ? 'model' : 'lexical'}-${delay}`;
    const page = await openLab(context);
    await page.evaluate(
      async ([name, delay, items, embedder]) => {
        const worker = new Worker(new URL('/worker/index.ts', location.origin), { type: 'module' });
        const memory = await window.engram.createMemory({ name, worker, embedder });
        while (embedder && !(await memory.status()).embedder) await new Promise((resolve) => setTimeout(resolve, 50));
        await memory.add({ text: 'an earlier memory that must survive' });
        await new Promise<void>((resolve) => {
          const stop = () => (worker.terminate(), resolve());
          const due = (p: { done: number; total: number }) => (embedder ? p.done >= p.total / 2 : p.done === p.total);
          let armed = false;
          memory.add(items, { onProgress: (p) => !armed && due(p) && (armed = true) && setTimeout(stop, delay) }).then(stop, stop);
        });
      },
      [name, delay, lines('C', 5000).map((item) => ({ ...item, text: item.text + padding })), model ? {} : null] as const,
    );

    await open(page, 'reopened', { name, embedder: null });
    const after = await page.evaluate(async () => {
      const memory = window.memories.reopened!;
      const result = { count: await memory.count(), hits: (await memory.search('batchC', { k: 5 })).hits.length, exported: (await memory.export()).length };
      await memory.close();
      return result;
    });
    const added = after.count - 1;
    console.log(`worker terminated (model ${model}, ${delay} ms): ${added} of 5,000 stored`);
    expect([0, 5000]).toContain(added);
    expect(after.hits).toBe(added === 0 ? 0 : 5);
    expect(after.exported).toBe(after.count);
    // The store itself, read without the engine, agrees.
    const lab = await context.newPage();
    await lab.goto(new URL('/test/browser/pages/store-lab.html', page.url()).href);
    await lab.waitForFunction(() => (window as unknown as { lab?: unknown }).lab !== undefined);
    const rows = await lab.evaluate((name) => (window as unknown as { lab: { countRows(b: string, n: string): Promise<number> } }).lab.countRows('opfs', name), name);
    expect(rows).toBe(after.count);
    await lab.close();
    await page.close();
  });
});

describe('the built-in model in the worker', () => {
  test('search answers at once while the model loads, then semantically once it is attached', async () => {
    const page = await openLab(context);
    const outcome = await page.evaluate(async () => {
      const loading: string[] = [];
      const memory = await window.engram.createMemory({ name: 'semantic', embedder: { onProgress: (p) => loading.push(p.status) } });
      await memory.add([
        { text: 'The cat sits on the mat' },
        { text: 'Quarterly revenue grew 8 percent' },
        { text: 'The train to Paris leaves at noon' },
      ]);
      const early = await memory.search('cat');
      const earlyStatus = await memory.status();
      while (!(await memory.status()).embedder) await new Promise((resolve) => setTimeout(resolve, 50));
      while ((await memory.status()).indexing) await new Promise((resolve) => setTimeout(resolve, 50));
      const late = await memory.search('A kitten is resting on a rug', { k: 3 });
      const status = await memory.status();
      await memory.close();
      return {
        early: { mode: early.trace.mode, embedder: early.trace.embedder, top: early.hits[0]?.text, modelAttached: earlyStatus.embedder !== null },
        late: { mode: late.trace.mode, top: late.hits[0]?.text, vecRank: late.hits[0]?.explain.vecRank, bm25Rank: late.hits[0]?.explain.bm25Rank },
        status,
        loading,
      };
    });
    // Unless the model was already attached when the first search ran, that search was lexical and said so.
    if (!outcome.early.modelAttached) expect(outcome.early).toMatchObject({ mode: 'lexical', embedder: null });
    expect(outcome.early.top).toBe('The cat sits on the mat');
    // No shared word with the query: only the vector leg can find it.
    expect(outcome.late).toEqual({ mode: 'hybrid', top: 'The cat sits on the mat', vecRank: 1, bm25Rank: null });
    expect(outcome.status).toMatchObject({ storage: 'opfs', count: 3, indexing: null, error: null });
    expect(outcome.status.embedder).toMatch(/^engram-glove-100d@q8\/(wasm|webgpu)$/);
    expect(outcome.loading).toContain('ready');
  });

  test('memories stored without the model are embedded in the background when it arrives, with progress', async () => {
    const page = await openLab(context);
    await open(page, 'before', { name: 'reembed', embedder: null });
    await page.evaluate(async (items) => {
      await window.memories.before!.add(items);
      await window.memories.before!.close();
    }, lines('R', 3000));
    const outcome = await page.evaluate(async () => {
      const memory = await window.engram.createMemory({ name: 'reembed' });
      const seen: ({ done: number; total: number } | null)[] = [];
      const meanwhile = await memory.search('tokRx10');
      for (;;) {
        const status = await memory.status();
        seen.push(status.indexing);
        if (status.embedder && !status.indexing) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const after = await memory.search('tokRx10', { k: 1 });
      const semantic = await memory.search('growing vegetables in the garden', { k: 1 });
      await memory.close();
      return { meanwhile: meanwhile.hits[0]?.text ?? null, progress: seen.filter((p) => p !== null), mode: semantic.trace.mode, top: after.hits[0]?.text };
    });
    // The worker kept answering while it embedded: status calls were answered between batches, at several points
    // of the re-embedding, not once it had ended.
    const during = new Set(outcome.progress.filter((p) => p!.done < p!.total).map((p) => p!.done));
    expect(during.size).toBeGreaterThan(1);
    expect(outcome.meanwhile).toContain('tokRx10 ');
    expect(outcome.progress.length).toBeGreaterThan(0);
    expect(outcome.progress.every((p) => p!.total === 3000 && p!.done <= 3000)).toBe(true);
    expect(outcome).toMatchObject({ mode: 'hybrid' });
    expect(outcome.top).toContain('tokRx10 ');
  });
});

describe('storage choices', () => {
  test("storage 'idb' keeps data in IndexedDB and 'memory' keeps nothing", async () => {
    const page = await openLab(context);
    const outcome = await page.evaluate(async () => {
      const { createMemory } = window.engram;
      const run = async (storage: 'idb' | 'memory') => {
        const first = await createMemory({ name: `choice-${storage}`, storage, embedder: null });
        await first.add([{ text: 'kept in the browser' }, { text: 'second note' }]);
        const status = await first.status();
        await first.close();
        const second = await createMemory({ name: `choice-${storage}`, storage, embedder: null });
        const count = await second.count();
        await second.close();
        return { storage: status.storage, persisted: typeof status.persisted, countAfterReopen: count };
      };
      return { idb: await run('idb'), memory: await run('memory') };
    });
    expect(outcome).toEqual({
      idb: { storage: 'idb', persisted: 'boolean', countAfterReopen: 2 },
      memory: { storage: 'memory', persisted: 'boolean', countAfterReopen: 0 },
    });
  });
});

describe('two tabs on one database', () => {
  test('two pages adding 500 memories each at the same time both count 1,000 and find each other’s', async () => {
    const [a, b] = [await openLab(context), await openLab(context)];
    await open(a, 'shared', { name: 'shared' });
    await open(b, 'shared', { name: 'shared' });
    const addFrom = (page: Page, tag: string) =>
      page.evaluate(async (tag) => {
        const memory = window.memories.shared!;
        const batches = Array.from({ length: 10 }, (_, i) =>
          memory.add(Array.from({ length: 50 }, (_, j) => ({ text: `note from tab ${tag}: tok${tag}x${i * 50 + j} about the harbour` }))),
        );
        return (await Promise.all(batches)).flat().length;
      }, tag);
    expect(await Promise.all([addFrom(a, 'A'), addFrom(b, 'B')])).toEqual([500, 500]);

    const look = (page: Page, query: string) =>
      page.evaluate(async (query) => {
        const memory = window.memories.shared!;
        return { count: await memory.count(), top: (await memory.search(query, { k: 1 })).hits[0]?.text ?? null };
      }, query);
    expect(await look(a, 'tokBx321')).toEqual({ count: 1000, top: 'note from tab B: tokBx321 about the harbour' });
    expect(await look(b, 'tokAx123')).toEqual({ count: 1000, top: 'note from tab A: tokAx123 about the harbour' });

    // The leader's tab closes in the middle of the other tab's writes: nothing is lost, the other tab takes over.
    const writes = b.evaluate(async () => {
      const memory = window.memories.shared!;
      let added = 0;
      for (let i = 0; i < 20; i++) added += (await memory.add(Array.from({ length: 10 }, (_, j) => ({ text: `after the handover ${i}-${j}` })))).length;
      return added;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await a.close();
    expect(await writes).toBe(200);
    expect(await look(b, 'handover')).toMatchObject({ count: 1200 });
    const c = await openLab(context);
    await open(c, 'shared', { name: 'shared' });
    expect(await look(c, 'tokAx7')).toMatchObject({ count: 1200, top: 'note from tab A: tokAx7 about the harbour' });
    await c.close();
    await b.close();
  });
});

describe('errors', () => {
  test('errors raised in the worker arrive as EngramError with their code, from the leader and from a follower', async () => {
    const [leader, follower] = [await openLab(context), await openLab(context)];
    await open(leader, 'm', { name: 'errors' });
    await open(follower, 'm', { name: 'errors' });
    const probe = (page: Page) =>
      page.evaluate(async () => {
        const { EngramError } = window.engram;
        const memory = window.memories.m!;
        const codeOf = (promise: Promise<unknown>) =>
          promise.then(
            () => 'resolved',
            (e: unknown) => (e instanceof EngramError ? e.code : `not an EngramError: ${String(e)}`),
          );
        return {
          notFound: await codeOf(memory.update('no-such-id', { text: 'x' })),
          invalid: await codeOf(memory.add({ text: '' })),
          duplicate: await codeOf(memory.add([{ id: 'same', text: 'one' }, { id: 'same', text: 'two' }])),
          badOption: await codeOf(memory.search('x', { k: -1 })),
          badName: await codeOf(window.engram.createMemory({ name: 'no spaces allowed', embedder: null })),
        };
      });
    const expected = { notFound: 'NOT_FOUND', invalid: 'INVALID_INPUT', duplicate: 'DUPLICATE_ID', badOption: 'INVALID_INPUT', badName: 'INVALID_INPUT' };
    expect(await probe(leader)).toEqual(expected);
    expect(await probe(follower)).toEqual(expected);
    const closed = await follower.evaluate(async () => {
      const memory = window.memories.m!;
      await memory.close();
      return memory.count().then(
        () => 'resolved',
        (e: { code?: string }) => e.code,
      );
    });
    expect(closed).toBe('CLOSED');
    // The page's other Comlink workers keep Comlink's own error format.
    const plain = await leader.evaluate(async () => {
      const worker = new Worker('/test/browser/pages/plain-comlink-worker.ts', { type: 'module' });
      const remote = window.Comlink.wrap<{ fail(): never }>(worker);
      try {
        await remote.fail();
        return 'resolved';
      } catch (e) {
        return `${(e as Error).name}: ${(e as Error).message}`;
      } finally {
        worker.terminate();
      }
    });
    expect(plain).toBe('TypeError: plain failure');
    await leader.close();
    await follower.close();
  });

  test('a database deleted behind its back reopens empty with status().evicted, once', async () => {
    const page = await openLab(context);
    const seen = await page.evaluate(async () => {
      const { createMemory } = window.engram;
      const first = await createMemory({ name: 'evict-me', storage: 'opfs', embedder: null });
      await first.add({ text: 'soon gone' });
      const before = (await first.status()).evicted;
      await first.close();
      const folder = await (await navigator.storage.getDirectory()).getDirectoryHandle('engram');
      for await (const name of (folder as unknown as { keys(): AsyncIterable<string> }).keys()) {
        if (name.startsWith('evict-me.sqlite3')) await folder.removeEntry(name);
      }
      const reopened = await createMemory({ name: 'evict-me', storage: 'opfs', embedder: null });
      const after = await reopened.status();
      await reopened.close();
      const again = await createMemory({ name: 'evict-me', storage: 'opfs', embedder: null });
      const later = (await again.status()).evicted;
      await again.close();
      return { before, after: { evicted: after.evicted, count: after.count }, later };
    });
    expect(seen).toEqual({ before: false, after: { evicted: true, count: 0 }, later: false });
    await page.close();
  });

  test("createMemory's limits reach the worker's engine; a bad limit refuses the Memory", async () => {
    const page = await openLab(context);
    const outcome = await page.evaluate(async () => {
      const { createMemory } = window.engram;
      const codeOf = (promise: Promise<unknown>) =>
        promise.then(
          () => 'ok',
          (e: { code?: string }) => e.code ?? 'uncoded',
        );
      const memory = await createMemory({ name: 'limits', storage: 'memory', embedder: null, limits: { maxTags: 2 } });
      const answer = {
        threeTags: await codeOf(memory.add({ text: 'three tags', tags: ['a', 'b', 'c'] })),
        twoTags: await codeOf(memory.add({ text: 'two tags', tags: ['a', 'b'] })),
        badLimit: await codeOf(createMemory({ name: 'bad-limits', storage: 'memory', embedder: null, limits: { maxTags: -1 } })),
      };
      await memory.close();
      return answer;
    });
    expect(outcome).toEqual({ threeTags: 'INVALID_INPUT', twoTags: 'ok', badLimit: 'INVALID_INPUT' });
    await page.close();
  });


  test("createMemory's lexical.matchedTermsFactor reaches the worker's engine; another lexical key refuses the Memory", async () => {
    const page = await openLab(context);
    const outcome = await page.evaluate(async () => {
      const { createMemory } = window.engram;
      // The same memory's raw BM25 for a two-term query it matches in full: twice as much with the factor.
      const bm25With = async (lexical: { matchedTermsFactor?: boolean }) => {
        const memory = await createMemory({ name: 'lexical', storage: 'memory', embedder: null, lexical });
        await memory.add([{ text: 'red apple pie' }, { text: 'green pear' }, { text: 'blue plum' }]);
        const { hits } = await memory.search('red apple', { mode: 'lexical', touch: false });
        await memory.close();
        return hits[0]!.explain.bm25!;
      };
      const on = await bm25With({});
      const off = await bm25With({ matchedTermsFactor: false });
      const bad = await createMemory({ name: 'bad-lexical', storage: 'memory', embedder: null, lexical: { stem: null } as never }).then(
        () => 'ok',
        (e: { code?: string }) => e.code ?? 'uncoded',
      );
      return { ratio: on / off, bad };
    });
    expect(outcome.ratio).toBeCloseTo(2, 9);
    expect(outcome.bad).toBe('INVALID_INPUT');
    await page.close();
  });
  test('meta nested 1,500 deep is refused at once with INVALID_INPUT (Chromium drops such a message silently)', async () => {
    const page = await openLab(context);
    const outcome = await page.evaluate(async () => {
      const memory = await window.engram.createMemory({ name: 'deep-meta', storage: 'memory', embedder: null, writeTimeoutMs: 20_000 });
      let meta: Record<string, unknown> = {};
      const root = meta;
      for (let i = 0; i < 1500; i++) meta = (meta.child = {}) as Record<string, unknown>;
      // Refused before it is posted: a TIMEOUT here would mean the message was sent and dropped.
      const code = await memory.add({ text: 'deep', meta: root }).then(
        () => 'stored',
        (e: { code?: string }) => e.code,
      );
      const answer = { code, count: await memory.count() };
      await memory.close();
      return answer;
    });
    expect(outcome.code).toBe('INVALID_INPUT');
    expect(outcome.count).toBe(0);
    await page.close();
  });

  test('a missing model refuses createMemory with MODEL_NOT_FOUND naming the files; lexical-only opens', async () => {
    const page = await openLab(context);
    const result = await page.evaluate(async () => {
      const { createMemory, isEngramError } = window.engram;
      const refused = await createMemory({ name: 'no-model', embedder: { model: 'nobody/nothing' } }).then(
        () => null,
        (e: unknown) => (isEngramError(e) ? { code: e.code, message: e.message } : { code: 'none', message: String(e) }),
      );
      const lexical = await createMemory({ name: 'no-model', embedder: null });
      await lexical.add({ text: 'kept without a model' });
      const answer = { refused, count: await lexical.count(), mode: (await lexical.search('kept')).trace.mode };
      await lexical.close();
      return answer;
    });
    expect(result.refused?.code).toBe('MODEL_NOT_FOUND');
    expect(result.refused?.message).toContain('/models/nobody/nothing/config.json');
    expect(result).toMatchObject({ count: 1, mode: 'lexical' });
    await page.close();
  });
});

test('no request left the page origin', () => {
  expect(requests.all.length).toBeGreaterThan(0);
  expect(requests.foreign()).toEqual([]);
});

describe('opening never waits for the storage permission', () => {
  test('createMemory resolves while navigator.storage.persist() never settles (Firefox asks the user)', async () => {
    const page = await openLab(context);
    const outcome = await page.evaluate(async () => {
      let asked = 0;
      Object.defineProperty(navigator.storage, 'persisted', { configurable: true, value: () => Promise.resolve(false) });
      Object.defineProperty(navigator.storage, 'persist', { configurable: true, value: () => (asked++, new Promise<boolean>(() => {})) });
      const memory = await window.engram.createMemory({ name: 'persist-prompt', embedder: null, openTimeoutMs: 20_000 });
      await memory.add({ text: 'opened without an answer to the prompt' });
      const count = await memory.count();
      await memory.close();
      return { asked, count };
    });
    expect(outcome).toEqual({ asked: 1, count: 1 });
  });
});
