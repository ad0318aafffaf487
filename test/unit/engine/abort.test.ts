/**
 * `signal` on the engine's long calls, in Node: the real engine on the in-memory store, the bag-of-words embedder
 * slowed down so an abort lands between its batches, and a language model that honours its signal. An abort before
 * the commit rejects with ABORTED and leaves the store as it was; one after it is too late and the call resolves.
 */
import { describe, expect, it } from 'vitest';
import { createEmbedder, createEngine, memoryStore, type Embedder, type Engine, type EngineOptions, type LanguageModel, type Progress } from '../../../src/node.js';
import { EngramError, ErrorCode } from '../../../src/errors.js';
import { functionModel } from '../../../src/llm/function-model.js';
import type { Store } from '../../../src/store/store.js';
import { testEmbedder, type TestEmbedder } from '../helpers/embedder.js';
import { formationModel } from '../helpers/formation-llm.js';

const T0 = Date.UTC(2026, 10, 20, 10);

/** The bag-of-words embedder, each batch taking `ms` and calling `onBatch` (the batch's number) as it starts. */
function slowEmbedder(ms: number, onBatch: (n: number) => void = () => {}): TestEmbedder {
  const inner = testEmbedder();
  return {
    ...inner,
    async embed(texts) {
      onBatch(inner.calls.length + 1);
      await new Promise((resolve) => setTimeout(resolve, ms));
      return inner.embed(texts);
    },
  };
}

const notes = (n: number, prefix = 'note') => Array.from({ length: n }, (_, i) => ({ text: `${prefix} number ${i} about topic ${i % 7}` }));

async function engineWith(embedder: Embedder | null, extra: Partial<EngineOptions> = {}): Promise<{ engine: Engine; store: Store }> {
  const store = extra.store ?? memoryStore();
  return { engine: await createEngine({ store, embedder, embedBatchSize: 4, clock: () => T0, ...extra }), store };
}

/** What the store holds (not the engine's in-memory view). */
async function storedIds(store: Store): Promise<string[]> {
  return (await store.loadRecords()).map((r) => r.id);
}

const aborted = (method: string) => expect.objectContaining({ code: ErrorCode.ABORTED, details: expect.objectContaining({ method }) });

