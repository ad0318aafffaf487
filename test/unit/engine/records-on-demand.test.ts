/**
 * Records on demand: an engine opened from summaries (fetching full records by id, in the background or into a
 * bounded cache) answers every call as one holding every record from the start.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, memoryStore, type Engine, type MemoryRecord, type Store } from '../../../src/index.js';
import type { SearchFilter } from '../../../src/search/options.js';
import { testEmbedder } from '../helpers/embedder.js';
import { runs } from '../helpers/tier.js';

const NOW = Date.UTC(2024, 5, 1);
const DAY = 86_400_000;
const WORDS = ['kite', 'boat', 'river', 'lantern', 'garden', 'paint', 'station', 'coffee', 'winter', 'piano', 'map', 'storm'];
const PROJECTS = ['web', 'app'];
const TAGS = ['a', 'b', 'c'];

/** The reference: a store without by-id reads, so the engine loads every record on open (the old path). */
function wholeLoad(inner: Store): Store {
  const { loadRecordSummaries: _s, loadRecordsByIds: _b, ...rest } = inner;
  return { ...rest, kind: inner.kind, persistent: inner.persistent, close: async () => undefined };
}

interface Gate {
  /** The by-id read to hold (the first that matches), after it has read the store. */
  match(ids: readonly string[]): boolean;
  open: Promise<void>;
  held: number;
}

function gate(match: Gate['match']): Gate & { release(): void } {
  let release = () => {};
  const open = new Promise<void>((resolve) => (release = resolve));
  return { match, open, held: 0, release: () => release() };
}

const tick = (ms = 1) => new Promise((resolve) => setTimeout(resolve, ms));

/** The same data with by-id reads; `gate` holds one read (see Gate). */
function onDemand(inner: Store, gate?: Gate, slow = false): Store & { byIdReads: number } {
  const store = {
    ...inner,
    kind: inner.kind,
    persistent: inner.persistent,
    byIdReads: 0,
    close: async () => undefined,
    async loadRecordsByIds(ids: readonly string[]) {
      store.byIdReads++;
      const read = await inner.loadRecordsByIds!(ids);
      // As the IndexedDB backend: the read settles in a later task, after the cache may have been trimmed.
      if (slow) await tick(0);
      if (gate && gate.held === 0 && gate.match(ids)) {
        gate.held++;
        await gate.open;
      }
      return read;
    },
  };
  return store;
}

interface Corpus {
  records: MemoryRecord[];
}

const recordArb = (i: number) =>
  fc
    .record({
      words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }),
      tags: fc.subarray(TAGS),
      project: fc.option(fc.constantFrom(...PROJECTS), { nil: undefined }),
      kind: fc.option(fc.constantFrom('note', 'chat'), { nil: undefined }),
      scope: fc.option(fc.constantFrom('personal', 'shared'), { nil: undefined }),
      days: fc.integer({ min: 0, max: 60 }),
      expires: fc.option(fc.integer({ min: -5, max: 5 }), { nil: undefined }),
      thread: fc.option(fc.constantFrom('t1', 't2', 7), { nil: undefined }),
      pinned: fc.boolean(),
      accessCount: fc.nat(3),
    })
    .map((r): MemoryRecord => {
      const record: MemoryRecord = {
        id: `m${i}`,
        text: r.words.join(' '),
        createdAt: NOW - r.days * DAY,
        priority: 1,
        pinned: r.pinned,
        tags: r.tags,
        accessCount: r.accessCount,
      };
      if (r.project !== undefined) record.project = r.project;
      if (r.kind !== undefined) record.kind = r.kind;
      if (r.scope !== undefined) record.scope = r.scope;
      if (r.expires !== undefined) record.validUntil = NOW + r.expires * DAY;
      if (r.thread !== undefined) record.meta = { thread: r.thread };
      return record;
    });

const corpusArb: fc.Arbitrary<Corpus> = fc
  .integer({ min: 1, max: 40 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => recordArb(i))))
  .chain((records) =>
    // Some memories superseded by another one of the corpus.
    fc.array(fc.tuple(fc.nat(records.length - 1), fc.nat(records.length - 1)), { maxLength: 4 }).map((pairs) => {
      for (const [a, b] of pairs) if (a !== b) records[a]!.supersededBy = records[b]!.id;
      return { records };
    }),
  );

