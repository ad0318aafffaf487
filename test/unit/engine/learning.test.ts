/**
 * Learning from use through the engine (in Node, on the in-memory store): every pair of direct hits strengthened,
 * the `associate` stage's score, reinforcement and core promotion, cold memories warmed, provenance links, removal,
 * reopen, and a failed bookkeeping write that leaves the store as it was.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, memoryStore, type Engine, type EngineOptions, type MemoryInput, type Store } from '../../../src/index.js';
import { DAY_MS } from '../../../src/util/time.js';
import type { EngramError } from '../../../src/errors.js';
import { bagOfWordsVector, testEmbedder } from '../helpers/embedder.js';
import { faultyStore, reopenable, snapshot } from '../helpers/stores.js';

const NOW = Date.UTC(2026, 0, 1);

const MEMORIES: MemoryInput[] = [
  { id: 'A', text: 'apple fruit orchard' },
  { id: 'B', text: 'the banana plantation' },
  { id: 'C', text: 'cherry blossom festival' },
  { id: 'D', text: 'diesel engine repair' },
  { id: 'E', text: 'elephant safari trip' },
  { id: 'F', text: 'fiddle music lesson' },
  { id: 'H', text: 'the dog the cat' },
];

async function engineOn(store: Store, now: () => number = () => NOW, errors: EngramError[] = [], extra: Partial<EngineOptions> = {}): Promise<Engine> {
  const engine = await createEngine({ store, embedder: testEmbedder(), clock: now, supersedeThreshold: false, onBackgroundError: (e) => errors.push(e), ...extra });
  if ((await engine.count()) === 0) await engine.add(MEMORIES.map((m) => ({ ...m, createdAt: NOW - 30 * DAY_MS })));
  return engine;
}

const ids = async (engine: Engine, query: string, options: Parameters<Engine['search']>[1] = {}) => (await engine.search(query, options)).hits.map((h) => h.id);

describe('learning through the engine', () => {
  it('strengthens every pair of direct hits by 0.1 per search, and not the associative ones', async () => {
    const engine = await engineOn(memoryStore());
    expect(await ids(engine, 'apple banana cherry', { k: 3 })).toEqual(expect.arrayContaining(['A', 'B', 'C']));
    await ids(engine, 'apple banana cherry', { k: 3 });
    for (const id of ['A', 'B', 'C']) {
      const related = await engine.related(id);
      expect(related.map((r) => r.id).sort()).toEqual(['A', 'B', 'C'].filter((x) => x !== id));
      for (const r of related) expect(r.weight).toBeCloseTo(0.2, 12);
    }
    expect(await engine.related('D')).toEqual([]);
    expect((await engine.stats()).associations).toBe(3);
    await expect(engine.related('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('associate: a memory associated with a direct hit comes in scored fused(via) × calibrated cosine × weight', async () => {
    const engine = await engineOn(memoryStore());
    for (let i = 0; i < 10; i++) await ids(engine, 'apple banana', { k: 2 }); // weight 1
    // 'the' is a stop word for the lexical leg: B matches the query only through the vector leg.
    // Memories made at one moment are each other's time neighbours: that support would mask the association.
    const without = await engine.search('apple the', { k: 2, touch: false, neighbours: false });
    expect(without.hits.find((h) => h.id === 'B')?.explain.associative).toBeUndefined();
    const result = await engine.search('apple the', { k: 2, touch: false, neighbours: false, associations: { floor: 0.3, bridges: false, bridgeMinCosine: 0.3 } });
    const [a, b] = result.hits;
    expect(a!.id).toBe('A');
    expect(b!.id).toBe('B');
    expect(b!.explain.associative).toMatchObject({ via: 'A' });
    expect(b!.explain.associative!.weight).toBeCloseTo(1, 9);
    // without the association H (a closer vector match) is second
    expect(without.hits.map((h) => h.id)).toEqual(['A', 'H']);
    const query = bagOfWordsVector('apple the', 256);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((sum, v, i) => sum + v * y[i]!, 0);
    const cosines = MEMORIES.map((m) => dot(query, bagOfWordsVector(m.text, 256)));
    const baseline = cosines.reduce((s, c) => s + c, 0) / cosines.length;
    const calibrated = (cosines[1]! - baseline) / (1 - baseline);
    expect(b!.explain.cosine).toBeCloseTo(cosines[1]!, 6);
    expect(b!.explain.fused).toBeCloseTo(a!.explain.fused * calibrated * b!.explain.associative!.weight, 6);
    expect(b!.score).toBeCloseTo(b!.explain.fused * b!.explain.recency * b!.explain.boost, 9);
    expect(result.trace.stages.find((s) => s.name === 'associate')).toMatchObject({ out: 1 });
  });

  it('associate follows an association only while its weight after decay is at or above the floor', async () => {
    let now = NOW;
    const engine = await engineOn(memoryStore(), () => now);
    for (let i = 0; i < 10; i++) await ids(engine, 'apple banana', { k: 2 }); // weight 1 at NOW
    const search = (floor: number) => engine.search('apple the', { k: 2, touch: false, neighbours: false, associations: { floor, bridges: false, bridgeMinCosine: 0 } });
    expect((await search(0.95)).hits[1]!.explain.associative?.via).toBe('A');
    now += 5 * DAY_MS; // 1 · e^(−5/90) = 0.946
    expect((await search(0.95)).hits.some((h) => h.explain.associative)).toBe(false);
    expect((await search(0.3)).hits[1]!.explain.associative?.weight).toBeCloseTo(Math.exp(-5 / 90), 9);
    now += 200 * DAY_MS; // 0.07
    expect((await search(0.3)).hits.map((h) => h.id)).toEqual(['A', 'H']);
  });

  it('reinforces hits (stability, access, sessions) and promotes a well-used memory to core', async () => {
    let now = NOW;
    const engine = await engineOn(memoryStore(), () => now);
    let hit = (await engine.search('elephant', { k: 1, session: 's0' })).hits[0]!;
    // first retrieval: 30 days since creation, factor 2: 0.3 + 0.2
    expect(hit.memory).toMatchObject({ id: 'E', accessCount: 1, lastAccessedAt: NOW, sessions: ['s0'] });
    expect(hit.memory.stability).toBeCloseTo(0.5, 12);
    for (let i = 1; i < 10; i++) {
      now += 7 * DAY_MS;
      hit = (await engine.search('elephant', { k: 1, session: `s${i % 3}` })).hits[0]!;
    }
    expect(hit.memory).toMatchObject({ accessCount: 10, stability: 1, core: true });
    expect(hit.memory.sessions).toEqual(['s1', 's2', 's0']);
    expect((await engine.stats()).core).toBe(1);
    expect(await ids(engine, 'elephant diesel', { k: 5, filter: { core: true }, touch: false })).toEqual(['E']);
    const notCore = await ids(engine, 'elephant diesel', { k: 5, filter: { core: false }, touch: false });
    expect(notCore[0]).toBe('D');
    expect(notCore).not.toContain('E');
    // reinforce: false counts the access only
    const plain = (await engine.search('diesel', { k: 1, reinforce: false })).hits[0]!.memory;
    expect(plain).toMatchObject({ id: 'D', accessCount: 1 });
    expect(plain.stability).toBeUndefined();
    expect(await engine.related('D')).toEqual([]);
  });

  it('marks a cold memory reached by a search, and retrieving it makes it hot again', async () => {
    let now = NOW;
    const engine = await engineOn(memoryStore(), () => now);
    now += 400 * DAY_MS;
    expect((await engine.search('fiddle', { k: 1 })).hits[0]!.explain.cold).toBe(true);
    expect((await engine.search('fiddle', { k: 1 })).hits[0]!.explain.cold).toBeUndefined();
  });

  it('a cold memory reached through an association is scored, included, and moved back to hot', async () => {
    let now = NOW;
    // With the default constants an association fades (90 days) before its memories go cold (242 days here): it
    // takes slower-fading associations for a cold memory to be reached through one.
    const engine = await engineOn(memoryStore(), () => now, [], { learning: { associationDecayDays: 10_000 } });
    for (let i = 0; i < 10; i++) await ids(engine, 'apple banana', { k: 2 });
    now += 400 * DAY_MS;
    const search = () => engine.search('apple the', { k: 2, neighbours: false, associations: { floor: 0.3, bridges: false } });
    const first = (await search()).hits[1]!;
    expect(first).toMatchObject({ id: 'B', explain: { associative: { via: 'A' }, cold: true } });
    expect(first.memory.lastAccessedAt).toBe(now);
    const again = (await search()).hits[1]!;
    expect(again.id).toBe('B');
    expect(again.explain.cold).toBeUndefined();
  });

  it('writes reinforcement in the background, in one store write, and it survives a reopen', async () => {
    const inner = memoryStore();
    const store = faultyStore(reopenable(inner));
    const engine = await engineOn(store);
    const writes = store.writes;
    const result = await engine.search('apple banana cherry', { k: 3, session: 'one' });
    expect(result.trace.stages.at(-1)).toMatchObject({ name: 'reinforce', in: 3, out: 3 });
    expect(store.writes).toBe(writes); // not yet: the answer did not wait for it
    await engine.flush();
    expect(store.writes).toBe(writes + 1);
    const related = await engine.related('A');
    const records = await Promise.all(['A', 'B', 'C'].map((id) => engine.get(id)));
    await engine.close();
    const reopened = await engineOn(reopenable(inner));
    expect(await reopened.related('A')).toEqual(related);
    expect(await Promise.all(['A', 'B', 'C'].map((id) => reopened.get(id)))).toEqual(records);
  });

  it('a failed bookkeeping write changes nothing stored and is reported', async () => {
    const errors: EngramError[] = [];
    const store = faultyStore();
    const engine = await engineOn(store, () => NOW, errors);
    const before = await snapshot(store);
    const edgesBefore = await store.loadAssociations?.();
    store.failWrites = new Error('disk full');
    await engine.search('apple banana cherry', { k: 3 });
    await engine.flush();
    expect(errors.map((e) => e.code)).toEqual(['STORE_FAILED']);
    expect(await snapshot(store)).toEqual(before);
    expect(await store.loadAssociations?.()).toEqual(edgesBefore);
  });

  it('removing a memory removes its associations and links, in memory and in the store', async () => {
    const inner = memoryStore();
    const engine = await engineOn(reopenable(inner));
    await ids(engine, 'apple banana cherry', { k: 3 });
    await engine.link('A', 'B', 'derives_from');
    await engine.link('C', 'B', 'references');
    await engine.flush();
    expect(await engine.remove('B')).toBe(1);
    expect((await engine.related('A')).map((r) => r.id)).toEqual(['C']);
    expect((await engine.why('A')).edges).toEqual([]);
    expect((await inner.loadAssociations!()).every((e) => e.a !== 'B' && e.b !== 'B')).toBe(true);
    expect(await inner.loadLinks!()).toEqual([]);
    expect(await engine.stats()).toMatchObject({ associations: 1, links: 0 });
  });
});

describe('provenance links: link, unlink, why', () => {
  it('walks outgoing links breadth first to a depth, with each hop', async () => {
    let now = NOW;
    const engine = await engineOn(memoryStore(), () => now++);
    await engine.link('A', 'B', 'derives_from');
    await engine.link('B', 'C', 'derives_from', { confidence: 0.5 });
    await engine.link('C', 'D', 'causes');
    await engine.link('E', 'A', 'edits');
    const why = await engine.why('A', { depth: 2 });
    expect(why.root.id).toBe('A');
    expect(why.edges.map((e) => [e.from, e.to, e.kind, e.depth, e.confidence])).toEqual([
      ['A', 'B', 'derives_from', 1, 1],
      ['B', 'C', 'derives_from', 2, 0.5],
    ]);
    expect(why.memories.map((m) => m.id)).toEqual(['B', 'C']);
    expect(why.truncated).toBe(false);
    expect((await engine.why('A')).edges.map((e) => e.to)).toEqual(['B', 'C', 'D']);
    expect((await engine.why('A', { direction: 'in' })).edges.map((e) => e.from)).toEqual(['E']);
    expect((await engine.why('B', { direction: 'both', depth: 1 })).memories.map((m) => m.id).sort()).toEqual(['A', 'C']);
    expect((await engine.stats()).links).toBe(4);
    // linking again replaces; unlink by kind or all
    await engine.link('A', 'B', 'derives_from', { confidence: 0.2 });
    expect((await engine.why('A', { depth: 1 })).edges[0]!.confidence).toBe(0.2);
    await engine.link('A', 'B', 'references');
    expect(await engine.unlink('A', 'B', 'references')).toBe(1);
    expect(await engine.unlink('A', 'B')).toBe(1);
    expect(await engine.unlink('A', 'B')).toBe(0);
  });

  it('refuses bad input with stable codes, changing nothing', async () => {
    const engine = await engineOn(memoryStore());
    await expect(engine.link('A', 'nope', 'causes')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(engine.link('A', 'B', 'likes' as never)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.link('A', 'A', 'causes')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.link('A', 'B', 'causes', { confidence: 2 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.why('A', { depth: 0 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.why('A', { depth: 11 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.why('A', { direction: 'up' as never })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(engine.why('nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await engine.stats()).links).toBe(0);
  });

  it('returns at most 200 edges and says so', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(Array.from({ length: 250 }, (_, i) => ({ id: `n${i}`, text: `note ${i}` })));
    for (let i = 1; i < 250; i++) await engine.link('n0', `n${i}`, 'references');
    const why = await engine.why('n0', { depth: 1 });
    expect(why.edges).toHaveLength(200);
    expect(why.truncated).toBe(true);
  });
});

describe('validity and the learning fields on the way in and out', () => {
  it('an expired plan comes back only when asked for, at the deep-recall penalty', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add([
      { id: 'plan', text: 'plan the garden', kind: 'plan', validUntil: NOW - 1 },
      { id: 'fact', text: 'garden fact', kind: 'fact', validUntil: NOW - 1 },
      { id: 'live', text: 'garden live' },
    ]);
    expect(await ids(engine, 'garden', { touch: false })).toEqual(['live']);
    const transients = await engine.search('garden', { touch: false, includeExpiredTransients: true, raw: true });
    expect(transients.hits.map((h) => h.id).sort()).toEqual(['live', 'plan']);
    const deep = await engine.search('garden', { touch: false, deepRecall: true, includeExpiredInDeepRecall: true, raw: true });
    expect(deep.hits.map((h) => h.id).sort()).toEqual(['fact', 'live', 'plan']);
    const live = deep.hits.find((h) => h.id === 'live')!;
    const fact = deep.hits.find((h) => h.id === 'fact')!;
    expect(fact.score / fact.explain.fused).toBeCloseTo((0.5 * live.score) / live.explain.fused, 9);
  });

  it('export and import keep stability, sessions and core; add and update take core', async () => {
    const engine = await engineOn(memoryStore());
    await engine.search('apple', { k: 1, session: 'x' });
    await engine.update('B', { core: true });
    const exported = await engine.export();
    const copy = await createEngine({ clock: () => NOW });
    await copy.import(exported);
    expect(await copy.export()).toEqual(exported);
    expect((await copy.get('A'))!.stability).toBeCloseTo(0.5, 12);
    expect((await copy.stats()).core).toBe(1);
    expect((await engine.update('B', { core: null })).core).toBeUndefined();
    await expect(copy.import([{ ...exported[0]!, stability: 2 }])).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(copy.add({ text: 'x', core: 'yes' as never })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