describe('add and import', () => {
  it('an aborted signal is refused before anything runs', async () => {
    const embedder = slowEmbedder(1);
    const { engine, store } = await engineWith(embedder);
    await expect(engine.add(notes(3), { signal: AbortSignal.abort() })).rejects.toEqual(aborted('add'));
    await expect(engine.import(notes(3), { signal: AbortSignal.abort() })).rejects.toEqual(aborted('import'));
    expect(embedder.calls).toHaveLength(0);
    expect(await engine.count()).toBe(0);
    expect(await storedIds(store)).toEqual([]);
  });

  it('an abort between embedding batches stops before the next batch and writes nothing', async () => {
    const controller = new AbortController();
    const embedder = slowEmbedder(15, (n) => n === 2 && controller.abort());
    const { engine, store } = await engineWith(embedder);
    const seen: Progress[] = [];
    const error = await engine.add(notes(20), { signal: controller.signal, onProgress: (p) => seen.push(p) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngramError);
    expect(error).toEqual(aborted('add'));
    // Batch 2 had started when the signal aborted: it ran to its end, and no third one started.
    expect(embedder.calls).toHaveLength(2);
    expect(seen).toEqual([{ done: 4, total: 20 }, { done: 8, total: 20 }]);
    expect(await engine.count()).toBe(0);
    expect(await storedIds(store)).toEqual([]);
    expect((await engine.search('note number topic', { touch: false })).hits).toEqual([]);
    // The engine goes on: the same memories are added with a signal that never aborts.
    expect(await engine.add(notes(20), { signal: new AbortController().signal })).toHaveLength(20);
    expect(await storedIds(store)).toHaveLength(20);
  });

  it('an import aborted while embedding leaves the stored memories as they were', async () => {
    const controller = new AbortController();
    const embedder = slowEmbedder(10, (n) => n === 3 && controller.abort());
    const { engine, store } = await engineWith(embedder);
    await engine.import([{ id: 'kept', text: 'the original text', createdAt: T0 }]);
    const records = [{ id: 'kept', text: 'a changed text', createdAt: T0 }, ...notes(16, 'imported').map((n, i) => ({ ...n, id: `i${i}`, createdAt: T0 }))];
    await expect(engine.import(records, { signal: controller.signal })).rejects.toEqual(aborted('import'));
    expect(await storedIds(store)).toEqual(['kept']);
    expect((await store.loadRecords())[0]!.text).toBe('the original text');
    expect((await engine.get('kept'))!.text).toBe('the original text');
  });

  it('an add waiting behind another write is aborted at once, and never runs', async () => {
    const embedder = slowEmbedder(20);
    const { engine, store } = await engineWith(embedder);
    const first = engine.add(notes(12, 'first'));
    const controller = new AbortController();
    const second = engine.add(notes(4, 'second'), { signal: controller.signal });
    let firstDone = false;
    void first.then(() => (firstDone = true));
    controller.abort();
    await expect(second).rejects.toEqual(aborted('add'));
    expect(firstDone).toBe(false); // rejected while the first add was still embedding
    expect(await first).toHaveLength(12);
    await engine.flush();
    const texts = (await engine.export()).map((r) => r.text);
    expect(texts).toHaveLength(12);
    expect(texts.some((t) => t.startsWith('second'))).toBe(false);
    expect(await storedIds(store)).toHaveLength(12);
  });

  it('an abort once the commit has begun is too late: the call resolves and its memories are stored', async () => {
    const controller = new AbortController();
    const { engine, store } = await engineWith(slowEmbedder(1));
    const write = store.write.bind(store);
    store.write = async (change) => {
      controller.abort(); // while the add's one store write runs
      return write(change);
    };
    const ids = await engine.add(notes(6), { signal: controller.signal });
    expect(controller.signal.aborted).toBe(true);
    expect(ids).toHaveLength(6);
    expect((await storedIds(store)).sort()).toEqual([...ids].sort());
  });

  it('progress reaches its total only once the memories are stored; an abort in that last report changes nothing', async () => {
    const controller = new AbortController();
    const { engine, store } = await engineWith(slowEmbedder(1));
    const seen: { progress: Progress; stored: number }[] = [];
    const reports: Promise<void>[] = [];
    const ids = await engine.add(notes(9), {
      signal: controller.signal,
      onProgress: (progress) => {
        reports.push(storedIds(store).then((stored) => void seen.push({ progress, stored: stored.length })));
        if (progress.done === progress.total) controller.abort();
      },
    });
    await Promise.all(reports);
    expect(ids).toHaveLength(9);
    expect(seen).toEqual([{ progress: { done: 4, total: 9 }, stored: 0 }, { progress: { done: 8, total: 9 }, stored: 0 }, { progress: { done: 9, total: 9 }, stored: 9 }]);
    expect(await storedIds(store)).toHaveLength(9);
  });

  it('refuses a signal that is not an AbortSignal, and unknown option names', async () => {
    const { engine } = await engineWith(null);
    for (const method of ['add', 'import'] as const) {
      await expect(engine[method]([{ text: 'x' }], { signal: { aborted: true } as unknown as AbortSignal })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT, message: expect.stringContaining('AbortSignal') });
      await expect(engine[method]([{ text: 'x' }], { sginal: new AbortController().signal } as object)).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT, details: { suggestion: 'signal' } });
    }
    expect(await engine.count()).toBe(0);
  });
});

/** A model that answers after `ms` unless its signal aborts first, and records whether the signal it got aborted. */
function patientModel(ms: number, answer: string, onCall: () => void = () => {}): LanguageModel & { signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const model = functionModel(async (_prompt, { signal }) => {
    if (signal) signals.push(signal);
    onCall();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
    });
    return answer;
  });
  return Object.assign(model, { signals });
}

