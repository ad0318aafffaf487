import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createEngine, memoryStore, type Embedder, type MemoryInput, type Store } from '../../../src/index.js';
import { DAY_MS } from '../../../src/util/time.js';
import { testEmbedder } from '../helpers/embedder.js';
import { hostileQuery } from '../helpers/arbitraries.js';
import { reopenable, snapshot } from '../helpers/stores.js';
import { runs } from '../helpers/tier.js';

const NOW = Date.UTC(2024, 5, 1);
const daysAgo = (n: number) => NOW - n * DAY_MS;
const STAGES = ['route', 'understand', 'lexical', 'vector', 'fuse', 'neighbours', 'filter', 'adjust', 'currency', 'diversify', 'assemble', 'reinforce'];

async function engineWith(memories: MemoryInput[] = [], options: Parameters<typeof createEngine>[0] = {}) {
  const embedder = testEmbedder();
  const engine = await createEngine({ embedder, clock: () => NOW, ...options });
  const ids = await engine.add(memories);
  return { engine, embedder, ids };
}

describe('createEngine: add, get, count, export', () => {
  it('returns ids in input order, generated or given, and stores normalised records', async () => {
    const { engine, ids } = await engineWith([
      { text: 'first memory' },
      { id: 'given', text: 'second memory', createdAt: '2024-01-02T03:04:05Z', tags: ['a', 'a', 'b'], priority: 1.5, pinned: true, project: 'p', meta: { x: 1 } },
    ]);
    expect(ids[1]).toBe('given');
    expect(ids[0]).toMatch(/^[0-9a-f-]{32,36}$/);
    expect(await engine.count()).toBe(2);
    expect(await engine.get('given')).toEqual({
      id: 'given', text: 'second memory', createdAt: Date.UTC(2024, 0, 2, 3, 4, 5), tags: ['a', 'b'], priority: 1.5, pinned: true,
      project: 'p', meta: { x: 1 }, accessCount: 0,
    });
    expect((await engine.get(ids[0]!))!.createdAt).toBe(NOW);
    expect(await engine.get('nope')).toBeNull();
  });

  it('hands out copies: mutating a returned record changes nothing inside', async () => {
    const { engine } = await engineWith([{ id: 'a', text: 'alpha', tags: ['t'], meta: { n: 1 } }]);
    const got = (await engine.get('a'))!;
    got.text = 'changed';
    got.tags.push('x');
    (got.meta as { n: number }).n = 2;
    expect(await engine.get('a')).toMatchObject({ text: 'alpha', tags: ['t'], meta: { n: 1 } });
    const [exported] = await engine.export();
    exported!.text = 'changed';
    expect((await engine.get('a'))!.text).toBe('alpha');
  });

  it('reports add progress per embedded batch', async () => {
    const progress: number[] = [];
    const { engine } = await engineWith([], { embedBatchSize: 2 });
    await engine.add(
      ['a', 'b', 'c', 'd', 'e'].map((text) => ({ text: `memory ${text}` })),
      { onProgress: (p) => progress.push(p.done / p.total) },
    );
    expect(progress).toEqual([2 / 5, 4 / 5, 1]);
  });

  it('progress reaches its total only once the store write is done (it covers the whole call)', async () => {
    const store = memoryStore();
    const engine = await createEngine({ store, embedder: testEmbedder(), embedBatchSize: 2 });
    const events: string[] = [];
    const write = store.write.bind(store);
    store.write = async (change) => {
      await write(change);
      events.push('written');
    };
    await engine.add(['a', 'b', 'c'].map((text) => ({ text: `memory ${text}` })), { onProgress: (p) => events.push(`${p.done}/${p.total}`) });
    expect(events).toEqual(['2/3', 'written', '3/3']);
    await engine.close();
  });

  it('add([]) stores nothing and returns []', async () => {
    const store = memoryStore();
    const engine = await createEngine({ store });
    const before = await store.changeCounter();
    expect(await engine.add([])).toEqual([]);
    expect(await store.changeCounter()).toBe(before);
  });
});