const filterArb: fc.Arbitrary<SearchFilter> = fc.record(
  {
    project: fc.constantFrom(...PROJECTS),
    tags: fc.subarray(TAGS, { maxLength: 2 }),
    kinds: fc.subarray(['note', 'chat']),
    scope: fc.constantFrom('personal', 'shared', 'both'),
    since: fc.integer({ min: 0, max: 60 }).map((d) => NOW - d * DAY),
  },
  { requiredKeys: [] },
);

async function seeded(records: MemoryRecord[]): Promise<Store> {
  const inner = memoryStore();
  const seeder = await createEngine({ store: wholeLoad(inner), embedder: testEmbedder(), clock: () => NOW, supersedeThreshold: false });
  await seeder.import(records);
  await seeder.close();
  return inner;
}

const open = (store: Store, extra: Parameters<typeof createEngine>[0] = {}) =>
  createEngine({ store, embedder: testEmbedder(), clock: () => NOW, supersedeThreshold: false, search: { session: 'one session' }, ...extra });

/** A search's answer without timings. */
async function answer(engine: Engine, query: string, options: Parameters<Engine['search']>[1]) {
  const result = await engine.search(query, { touch: false, ...options });
  return { hits: result.hits.map((h) => [h.id, h.score, h.memory]), context: result.context.text };
}