describe('remember and consolidate', () => {
  it('remember: an abort during the model call reaches the model, and nothing is stored (not even the turns)', async () => {
    const controller = new AbortController();
    const llm = patientModel(5_000, JSON.stringify({ facts: [] }), () => setTimeout(() => controller.abort(), 10));
    const { engine, store } = await engineWith(testEmbedder(), { llm });
    const started = performance.now();
    await expect(engine.remember('I live in Lisbon', { signal: controller.signal })).rejects.toEqual(aborted('remember'));
    expect(performance.now() - started).toBeLessThan(4_000); // the 5 s model call was cut short
    expect(llm.signals).toHaveLength(1);
    expect(llm.signals[0]!.aborted).toBe(true);
    expect(await storedIds(store)).toEqual([]);
  });

  it('remember: without an abort the same call stores its turns and facts', async () => {
    const llm = formationModel({ extract: (turns) => turns.map((t) => ({ text: 'The user lives in Lisbon', turns: [t.index] })) });
    const { engine } = await engineWith(testEmbedder(), { llm });
    const result = await engine.remember('I live in Lisbon', { signal: new AbortController().signal });
    expect(result.added.map((a) => a.text)).toContain('The user lives in Lisbon');
    expect(await engine.count()).toBe(2);
  });

  it('remember: an aborted signal or a bad one is refused', async () => {
    const { engine, store } = await engineWith(testEmbedder(), { llm: null });
    await expect(engine.remember('I live in Lisbon', { signal: AbortSignal.abort() })).rejects.toEqual(aborted('remember'));
    await expect(engine.remember('I live in Lisbon', { signal: 'stop' as unknown as AbortSignal })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
    expect(await storedIds(store)).toEqual([]);
  });

  it('consolidate: an abort during a summary leaves every fold and summary unwritten', async () => {
    const controller = new AbortController();
    const llm = patientModel(5_000, JSON.stringify({ summary: 'a summary' }), () => controller.abort());
    const { engine } = await engineWith(testEmbedder(), { llm });
    await engine.import([
      { id: 'old', text: 'the user likes green tea in the morning', createdAt: T0 },
      { id: 'new', text: 'the user likes green tea in the morning', createdAt: T0 + 1 },
      { id: 'g1', text: 'grandma garden tulips spring', createdAt: T0 },
      { id: 'g2', text: 'grandma garden roses summer', createdAt: T0 + 1 },
      { id: 'g3', text: 'grandma garden orchids greenhouse', createdAt: T0 + 2 },
    ]);
    await expect(engine.consolidate({ clusterSimilarity: 0.3, signal: controller.signal })).rejects.toEqual(aborted('consolidate'));
    expect(llm.signals[0]!.aborted).toBe(true);
    expect((await engine.export()).filter((r) => r.supersededBy !== undefined)).toEqual([]);
    expect(await engine.count()).toBe(5);
    // Without the abort the fold is written.
    expect((await engine.consolidate({ summarize: false, signal: new AbortController().signal })).folded).toEqual([{ id: 'old', into: 'new' }]);
  });
});

describe('createEmbedder', () => {
  it('rejects with ABORTED for an aborted signal, and when aborted while the model loads', async () => {
    await expect(createEmbedder({ signal: AbortSignal.abort() })).rejects.toEqual(aborted('createEmbedder'));
    const controller = new AbortController();
    const loading = createEmbedder({ signal: controller.signal });
    controller.abort();
    await expect(loading).rejects.toEqual(aborted('createEmbedder'));
    await expect(createEmbedder({ signal: 1 as unknown as AbortSignal })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
    // The same load, not aborted, embeds.
    const embedder = await createEmbedder({ signal: new AbortController().signal });
    expect((await embedder.embed(['tea']))[0]).toHaveLength(embedder.dim);
    await embedder.dispose();
  });
});