describe('search through createEngine', () => {
  const memories: MemoryInput[] = [
    { id: 'auth', text: 'The auth middleware rejects expired tokens', createdAt: daysAgo(3) },
    { id: 'deploy', text: 'We deploy the frontend on Fridays', createdAt: daysAgo(1) },
    { id: 'bug', text: 'Fix the auth middleware bug before the release', createdAt: daysAgo(2), tags: ['bug'] },
    { id: 'coffee', text: 'Maria likes her coffee black', createdAt: daysAgo(40) },
  ];

  it('runs every stage in order, hybrid, with consistent explain values', async () => {
    const { engine, embedder } = await engineWith(memories);
    const result = await engine.search('fix the auth-middleware bug', { fusion: 'rrf', weights: { lexical: 1, vector: 1 } });
    expect(result.trace.mode).toBe('hybrid');
    expect(result.trace.embedder).toBe(embedder.id);
    expect(result.trace.stages.map((s) => s.name)).toEqual(STAGES);
    expect(result.hits[0]!.id).toBe('bug');
    for (const hit of result.hits) {
      const e = hit.explain;
      expect(hit.score).toBeCloseTo(e.fused * e.recency * e.boost, 12);
      const expectedRrf = (e.bm25Rank ? 1 / (60 + e.bm25Rank) : 0) + (e.vecRank ? 1 / (60 + e.vecRank) : 0);
      expect(e.fused).toBeCloseTo(expectedRrf, 12);
      expect(e.rrf).toBeCloseTo(expectedRrf, 12);
      expect(e.bm25 === null).toBe(e.bm25Rank === null);
      expect(e.cosine === null).toBe(e.vecRank === null);
      expect(hit.text).toBe(hit.memory.text);
      expect(typeof e.mmr).toBe('number');
    }
    const scores = result.hits.map((h) => h.score);
    expect(scores).toEqual(scores.slice().sort((a, b) => b - a));
    // the trace's counts chain from stage to stage
    const [route, , lexical, vector, fuse, neighbours, filter, adjust, diversify, assemble] = result.trace.stages;
    expect(route!.in).toBe(4);
    expect(fuse!.in).toBe(lexical!.out + vector!.out);
    expect(neighbours!.in).toBe(fuse!.out);
    expect(filter!.in).toBe(neighbours!.out);
    expect(adjust!.in).toBe(filter!.out);
    expect(diversify!.in).toBe(adjust!.out);
    expect(diversify!.out).toBe(result.hits.length);
    expect(assemble!.out).toBe(result.context.ids.length);
    // the stages run one after another inside the total
    const stageMs = result.trace.stages.map((s) => s.ms);
    expect(stageMs.every((ms) => Number.isFinite(ms) && ms >= 0)).toBe(true);
    expect(result.trace.totalMs).toBeGreaterThanOrEqual(stageMs.reduce((a, b) => a + b, 0) - 1e-9);
    // RRF's own sum is reported only when RRF fused the lists
    const convex = await engine.search('fix the auth-middleware bug', { fusion: 'convex' });
    expect(convex.hits.length).toBeGreaterThan(0);
    for (const hit of convex.hits) expect(hit.explain).not.toHaveProperty('rrf');
  });

  it('returns k hits and a context within the budget, counted by the embedder tokenizer when it has one', async () => {
    const countTokens = (t: string) => t.split(/\s+/).length;
    const many = Array.from({ length: 30 }, (_, i) => ({ text: `note ${i} about the garden and its roses, entry number ${i}` }));
    const { engine } = await engineWith(many, { embedder: testEmbedder({ countTokens }), supersedeThreshold: false });
    const result = await engine.search('garden roses', { k: 7, tokenBudget: 40 });
    expect(result.hits).toHaveLength(7);
    expect(result.context.budget).toBe(40);
    expect(result.context.tokens).toBeLessThanOrEqual(40);
    expect(result.context.ids.length).toBeGreaterThan(0);
    expect(result.context.ids.every((id) => result.hits.some((h) => h.id === id))).toBe(true);
    const blocks = result.context.text.split('\n\n');
    expect(blocks).toHaveLength(result.context.ids.length);
    expect(result.context.tokens).toBe(blocks.reduce((n, b) => n + countTokens(b), 0) + (blocks.length - 1) * countTokens('\n\n'));
  });

  it('without an embedder searches lexically and the trace says so', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(memories);
    const result = await engine.search('auth middleware');
    expect(result.trace.mode).toBe('lexical');
    expect(result.trace.embedder).toBeNull();
    expect(result.trace.stages.map((s) => s.name)).toEqual(STAGES.filter((s) => s !== 'vector'));
    expect(result.trace.stages[0]!.note).toBe('no embedder: lexical only');
    expect(result.hits.map((h) => h.id).sort()).toEqual(['auth', 'bug']);
    expect(result.hits.every((h) => h.explain.vecRank === null && h.explain.cosine === null)).toBe(true);
  });

  it('routes an identifier-like query lexically, and honours an explicit mode', async () => {
    const { engine } = await engineWith([...memories, { id: 'err', text: 'Saw ERR_CONNECTION_RESET from the proxy' }]);
    const lexical = await engine.search('ERR_CONNECTION_RESET');
    expect(lexical.trace.mode).toBe('lexical');
    expect(lexical.hits[0]!.id).toBe('err');
    const vector = await engine.search('coffee', { mode: 'vector' });
    expect(vector.trace.mode).toBe('vector');
    expect(vector.trace.stages.map((s) => s.name)).not.toContain('lexical');
    const top = vector.hits.find((h) => h.explain.vecRank === 1)!;
    expect(top.id).toBe('coffee');
    expect(vector.hits.every((h) => h.explain.bm25Rank === null)).toBe(true);
  });

  it('queries full of operators and emoji, and empty queries, give a defined result', async () => {
    const { engine } = await engineWith(memories);
    for (const q of ['auth AND (bug OR "x") NOT -y* ~2 ^3', '🔥🔥🔥 auth 🚀', '((((', '\u0000', '"""', '']) {
      const result = await engine.search(q);
      expect(Array.isArray(result.hits)).toBe(true);
      expect(result.trace.stages[0]!.name).toBe('route');
    }
    expect((await engine.search('')).hits).toEqual([]);
    expect((await engine.search('   ')).trace.stages[0]!.note).toBe('empty query: nothing to search for');
    expect((await engine.search('auth AND (bug OR "x")')).hits.map((h) => h.id)).toContain('bug');
    await fc.assert(
      fc.asyncProperty(hostileQuery, async (q) => {
        const result = await engine.search(q, { touch: false });
        expect(result.trace.stages.map((s) => s.name)[0]).toBe('route');
        expect(result.hits.length).toBeLessThanOrEqual(5);
      }),
      { numRuns: runs(200) },
    );
  });

  it("applies decay and boosts with the seeds' numbers", async () => {
    const { engine } = await engineWith(
      [
        { id: 'day', text: 'kiwi fruit', createdAt: daysAgo(1) },
        { id: 'month', text: 'kiwi bird', createdAt: daysAgo(30), project: 'web', pinned: true, priority: 2 },
        { id: 'other', text: 'kiwi shoe polish', createdAt: daysAgo(30), project: 'api' },
        { id: 'none', text: 'kiwi language', createdAt: daysAgo(30) },
      ],
      { supersedeThreshold: false },
    );
    const exp = await engine.search('kiwi', { decay: { kind: 'exponential', tauMs: 7 * DAY_MS }, decayAlpha: 1, decayScope: 'all', diversity: false, k: 10 });
    const recency = Object.fromEntries(exp.hits.map((h) => [h.id, h.explain.recency.toFixed(4)]));
    expect(recency.day).toBe('0.8669');
    expect(recency.month).toBe('0.0138');
    const hyp = await engine.search('kiwi', { decay: { kind: 'hyperbolic', halfLifeDays: 60 }, decayAlpha: 1, decayScope: 'all', project: 'web', k: 10, diversity: false });
    const byId = Object.fromEntries(hyp.hits.map((h) => [h.id, h]));
    expect(byId.month!.explain.recency.toFixed(4)).toBe('0.6667');
    expect(byId.month!.explain.boost).toBeCloseTo(2 * 1.1 * 1.3, 12);
    expect(byId.other!.explain.boost).toBeCloseTo(0.8, 12);
    expect(byId.none!.explain.boost).toBeCloseTo(0.9, 12);
    expect(byId.day!.explain.boost).toBeCloseTo(0.9, 12);
    const hooked = await engine.search('kiwi', { boost: (m) => (m.id === 'none' ? 10 : 1), k: 1 });
    expect(hooked.hits[0]!.id).toBe('none');
    const noDecay = await engine.search('kiwi', { decay: false, k: 10 });
    expect(noDecay.hits.every((h) => h.explain.recency === 1)).toBe(true);
  });

  it('filters never starve results: the legs fill their pools with eligible memories only', async () => {
    const crowd = Array.from({ length: 120 }, (_, i) => ({ text: `apple pie recipe number ${i} apple apple`, project: 'big' }));
    const few = [0, 1, 2].map((i) => ({ id: `small${i}`, text: `an apple somewhere ${i}`, project: 'small' }));
    const { engine } = await engineWith([...crowd, ...few], { supersedeThreshold: false });
    const result = await engine.search('apple', { filter: { project: 'small' }, candidatePool: 10, k: 5 });
    expect(result.hits.map((h) => h.id).sort()).toEqual(['small0', 'small1', 'small2']);
    const lexical = result.trace.stages.find((s) => s.name === 'lexical')!;
    expect(lexical.in).toBe(123);
    expect(lexical.out).toBe(3);
    const filter = result.trace.stages.find((s) => s.name === 'filter')!;
    expect(filter.note).toMatch(/inside the legs/);
  });

  it('excludes memories whose validUntil has passed, by the engine clock', async () => {
    let now = NOW;
    const engine = await createEngine({ embedder: testEmbedder(), clock: () => now });
    await engine.add([{ id: 'promo', text: 'discount code SPRING', validUntil: NOW + DAY_MS }]);
    expect((await engine.search('discount code')).hits.map((h) => h.id)).toEqual(['promo']);
    now = NOW + 2 * DAY_MS;
    expect((await engine.search('discount code')).hits).toEqual([]);
    expect((await engine.search('discount code', { now: NOW })).hits).toHaveLength(1);
  });

  it('drops near-duplicates (raw keeps them) and applies minScore', async () => {
    // Supersede off, so the two that say the same thing are both stored and the search drops one.
    const engine = await createEngine({ clock: () => NOW, supersede: false });
    await engine.add([
      { id: 'one', text: 'The meeting moved to Tuesday' },
      { id: 'two', text: 'the meeting  moved to tuesday' },
      { id: 'three', text: 'The meeting room is booked' },
    ]);
    const diverse = await engine.search('meeting tuesday');
    expect(diverse.hits.map((h) => h.id)).toEqual(['one', 'three']);
    const raw = await engine.search('meeting tuesday', { raw: true });
    expect(raw.hits.map((h) => h.id).sort()).toEqual(['one', 'three', 'two']);
    expect(raw.trace.stages.find((s) => s.name === 'diversify')!.note).toBe('raw: top k by score');
    const top = raw.hits[0]!.score;
    expect((await engine.search('meeting tuesday', { minScore: top })).hits.map((h) => h.id)).toEqual([raw.hits[0]!.id]);
    expect((await engine.search('meeting tuesday', { minScore: top, raw: true })).hits).toHaveLength(3);
  });

  it('merges engine default search options under per-call options', async () => {
    const { engine } = await engineWith(memories, { search: { k: 1, filter: { project: 'nope' } } });
    expect((await engine.search('auth')).hits).toEqual([]);
    expect((await engine.search('auth', { filter: { project: undefined } })).hits).toHaveLength(1);
  });
});