describe('records on demand', () => {
  it('search gives the same ids, scores and records resident, right after open, and from a tiny cache (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        corpusArb,
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
        filterArb,
        fc.boolean(),
        fc.constantFrom<'hybrid' | 'lexical'>('hybrid', 'lexical'),
        async ({ records }, words, filter, deepRecall, mode) => {
          const inner = await seeded(records);
          const options = { filter, deepRecall, mode, k: 8, neighbours: { window: 1 } } as Parameters<Engine['search']>[1];
          const query = words.join(' ');
          const reference = await open(wholeLoad(inner));
          const expected = await answer(reference, query, options);
          // Opened from summaries, asked before the background load has run.
          const fresh = await open(onDemand(inner));
          expect(await answer(fresh, query, options)).toEqual(expected);
          // Above residentRecords: a cache of 1 record, every read from the store.
          const cached = onDemand(inner, undefined, true);
          const small = await open(cached, { residentRecords: 0, recordCacheSize: 1 });
          expect(await answer(small, query, options)).toEqual(expected);
          expect(await answer(small, query, options)).toEqual(expected);
          for (const engine of [reference, fresh, small]) await engine.close();
        },
      ),
      { numRuns: runs(60) },
    );
  });

  it('every other read and write gives the same results from a cache of 2 records', async () => {
    const records = Array.from({ length: 30 }, (_, i): MemoryRecord => ({
      id: `m${i}`,
      text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]} note ${i}`,
      createdAt: NOW - (30 - i) * DAY,
      priority: 1,
      pinned: false,
      tags: i % 2 ? ['a'] : [],
      accessCount: 0,
      ...(i % 3 === 0 ? { meta: { thread: 'chat' } } : {}),
      ...(i === 4 ? { supersededBy: 'm5' } : {}),
    }));
    const run = async (store: Store, extra: Parameters<typeof createEngine>[0]) => {
      const engine = await open(store, extra);
      const out: unknown[] = [];
      out.push(await engine.get('m3'), await engine.get('nope'), await engine.timeline('m9', { before: 2, after: 2 }));
      out.push(await engine.timeline('m10', { before: 3, after: 1 }), await engine.count());
      out.push((await engine.search('kite river', { k: 5 })).hits.map((h) => [h.id, h.memory.accessCount]));
      out.push((await engine.search('boat', { k: 5, deepRecall: true })).hits.map((h) => h.id));
      await engine.flush();
      out.push(await engine.update('m7', { text: 'storm over the station', tags: ['b'] }));
      out.push(await engine.pin('m8'));
      out.push(await engine.remove(['m5', 'm6'])); // m4 was superseded by m5: live again
      out.push(await engine.get('m4'));
      out.push(await engine.add({ id: 'n1', text: 'a new kite memory' }));
      out.push((await engine.search('kite storm', { k: 6, touch: false })).hits.map((h) => [h.id, h.score]));
      out.push(await engine.export());
      await engine.close();
      return { out, stored: await store.loadRecords() };
    };
    const inner1 = await seeded(records);
    const inner2 = await seeded(records);
    const expected = await run(wholeLoad(inner1), {});
    const actual = await run(onDemand(inner2, undefined, true), { residentRecords: 0, recordCacheSize: 2 });
    expect(actual).toEqual(expected);
  });

  it('a reopened engine answers before the background load ends, then finishes it', async () => {
    const inner = memoryStore();
    const first = await open(onDemand(inner));
    await first.add(Array.from({ length: 300 }, (_, i) => ({ text: `${WORDS[i % WORDS.length]} memory number ${i}`, tags: i % 7 ? [] : ['a'] })));
    const added = await first.add({ text: 'the lantern by the river', tags: ['b'] });
    const indexSnapshot = await first.indexSnapshot(); // as the worker keeps it: the reopen restores the lexical index
    await first.close();

    const background = gate((ids) => ids.length === 301);
    // Without a model, as the worker opens (it attaches one after the first answer).
    const reopened = await open(onDemand(inner, background), { embedder: null, indexSnapshot });
    while (background.held === 0) await tick(); // the background read is held: not every record is loaded
    const hits = (await reopened.search('lantern river', { k: 3 })).hits;
    expect(hits[0]?.id).toBe(added[0]);
    expect(hits[0]?.text).toBe('the lantern by the river');
    expect((await reopened.get(added[0]!))?.tags).toEqual(['b']);
    background.release();
    await reopened.setEmbedder(testEmbedder()); // waits for the background load
    const reference = await open(wholeLoad(inner));
    const query = { k: 10, touch: false } as const;
    expect(await answer(reopened, 'memory number kite', query)).toEqual(await answer(reference, 'memory number kite', query));
  });

  it('a write racing the background load wins over the copy read before it', async () => {
    const inner = await seeded(
      Array.from({ length: 50 }, (_, i): MemoryRecord => ({ id: `m${i}`, text: `piano lesson ${i}`, createdAt: NOW - i, priority: 1, pinned: false, tags: [], accessCount: 0 })),
    );
    const indexSnapshot = await (await open(wholeLoad(inner))).indexSnapshot();
    const background = gate((ids) => ids.length === 50);
    const engine = await open(onDemand(inner, background), { embedder: null, indexSnapshot });
    // The background load read every record, and waits before handing them over.
    while (background.held === 0) await tick();
    await engine.update('m3', { text: 'coffee at the station' });
    await engine.remove('m4');
    await engine.add({ id: 'm50', text: 'piano lesson new' });
    background.release();
    await tick(20);
    expect((await engine.get('m3'))?.text).toBe('coffee at the station');
    expect(await engine.get('m4')).toBeNull();
    expect(await engine.count()).toBe(50);
    const exported = await engine.export();
    expect(exported.find((r) => r.id === 'm3')?.text).toBe('coffee at the station');
    expect(exported.some((r) => r.id === 'm4')).toBe(false);
    expect((await engine.search('coffee station', { k: 1, touch: false })).hits[0]?.text).toBe('coffee at the station');
    const hits = (await engine.search('piano lesson', { k: 60, touch: false })).hits;
    expect(hits.map((h) => h.id)).not.toContain('m4');
    expect(hits.map((h) => h.text)).not.toContain('piano lesson 3');
  });

  it('from a bounded cache, a write during a read wins even when its record was evicted before the read ended', async () => {
    const inner = await seeded(
      Array.from({ length: 5 }, (_, i): MemoryRecord => ({ id: `m${i}`, text: `garden note ${i}`, createdAt: NOW - i, priority: 1, pinned: false, tags: [], accessCount: 0 })),
    );
    const slow = gate((ids) => ids.length === 1 && ids[0] === 'm3');
    const engine = await open(onDemand(inner, slow), { residentRecords: 0, recordCacheSize: 1 });
    const pending = engine.get('m3'); // reads the old m3, then waits
    while (slow.held === 0) await tick();
    await engine.update('m3', { text: 'winter storm' });
    await engine.get('m1');
    await engine.get('m2');
    await tick(5); // the cache is trimmed to 1: the new m3 is gone from memory
    slow.release();
    expect((await pending)?.text).toBe('winter storm');
    expect((await engine.get('m3'))?.text).toBe('winter storm');
  });

  it('refuses a negative residentRecords or recordCacheSize', async () => {
    await expect(createEngine({ residentRecords: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(createEngine({ recordCacheSize: 1.5 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
