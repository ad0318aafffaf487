/**
 * Bad input: every case gets its error code (or a defined result) and leaves the store and the engine's
 * indexes exactly as they were.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, EngramError, isEngramError, type Embedder, type Engine, type ErrorCode } from '../../../src/index.js';
import { testEmbedder } from '../helpers/embedder.js';
import { faultyStore, snapshot, type FaultyStore } from '../helpers/stores.js';

const NOW = Date.UTC(2024, 5, 1);

interface Setup {
  engine: Engine;
  store: FaultyStore;
  embedder: Embedder;
}

/** An engine holding two memories, over a store that can be told to fail. */
async function setup(embedder: Embedder = testEmbedder(), options: Parameters<typeof createEngine>[0] = {}): Promise<Setup> {
  const store = faultyStore();
  const engine = await createEngine({ store, embedder, clock: () => NOW, ...options });
  await engine.add([
    { id: 'keep1', text: 'the first stored memory about gardens' },
    { id: 'keep2', text: 'the second stored memory about boats' },
  ]);
  return { engine, store, embedder };
}

async function codeOf(call: () => Promise<unknown>): Promise<ErrorCode | 'no error'> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(EngramError);
    expect((error as Error).message).toMatch(/^Engram: /);
    return (error as EngramError).code;
  }
  return 'no error';
}