describe('supersede, touch, update, remove, pin', () => {
  it('a near-identical newer memory supersedes the older one; deepRecall brings it back at half score', async () => {
    const { engine } = await engineWith([{ id: 'v1', text: 'The staging server is at 10.0.0.5', createdAt: daysAgo(5) }]);
    await engine.add({ id: 'v2', text: 'the staging server is at 10.0.0.5', createdAt: daysAgo(1) });
    expect((await engine.get('v1'))!.supersededBy).toBe('v2');
    expect((await engine.get('v2'))!.supersededBy).toBeUndefined();
    const normal = await engine.search('staging server');
    expect(normal.hits.map((h) => h.id)).toEqual(['v2']);
    const deep = await engine.search('staging server', { deepRecall: true, diversity: false });
    const old = deep.hits.find((h) => h.id === 'v1')!;
    expect(old.explain.superseded).toBe(true);
    expect(old.score).toBeCloseTo(old.explain.fused * 0.5 * old.explain.recency * old.explain.boost, 12);
  });

  it('a chain of updates to one fact leaves exactly one live version, even when superseded copies outnumber the probe', async () => {
    const others = ['Lunch with Ana on Friday', 'Invoice 42 paid in March', 'The cat prefers the blue bowl'];
    const { engine } = await engineWith(others.map((text, i) => ({ id: `o${i}`, text, createdAt: daysAgo(30) })));
    // Identical texts tie at cosine 1, so the live version can sit behind any number of superseded ones.
    for (let i = 0; i < 12; i++) {
      await engine.add({ id: `v${i}`, text: 'The staging server is at 10.0.0.5', createdAt: daysAgo(20 - i) });
      const versions = await Promise.all(Array.from({ length: i + 1 }, (_, j) => engine.get(`v${j}`)));
      expect(versions.filter((m) => m!.supersededBy === undefined).map((m) => m!.id)).toEqual([`v${i}`]);
    }
  });

  it('supersedes within one batch, keeps the later createdAt, and can be turned off', async () => {
    const { engine } = await engineWith([
      { id: 'late', text: 'the wifi password is hunter2', createdAt: daysAgo(1) },
      { id: 'early', text: 'The wifi password is hunter2', createdAt: daysAgo(9) },
      { id: 'other', text: 'lunch is at noon' },
    ]);
    expect((await engine.get('early'))!.supersededBy).toBe('late');
    expect((await engine.get('late'))!.supersededBy).toBeUndefined();
    expect((await engine.get('other'))!.supersededBy).toBeUndefined();
    const off = await engineWith(
      [{ id: 'a', text: 'same words here' }, { id: 'b', text: 'same words here' }],
      { supersedeThreshold: false },
    );
    expect((await off.engine.get('a'))!.supersededBy).toBeUndefined();
  });

  it('removing the newer memory brings the superseded one back', async () => {
    const { engine } = await engineWith([{ id: 'old', text: 'door code 1234', createdAt: daysAgo(3) }]);
    await engine.add({ id: 'new', text: 'door code 1234', createdAt: daysAgo(1) });
    expect(await engine.remove('new')).toBe(1);
    expect((await engine.get('old'))!.supersededBy).toBeUndefined();
    expect((await engine.search('door code')).hits.map((h) => h.id)).toEqual(['old']);
  });

  it('touches returned hits (accessCount + 1, lastAccessedAt = now) unless touch: false', async () => {
    const store = memoryStore();
    const engine = await createEngine({ store, embedder: testEmbedder(), clock: () => NOW });
    await engine.add([{ id: 'a', text: 'bananas are yellow' }, { id: 'b', text: 'the sky is blue' }]);
    // neighbours: false: 'b' was written in the same instant, so neighbour support over time would return (and touch) it.
    const result = await engine.search('bananas', { now: NOW + 5, mode: 'lexical', neighbours: false });
    expect(result.hits[0]!.memory.accessCount).toBe(1);
    expect((await engine.get('a'))!).toMatchObject({ accessCount: 1, lastAccessedAt: NOW + 5 });
    await engine.search('bananas', { touch: false });
    expect((await engine.get('a'))!.accessCount).toBe(1);
    await engine.flush();
    const stored = (await store.loadRecords()).find((r) => r.id === 'a')!;
    expect(stored).toMatchObject({ accessCount: 1, lastAccessedAt: NOW + 5 });
    expect((await engine.get('b'))!.accessCount).toBe(0);
  });

  it('writes touch bookkeeping once searches pause, and at most 10 s apart during a steady stream of them', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const inner = memoryStore();
      const touchWrites: number[] = [];
      let searching = false;
      const store: Store = {
        ...inner,
        loadRecords: inner.loadRecords,
        write: async (change) => {
          if (searching) touchWrites.push(performance.now());
          return inner.write(change);
        },
      };
      const engine = await createEngine({ store, clock: () => NOW });
      await engine.add([{ id: 'a', text: 'bananas are yellow' }]);
      searching = true;
      const start = performance.now();
      for (let t = 0; t < 25; t++) {
        await engine.search('bananas'); // at 0, 500, …, 12,000 ms
        await vi.advanceTimersByTimeAsync(500);
      }
      expect(touchWrites.map((t) => t - start)).toEqual([10_000]);
      await vi.advanceTimersByTimeAsync(1000); // the pause after the last search
      expect(touchWrites.map((t) => t - start)).toEqual([10_000, 13_000]);
      expect((await store.loadRecords())[0]!.accessCount).toBe(25);
      await engine.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('update re-embeds a changed text and re-indexes tags; null clears optional fields', async () => {
    const { engine, embedder } = await engineWith([{ id: 'a', text: 'cats purr loudly', project: 'pets', tags: ['animal'] }]);
    let calls = embedder.calls.length;
    const updated = await engine.update('a', { text: 'dogs bark loudly', project: null, tags: ['noise'] });
    expect(updated).toMatchObject({ id: 'a', text: 'dogs bark loudly', tags: ['noise'], updatedAt: NOW });
    expect(updated.project).toBeUndefined();
    expect(embedder.calls.length).toBe(calls + 1);
    expect((await engine.search('cats', { mode: 'lexical' })).hits).toEqual([]);
    expect((await engine.search('noise', { mode: 'lexical' })).hits.map((h) => h.id)).toEqual(['a']);
    expect((await engine.search('dogs bark loudly', { mode: 'vector' })).hits[0]!.explain.cosine).toBeCloseTo(1, 6);
    calls = embedder.calls.length;
    await engine.update('a', { priority: 2 });
    expect(embedder.calls.length).toBe(calls); // no text change, no embedding
  });

  it('pin sets and clears pinned and boosts the score', async () => {
    const { engine } = await engineWith([{ id: 'a', text: 'pin me' }]);
    expect((await engine.pin('a')).pinned).toBe(true);
    expect((await engine.search('pin')).hits[0]!.explain.boost).toBeCloseTo(1.1, 12);
    expect((await engine.pin('a', false)).pinned).toBe(false);
  });

  it('remove takes one id or many, ignores unknown ids, and clears both indexes', async () => {
    const { engine } = await engineWith([{ id: 'a', text: 'alpha one' }, { id: 'b', text: 'beta two' }, { id: 'c', text: 'gamma three' }]);
    expect(await engine.remove(['a', 'zzz', 'a'])).toBe(1);
    expect(await engine.remove('b')).toBe(1);
    expect(await engine.remove('b')).toBe(0);
    expect(await engine.count()).toBe(1);
    expect((await engine.search('alpha beta', { mode: 'lexical' })).hits).toEqual([]);
    expect((await engine.search('alpha one', { mode: 'vector', k: 10 })).hits.map((h) => h.id)).toEqual(['c']);
  });

  it('concurrent calls are applied one at a time without losing any', async () => {
    const { engine } = await engineWith();
    const batches = Array.from({ length: 10 }, (_, b) => Array.from({ length: 20 }, (_, i) => ({ text: `batch ${b} item ${i} unique${b * 100 + i}` })));
    const results = await Promise.all([...batches.map((batch) => engine.add(batch)), engine.search('batch')]);
    expect(await engine.count()).toBe(200);
    expect(new Set(results.slice(0, 10).flat()).size).toBe(200);
  });
});

describe('export, import, close, reopen and re-indexing', () => {
  it('a new embedder, its vectors and its re-indexing progress appear together, never the embedder alone', async () => {
    const inner = memoryStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const store: Store = {
      ...inner,
      loadVectors: async (space, dim) => {
        await gate;
        return inner.loadVectors(space, dim);
      },
      loadVectorChunks: async (space, dim, onChunk) => {
        await gate;
        return inner.loadVectorChunks!(space, dim, onChunk);
      },
    };
    const engine = await createEngine({ store, embedder: null });
    await engine.add([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    const attaching = engine.setEmbedder(testEmbedder());
    await new Promise((resolve) => setTimeout(resolve, 10));
    // While its stored vectors load, the previous state (no embedder) still answers.
    expect(engine.embedder).toBeNull();
    expect(engine.indexing()).toBeNull();
    expect((await engine.search('one')).trace.mode).toBe('lexical');
    release();
    await attaching;
    expect(engine.embedder).not.toBeNull();
    expect(engine.indexing()).toEqual({ done: 0, total: 3 });
    await engine.ready;
    expect(engine.indexing()).toBeNull();
  });

  it('export → import into a fresh engine reproduces every record; import upserts and reuses vectors', async () => {
    const { engine } = await engineWith([
      { id: 'a', text: 'alpha memory', tags: ['x'], meta: { n: 1 } },
      { id: 'b', text: 'beta memory', project: 'p' },
    ]);
    await engine.search('alpha');
    const exported = await engine.export();
    const target = testEmbedder();
    const fresh = await createEngine({ embedder: target, clock: () => NOW });
    expect(await fresh.import(exported)).toEqual(['a', 'b']);
    expect((await fresh.export()).sort((x, y) => (x.id < y.id ? -1 : 1))).toEqual(exported.sort((x, y) => (x.id < y.id ? -1 : 1)));
    const calls = target.calls.flat().length;
    await fresh.import([{ ...exported[0]!, priority: 2 }, { id: 'c', text: 'gamma memory' }]);
    expect(target.calls.flat().length - calls).toBe(1); // only the new text was embedded
    expect((await fresh.get(exported[0]!.id))!.priority).toBe(2);
    expect(await fresh.count()).toBe(3);
    // a dangling supersededBy is dropped rather than hiding the memory forever
    await fresh.import([{ id: 'd', text: 'delta', supersededBy: 'ghost' } as never]);
    expect((await fresh.get('d'))!.supersededBy).toBeUndefined();
  });

  it('close closes the store, is idempotent, and every later call rejects with CLOSED', async () => {
    const store = memoryStore();
    const engine = await createEngine({ store });
    await engine.add({ id: 'a', text: 'x' });
    await engine.close();
    await engine.close();
    await expect(store.count()).rejects.toMatchObject({ code: 'CLOSED' });
    const calls: (() => Promise<unknown>)[] = [
      () => engine.add({ text: 'y' }), () => engine.search('x'), () => engine.get('a'), () => engine.update('a', { text: 'z' }),
      () => engine.remove('a'), () => engine.pin('a'), () => engine.count(), () => engine.export(), () => engine.import([]),
      () => engine.setEmbedder(null),
    ];
    for (const call of calls) {
      let thrown: unknown;
      try {
        await call();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'CLOSED', message: expect.stringMatching(/^Engram: /) });
    }
  });

  it('reopening with the same embedder loads stored vectors without embedding', async () => {
    const store = reopenable();
    const first = await createEngine({ store, embedder: testEmbedder(), supersedeThreshold: false });
    await first.add(Array.from({ length: 50 }, (_, i) => ({ text: `stored memory ${i}` })));
    const embedder = testEmbedder();
    const second = await createEngine({ store, embedder });
    expect(second.indexing()).toBeNull();
    expect(embedder.calls).toEqual([]);
    expect(await second.count()).toBe(50);
    const result = await second.search('stored memory 7', { mode: 'vector', k: 50, diversity: false });
    expect(result.hits).toHaveLength(50);
    expect(result.hits.find((h) => h.text === 'stored memory 7')!.explain.cosine).toBeCloseTo(1, 6);
  });

  it('a new embedder re-embeds in the background: lexical meanwhile, then hybrid; old vectors dropped', async () => {
    const store = reopenable();
    const old = testEmbedder({ id: 'old', dim: 32 });
    const first = await createEngine({ store, embedder: old });
    await first.add(Array.from({ length: 70 }, (_, i) => ({ text: `memory about topic ${i}` })));

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inner = testEmbedder({ id: 'new', dim: 48 });
    const slow: Embedder = { id: inner.id, dim: inner.dim, embed: async (texts) => (await gate, inner.embed(texts)) };
    const progress: { done: number; total: number }[] = [];
    const second = await createEngine({ store, embedder: slow, embedBatchSize: 16, onIndexProgress: (p) => progress.push(p) });
    expect(second.indexing()).toEqual({ done: 0, total: 70 });
    const during = await second.search('topic 5');
    expect(during.trace.mode).toBe('lexical');
    expect(during.trace.stages[0]!.note).toContain('still being built');
    expect(during.hits.length).toBeGreaterThan(0);
    release();
    await second.ready;
    expect(second.indexing()).toBeNull();
    // Batches start at 8 texts and grow to embedBatchSize (BatchSizer); progress counts every one.
    const sizes = inner.calls.map((c) => c.length);
    expect(sizes[0]).toBe(8);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16);
    expect(progress.map((p) => p.done)).toEqual(sizes.map((_, i) => sizes.slice(0, i + 1).reduce((a, b) => a + b, 0)));
    expect(progress.at(-1)).toEqual({ done: 70, total: 70 });
    expect((await second.search('topic 5')).trace.mode).toBe('hybrid');
    await second.flush();
    expect((await store.loadVectors('new', 48)).ids).toHaveLength(70);
    expect((await store.loadVectors('old', 32)).ids).toHaveLength(0);
  });

  it('adds and removes during re-indexing are not lost or resurrected', async () => {
    const store = reopenable();
    const first = await createEngine({ store });
    await first.add(Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, text: `lexical only memory ${i}` })));
    const embedder = testEmbedder();
    const engine = await createEngine({ store, embedder, embedBatchSize: 8 });
    const added = engine.add({ id: 'fresh', text: 'added while indexing' });
    const removed = engine.remove(['m0', 'm39']);
    await Promise.all([added, removed, engine.ready]);
    expect(await engine.count()).toBe(39);
    const vectors = await store.loadVectors(embedder.id, embedder.dim);
    expect(vectors.ids.sort()).toEqual((await engine.export()).map((r) => r.id).sort());
  });

  it('setEmbedder swaps to lexical-only and back', async () => {
    const { engine } = await engineWith([{ text: 'one memory' }, { text: 'two memory' }]);
    await engine.setEmbedder(null);
    expect(engine.embedder).toBeNull();
    expect((await engine.search('memory')).trace.mode).toBe('lexical');
    const next = testEmbedder({ id: 'next', dim: 16 });
    await engine.setEmbedder(next);
    await engine.ready;
    expect((await engine.search('memory')).trace.mode).toBe('hybrid');
    expect(next.calls[0]).toHaveLength(2); // re-indexing embedded both memories in one batch
  });

  it('a failing re-index keeps search lexical and rejects ready with EMBEDDER_FAILED', async () => {
    const store = reopenable();
    const first = await createEngine({ store });
    await first.add([{ text: 'needs a vector' }]);
    const errors: unknown[] = [];
    const broken: Embedder = { id: 'broken', dim: 4, embed: async () => Promise.reject(new Error('gpu lost')) };
    const engine = await createEngine({ store, embedder: broken, onBackgroundError: (e) => errors.push(e) });
    await expect(engine.ready).rejects.toMatchObject({ code: 'EMBEDDER_FAILED' });
    expect(errors).toHaveLength(1);
    expect((await engine.search('vector')).trace.mode).toBe('lexical');
    expect(await snapshot(store)).toMatchObject({ records: [expect.objectContaining({ text: 'needs a vector' })] });
  });
});