/** Runs `call`, expects `code`, and checks that the store and the indexes did not change. */
async function expectRejectedUnchanged(s: Setup, code: ErrorCode, call: () => Promise<unknown>): Promise<void> {
  const before = await snapshot(s.store, s.embedder);
  const searchBefore = await s.engine.search('stored memory', { touch: false, k: 10 });
  expect(await codeOf(call)).toBe(code);
  s.store.failWrites = null;
  expect(await snapshot(s.store, s.embedder)).toEqual(before);
  expect(await s.engine.count()).toBe(before.records.length);
  const searchAfter = await s.engine.search('stored memory', { touch: false, k: 10 });
  expect(searchAfter.hits.map((h) => [h.id, h.score])).toEqual(searchBefore.hits.map((h) => [h.id, h.score]));
  expect((await s.engine.export()).sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(before.records);
}

describe('bad input to add', () => {
  const cases: [string, unknown, ErrorCode][] = [
    ['empty text', { text: '' }, 'INVALID_INPUT'],
    ['whitespace text', { text: ' \n\t ' }, 'INVALID_INPUT'],
    ['number text', { text: 42 }, 'INVALID_INPUT'],
    ['null text', { text: null }, 'INVALID_INPUT'],
    ['missing text', {}, 'INVALID_INPUT'],
    ['object text', { text: { toString: () => 'x' } }, 'INVALID_INPUT'],
    ['not an object', 'just a string', 'INVALID_INPUT'],
    ['null item', null, 'INVALID_INPUT'],
    ['NaN createdAt', { text: 'x', createdAt: NaN }, 'INVALID_INPUT'],
    ['unparsable createdAt', { text: 'x', createdAt: 'next tuesday-ish' }, 'INVALID_INPUT'],
    ['invalid Date createdAt', { text: 'x', createdAt: new Date('nope') }, 'INVALID_INPUT'],
    ['Infinity validUntil', { text: 'x', validUntil: Infinity }, 'INVALID_INPUT'],
    ['priority above 2', { text: 'x', priority: 3 }, 'INVALID_INPUT'],
    ['priority NaN', { text: 'x', priority: NaN }, 'INVALID_INPUT'],
    ['pinned not boolean', { text: 'x', pinned: 'yes' }, 'INVALID_INPUT'],
    ['tags not strings', { text: 'x', tags: ['ok', 3] }, 'INVALID_INPUT'],
    ['tags not an array', { text: 'x', tags: 'a,b' }, 'INVALID_INPUT'],
    ['project not a string', { text: 'x', project: 7 }, 'INVALID_INPUT'],
    ['meta with a function', { text: 'x', meta: { f: () => 1 } }, 'INVALID_INPUT'],
    ['meta an array', { text: 'x', meta: [1] }, 'INVALID_INPUT'],
    ['empty id', { id: '', text: 'x' }, 'INVALID_INPUT'],
    ['numeric id', { id: 5, text: 'x' }, 'INVALID_INPUT'],
    ['existing id', { id: 'keep1', text: 'x' }, 'DUPLICATE_ID'],
    ['a 1 MB text', { text: 'a'.repeat(1 << 20) }, 'INVALID_INPUT'],
  ];
  for (const [name, input, code] of cases) {
    it(`${name} → ${code}, nothing stored`, async () => {
      const s = await setup();
      await expectRejectedUnchanged(s, code, () => s.engine.add(input as never));
      // the same item in the middle of a batch sinks the whole batch
      await expectRejectedUnchanged(s, code, () => s.engine.add([{ text: 'good one' }, input, { text: 'good two' }] as never));
    });
  }

  it('duplicate ids within one batch → DUPLICATE_ID, nothing stored', async () => {
    const s = await setup();
    await expectRejectedUnchanged(s, 'DUPLICATE_ID', () => s.engine.add([{ id: 'x', text: 'a' }, { id: 'x', text: 'b' }]));
  });

  it('a 1 MB text is accepted when maxTextLength allows it (a defined result)', async () => {
    const s = await setup(testEmbedder(), { maxTextLength: 2_000_000 });
    const [id] = await s.engine.add({ text: `needle ${'hay '.repeat(350_000)}` });
    expect((await s.engine.search('needle', { tokenBudget: 100 })).hits[0]!.id).toBe(id);
    expect((await s.engine.search('needle', { tokenBudget: 100 })).context.ids).not.toContain(id); // never fits, never truncated
  });

  it('wrong vector dimension from the embedder → DIMENSION_MISMATCH', async () => {
    const good = testEmbedder({ dim: 8 });
    let wrong = false;
    const embedder: Embedder = {
      id: good.id, dim: 8,
      embed: async (texts) => (wrong ? texts.map(() => new Float32Array(7)) : good.embed(texts)),
    };
    const s = await setup(embedder);
    await expectRejectedUnchanged(s, 'DIMENSION_MISMATCH', async () => {
      wrong = true;
      try {
        await s.engine.add({ text: 'new memory' });
      } finally {
        wrong = false; // the snapshot search after the call needs a working embedder
      }
    });
  });

  it('embedder throwing, returning too few vectors or NaN → EMBEDDER_FAILED', async () => {
    const good = testEmbedder({ dim: 8 });
    let mode: 'ok' | 'throw' | 'short' | 'nan' = 'ok';
    const embedder: Embedder = {
      id: good.id, dim: 8,
      async embed(texts) {
        const current = mode;
        mode = 'ok';
        if (current === 'throw') throw new Error('model crashed');
        if (current === 'short') return [];
        if (current === 'nan') return texts.map(() => new Float32Array(8).fill(NaN));
        return good.embed(texts);
      },
    };
    const s = await setup(embedder);
    for (const m of ['throw', 'short', 'nan'] as const) {
      await expectRejectedUnchanged(s, 'EMBEDDER_FAILED', () => ((mode = m), s.engine.add({ text: 'new memory' })));
      await expectRejectedUnchanged(s, 'EMBEDDER_FAILED', () => ((mode = m), s.engine.update('keep1', { text: 'changed' })));
      expect(await codeOf(() => ((mode = m), s.engine.search('gardens')))).toBe('EMBEDDER_FAILED');
    }
  });

  it('a store that throws → STORE_FAILED, indexes unchanged; a coded store error keeps its code', async () => {
    const s = await setup();
    const fail = <T>(error: Error, call: () => Promise<T>) => () => ((s.store.failWrites = error), call());
    await expectRejectedUnchanged(s, 'STORE_FAILED', fail(new Error('disk on fire'), () => s.engine.add({ text: 'brand new words' })));
    await expectRejectedUnchanged(s, 'STORE_FAILED', fail(new Error('disk on fire'), () => s.engine.update('keep1', { text: 'changed text' })));
    await expectRejectedUnchanged(s, 'STORE_FAILED', fail(new Error('disk on fire'), () => s.engine.remove('keep1')));
    await expectRejectedUnchanged(s, 'STORE_FAILED', fail(new Error('disk on fire'), () => s.engine.import([{ id: 'n', text: 'imported' }])));
    // a near-duplicate would supersede keep1: the failed write must not mark it either
    await expectRejectedUnchanged(s, 'STORE_FAILED', fail(new Error('disk on fire'), () => s.engine.add({ text: 'The first stored memory about gardens' })));
    expect((await s.engine.get('keep1'))!.supersededBy).toBeUndefined();
    await expectRejectedUnchanged(s, 'QUOTA_EXCEEDED', fail(new EngramError('QUOTA_EXCEEDED', 'full'), () => s.engine.add({ text: 'more' })));
    expect((await s.engine.search('brand new words', { mode: 'lexical' })).hits).toEqual([]);
    // and the engine works again once the store does
    await s.engine.add({ id: 'after', text: 'brand new words' });
    expect((await s.engine.search('brand new words', { mode: 'lexical' })).hits[0]!.id).toBe('after');
  });

  it('a touch that the store rejects is reported, not thrown', async () => {
    const errors: unknown[] = [];
    const s = await setup(testEmbedder(), { onBackgroundError: (e) => errors.push(e) });
    s.store.failWrites = new Error('read-only');
    const result = await s.engine.search('gardens');
    expect(result.hits.length).toBeGreaterThan(0);
    await s.engine.flush();
    expect(errors).toHaveLength(1);
    expect(isEngramError(errors[0], 'STORE_FAILED')).toBe(true);
  });
});

describe('bad input elsewhere', () => {
  it('unknown ids: get → null, update and pin → NOT_FOUND, remove → 0', async () => {
    const s = await setup();
    expect(await s.engine.get('ghost')).toBeNull();
    await expectRejectedUnchanged(s, 'NOT_FOUND', () => s.engine.update('ghost', { text: 'x' }));
    await expectRejectedUnchanged(s, 'NOT_FOUND', () => s.engine.pin('ghost'));
    const before = await snapshot(s.store, s.embedder);
    expect(await s.engine.remove(['ghost', 'phantom'])).toBe(0);
    expect(await snapshot(s.store, s.embedder)).toEqual(before);
  });

  it('bad patches → INVALID_INPUT, nothing changed', async () => {
    const s = await setup();
    for (const patch of [{ text: '' }, { text: 5 }, { createdAt: 'soon' }, { priority: 0 }, { tags: [1] }, { id: 'other' }, null, 'x']) {
      await expectRejectedUnchanged(s, 'INVALID_INPUT', () => s.engine.update('keep1', patch as never));
    }
  });

  it('bad ids for get/remove, bad import payloads → INVALID_INPUT', async () => {
    const s = await setup();
    expect(await codeOf(() => s.engine.get(42 as never))).toBe('INVALID_INPUT');
    await expectRejectedUnchanged(s, 'INVALID_INPUT', () => s.engine.remove([null as never]));
    await expectRejectedUnchanged(s, 'INVALID_INPUT', () => s.engine.import('nope' as never));
    await expectRejectedUnchanged(s, 'INVALID_INPUT', () => s.engine.import([{ id: 'n', text: 'ok' }, { id: 'm', text: 'x', accessCount: -1 } as never]));
    await expectRejectedUnchanged(s, 'DUPLICATE_ID', () => s.engine.import([{ id: 'n', text: 'a' }, { id: 'n', text: 'b' }]));
  });

  it('bad queries and search options → INVALID_INPUT', async () => {
    const s = await setup();
    const bad: [unknown, object][] = [
      [42, {}], [null, {}], ['q', { k: 0 }], ['q', { k: 2.5 }], ['q', { candidatePool: -1 }], ['q', { rrfK: -1 }],
      ['q', { weights: { lexical: NaN } }], ['q', { decay: { kind: 'linear' } }], ['q', { decay: { kind: 'exponential', tauMs: 0 } }],
      ['q', { decayFrom: 'updated' }], ['q', { decayScope: 'threads' }], ['q', { diversity: { lambda: 2 } }], ['q', { mode: 'semantic' }], ['q', { tokenBudget: -5 }],
      ['q', { filter: { since: 'whenever' } }], ['q', { filter: { until: NaN } }], ['q', { now: NaN }], ['q', { boost: 'x' }],
    ];
    for (const [query, options] of bad) {
      await expectRejectedUnchanged(s, 'INVALID_INPUT', () => s.engine.search(query as string, options as never));
    }
  });

  it('invalid engine options and embedders → INVALID_INPUT', async () => {
    expect(await codeOf(() => createEngine({ embedder: { id: 'x', dim: 0, embed: async () => [] } }))).toBe('INVALID_INPUT');
    expect(await codeOf(() => createEngine({ embedder: { id: '', dim: 3, embed: async () => [] } }))).toBe('INVALID_INPUT');
    expect(await codeOf(() => createEngine({ search: { k: -1 } }))).toBe('INVALID_INPUT');
    expect(await codeOf(() => createEngine({ maxTextLength: 0 }))).toBe('INVALID_INPUT');
    expect(await codeOf(() => createEngine({ supersedeThreshold: NaN }))).toBe('INVALID_INPUT');
  });

  it('a store that cannot load → STORE_FAILED from createEngine', async () => {
    const store = faultyStore();
    store.loadRecords = async () => Promise.reject(new Error('corrupt'));
    expect(await codeOf(() => createEngine({ store }))).toBe('STORE_FAILED');
  });
});
