/**
 * Input validation and limits (issue 14): well-formed strings, strict dates, JSON-only meta, the record limits,
 * the search limits, duplicate ids from an old store, and the query cut before it is embedded.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, EngramError, isEngramError, memoryStore, type Engine, type MemoryRecord, type Store } from '../../../src/index.js';
import { defaultRecordLimits } from '../../../src/engine/validate.js';
import { testEmbedder } from '../helpers/embedder.js';
import { summarize } from '../../../src/store/summary.js';
import { memoryRecord } from '../helpers/records.js';

const NOW = Date.UTC(2024, 5, 1);
const LONE = '\ud800';

async function engineWithTwo(options: Parameters<typeof createEngine>[0] = {}): Promise<Engine> {
  const engine = await createEngine({ clock: () => NOW, ...options });
  await engine.add([
    { id: 'keep1', text: 'the first stored memory about gardens' },
    { id: 'keep2', text: 'the second stored memory about boats' },
  ]);
  return engine;
}

/** The INVALID_INPUT error `call` rejects with (fails the test on any other outcome). */
async function invalid(call: () => Promise<unknown>): Promise<EngramError> {
  let caught: unknown = null;
  try {
    await call();
  } catch (error) {
    caught = error;
  }
  expect(isEngramError(caught, 'INVALID_INPUT'), `expected INVALID_INPUT, got ${String(caught)}`).toBe(true);
  return caught as EngramError;
}

/** Refused on add (alone and inside a batch, naming the item), on import, and nothing stored. */
async function refusedEverywhere(fields: Record<string, unknown>, named: RegExp): Promise<void> {
  const engine = await engineWithTwo();
  const before = await engine.export();
  expect((await invalid(() => engine.add({ text: 'fine text', ...fields } as never))).message).toMatch(named);
  const inBatch = await invalid(() => engine.add([{ text: 'good one' }, { text: 'fine text', ...fields }] as never));
  expect(inBatch.message).toMatch(/memory\[1\]/);
  const imported = await invalid(() => engine.import([{ id: 'n', text: 'ok' }, { id: 'm', text: 'fine text', ...fields }] as never));
  expect(imported.message).toMatch(/records\[1\]/);
  expect(await engine.export()).toEqual(before);
}

describe('strings must be well-formed UTF-16', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['id', { id: `a${LONE}` }, /id "a\\ud800" is not well-formed/],
    ['text', { text: `broken ${LONE} text` }, /\.text is not well-formed/],
    ['a lone low surrogate in text', { text: 'broken \udc00 text' }, /\.text is not well-formed/],
    ['a tag', { tags: ['ok', `t${LONE}`] }, /\.tags\[1\] is not well-formed/],
    ['project', { project: LONE }, /\.project is not well-formed/],
    ['scope', { scope: LONE }, /\.scope is not well-formed/],
    ['kind', { kind: LONE }, /\.kind is not well-formed/],
    ['a meta key', { meta: { ok: 1, [`k${LONE}`]: 1 } }, /\.meta: key "k\\ud800" is not well-formed/],
    ['a nested meta key', { meta: { a: [{ [LONE]: 1 }] } }, /\.meta\.a\[0\]: key "\\ud800" is not well-formed/],
    ['a meta string', { meta: { a: { b: `x${LONE}` } } }, /\.meta\.a\.b is not well-formed/],
  ];
  for (const [name, fields, named] of cases) {
    it(`${name} with a lone surrogate → INVALID_INPUT naming it, on add and import`, () => refusedEverywhere(fields, named));
  }

  it('on update too, and supersededBy on import', async () => {
    const engine = await engineWithTwo();
    for (const patch of [{ text: `x${LONE}` }, { tags: [LONE] }, { project: LONE }, { kind: LONE }, { scope: LONE }, { meta: { [LONE]: 1 } }]) {
      expect((await invalid(() => engine.update('keep1', patch))).message).toMatch(/patch for "keep1".*not well-formed/);
    }
    await invalid(() => engine.import([{ id: 'n', text: 'ok', supersededBy: `x${LONE}` } as never]));
    await invalid(() => engine.get(LONE));
    await invalid(() => engine.remove([LONE]));
    expect((await engine.get('keep1'))!.text).toBe('the first stored memory about gardens');
  });

  it('well-formed astral characters are accepted everywhere', async () => {
    const engine = await engineWithTwo();
    const [id] = await engine.add({ id: '🙂', text: 'emoji 🙂 text', tags: ['🙂'], project: '🙂', kind: '🙂', scope: '🙂', meta: { '🙂': '🙂' } });
    expect((await engine.get(id!))!).toMatchObject({ id: '🙂', text: 'emoji 🙂 text', tags: ['🙂'], meta: { '🙂': '🙂' } });
  });
});

describe('dates: epoch ms within ±8.64e15, a valid Date, or a strict ISO-8601 string', () => {
  const refused: [string, unknown][] = [
    ['a version string', 'version 3'], ['1e16', 1e16], ['-1e16', -1e16], ['NaN', NaN], ['the empty string', ''],
    ['Infinity', Infinity], ['Feb 30', '2024-02-30'], ['Feb 29 of a common year', '2023-02-29'], ['month 13', '2024-13-01'],
    ['hour 25', '2024-01-01T25:00Z'], ['minute 60', '2024-01-01T10:60Z'], ['a space for T', '2024-01-01 10:00'],
    ['a Date.parse-only form', 'Jan 2 2024'], ['a bad offset', '2024-01-01T10:00+24:00'], ['an invalid Date', new Date('nope')],
    ['a date beyond the Date range', '+275760-09-14'], ['a boolean', true], ['an object', { valueOf: () => 5 }],
  ];
  for (const [name, value] of refused) {
    it(`${name} → INVALID_INPUT naming the field (createdAt and validUntil on add, update; updatedAt, lastAccessedAt on import)`, async () => {
      await refusedEverywhere({ createdAt: value }, /\.createdAt is not a valid date/);
      await refusedEverywhere({ validUntil: value }, /\.validUntil is not a valid date/);
      const engine = await engineWithTwo();
      expect((await invalid(() => engine.update('keep1', { createdAt: value as never }))).message).toMatch(/createdAt/);
      expect((await invalid(() => engine.update('keep1', { validUntil: value as never }))).message).toMatch(/validUntil/);
      for (const field of ['updatedAt', 'lastAccessedAt']) {
        const error = await invalid(() => engine.import([{ id: 'n', text: 'ok', [field]: value } as never]));
        expect(error.message).toMatch(new RegExp(`records\\[0\\]\\.${field} is not a valid date`));
      }
      expect(await engine.count()).toBe(2);
    });
  }

  it('accepted forms and their values', async () => {
    const engine = await createEngine({ clock: () => NOW });
    const accepted: [unknown, number][] = [
      [8.64e15, 8.64e15], [-8.64e15, -8.64e15], [0, 0], [new Date(Date.UTC(2020, 0, 1)), Date.UTC(2020, 0, 1)],
      ['2024-02-29', Date.UTC(2024, 1, 29)], ['2024-01-02T03:04Z', Date.UTC(2024, 0, 2, 3, 4)],
      ['2024-01-02T03:04:05.678+02:00', Date.UTC(2024, 0, 2, 1, 4, 5, 678)], ['2024-01-02T03:04:05-05:30', Date.UTC(2024, 0, 2, 8, 34, 5)],
      ['2024-01-02T03:04:05.123456Z', Date.UTC(2024, 0, 2, 3, 4, 5, 123)], // microseconds read to the ms
      ['0001-01-01', Date.UTC(2000, 0, 1) - 730_119 * 86_400_000], // year 1, not 1901
      ['2024-01-02T03:04', new Date(2024, 0, 2, 3, 4).getTime()], // no offset with a time: local, as in Date.parse
    ];
    for (const [i, [value, ms]] of accepted.entries()) {
      const [id] = await engine.add({ id: `d${i}`, text: `dated ${i}`, createdAt: value as never });
      expect((await engine.get(id!))!.createdAt, String(value)).toBe(ms);
    }
  });
});

describe('meta is JSON data', () => {
  class Point {
    constructor(readonly x = 1) {}
  }
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  let tooDeep: Record<string, unknown> = { leaf: 1 };
  for (let depth = 2; depth <= defaultRecordLimits.maxMetaDepth + 1; depth++) tooDeep = { d: tooDeep };
  const refused: [string, unknown, RegExp][] = [
    ['NaN', { n: NaN }, /\.meta\.n must be JSON data; NaN/],
    ['Infinity', { n: [1, -Infinity] }, /\.meta\.n\[1\] must be JSON data; -Infinity/],
    ['a Date', { when: new Date(0) }, /\.meta\.when must be JSON data .* got a Date/],
    ['a Map', { m: new Map() }, /got a Map/],
    ['a Set', { s: new Set([1]) }, /got a Set/],
    ['a BigInt', { b: 10n }, /got a BigInt/],
    ['a function', { f: () => 1 }, /got a function/],
    ['a class instance', { p: new Point() }, /got a Point/],
    ['a typed array', { t: new Uint8Array(2) }, /got a Uint8Array/],
    ['a cycle', cyclic, /\.meta\.self refers back to an enclosing object/],
    ['undefined in an array', { a: [1, undefined] }, /\.meta\.a\[1\] must be JSON data/],
    ['a sparse array', { a: [1, , 3] }, /\.meta\.a\[1\] is a hole/],
    ['a symbol key', { [Symbol('s')]: 1 }, /symbol keys/],
    [`depth ${defaultRecordLimits.maxMetaDepth + 1}`, tooDeep, /nested 33 deep; the limit is 32/],
    ['more than 64 kB as JSON', { big: 'é'.repeat(40_000) }, /80010 bytes as JSON; the limit is 65536/],
    ['a meta that is a class instance', new Point(), /\.meta must be a plain object/],
  ];
  for (const [name, meta, named] of refused) {
    it(`${name} → INVALID_INPUT naming the path`, () => refusedEverywhere({ meta }, named));
  }

  it('a small graph standing for a huge JSON document is refused without expanding it', async () => {
    // Each level is an array proxy that counts its element reads: the work the check does, not its time.
    let reads = 0;
    const counted = (array: unknown[]) =>
      new Proxy(array, { get: (target, key, receiver) => (typeof key === 'string' && /^\d+$/.test(key) && reads++, Reflect.get(target, key, receiver)) });
    let shared: unknown = 'x'.repeat(100);
    for (let i = 0; i < 30; i++) shared = counted([shared, shared]); // 2^30 leaves as JSON
    await refusedEverywhere({ meta: { shared } }, /larger than 65536 bytes as JSON/);
    // Three refusals (add, in a batch, import). Expanding the graph reads 2^31 elements each; a walk that stops at
    // the byte limit reads about two per 100-byte leaf that fits in it.
    expect(reads).toBeLessThan(3 * 4 * (defaultRecordLimits.maxMetaBytes / 100));
  });

  it('JSON data is stored as its JSON round trip: the same in every store', async () => {
    const engine = await createEngine({ clock: () => NOW });
    const proto = JSON.parse('{"__proto__": {"own": true}}') as Record<string, unknown>;
    const shared = { s: 1 };
    const meta = { zero: -0, gone: undefined, nul: null, list: [shared, shared], nested: { ok: [true, 'é'] }, proto, bare: Object.create(null) };
    const [id] = await engine.add({ text: 'meta kinds', meta });
    const stored = (await engine.get(id!))!.meta!;
    expect(stored).toEqual(JSON.parse(JSON.stringify(meta)));
    expect(Object.is(stored.zero, 0)).toBe(true);
    expect('gone' in stored).toBe(false);
    expect(Object.keys(stored.proto as object)).toEqual(['__proto__']); // a key, not a prototype
    expect(Object.getPrototypeOf(stored.proto)).toBe(Object.prototype);
    // A flat meta takes the fast copy on the way out: the key must survive it too.
    await engine.update(id!, { meta: JSON.parse('{"flat": 1, "__proto__": "x"}') as Record<string, unknown> });
    expect(Object.keys((await engine.get(id!))!.meta!)).toEqual(['flat', '__proto__']);
  });

  it('a meta of exactly the size and depth limits is accepted', async () => {
    const engine = await createEngine({ clock: () => NOW });
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let depth = 2; depth <= defaultRecordLimits.maxMetaDepth; depth++) deep = { d: deep };
    await engine.add({ text: 'deepest', meta: deep });
    const exact = { s: 'a'.repeat(defaultRecordLimits.maxMetaBytes - '{"s":""}'.length) };
    expect(JSON.stringify(exact).length).toBe(65_536);
    await engine.add({ text: 'largest', meta: exact });
    await invalid(() => engine.add({ text: 'one more byte', meta: { s: `${exact.s}a` } }));
    expect(await engine.count()).toBe(2);
  });
});

describe('record limits', () => {
  const long = (n: number) => 'x'.repeat(n);
  it('tags: at most 256, each at most 256 characters; project, scope, kind at most 256', async () => {
    await refusedEverywhere({ tags: Array.from({ length: 257 }, (_, i) => `t${i}`) }, /\.tags has 257 tags; the limit is 256/);
    await refusedEverywhere({ tags: ['ok', long(257)] }, /\.tags\[1\] is 257 characters; the limit is 256/);
    for (const key of ['project', 'scope', 'kind']) await refusedEverywhere({ [key]: long(257) }, new RegExp(`\\.${key} is 257 characters; the limit is 256`));
    const engine = await engineWithTwo();
    await engine.add({ text: 'at the limits', tags: Array.from({ length: 256 }, (_, i) => `${i}`.padEnd(256, 'x')), project: long(256), scope: long(256), kind: long(256) });
    await invalid(() => engine.update('keep1', { tags: Array.from({ length: 257 }, (_, i) => `t${i}`) }));
    await invalid(() => engine.update('keep1', { project: long(257) }));
  });

  it('tags that are a sparse array are refused (a hole is not a string)', async () => {
    // eslint-disable-next-line no-sparse-arrays
    await refusedEverywhere({ tags: ['a', , 'b'] }, /\.tags\[1\] must be a string/);
  });

  it('the engine option limits changes each limit; a bad limit is refused', async () => {
    const engine = await createEngine({ limits: { maxTags: 2, maxTagLength: 3, maxLabelLength: 4, maxMetaBytes: 20, maxMetaDepth: 2, maxTextLength: 10 } });
    await invalid(() => engine.add({ text: 'x', tags: ['a', 'b', 'c'] }));
    await invalid(() => engine.add({ text: 'x', tags: ['abcd'] }));
    await invalid(() => engine.add({ text: 'x', kind: 'abcde' }));
    await invalid(() => engine.add({ text: 'x', meta: { s: 'a'.repeat(20) } }));
    await invalid(() => engine.add({ text: 'x', meta: { a: { b: {} } } }));
    await invalid(() => engine.add({ text: 'x'.repeat(11) }));
    await engine.add({ text: 'x', tags: ['abc', 'd'], kind: 'abcd', meta: { a: { b: 1 } } });
    for (const limits of [{ maxTags: 0 }, { maxMetaBytes: 1.5 }, { maxRecordsPerCall: -1 }, { maxMetaDepth: NaN }]) {
      expect((await invalid(() => createEngine({ limits }))).message).toMatch(/limits\.\w+ must be a positive integer/);
    }
    await invalid(() => createEngine({ limits: 'big' as never }));
  });

  it('records per add or import call: at most limits.maxRecordsPerCall (default 10,000), nothing stored beyond it', async () => {
    const small = await engineWithTwo({ limits: { maxRecordsPerCall: 3 } });
    const four = Array.from({ length: 4 }, (_, i) => ({ id: `n${i}`, text: `memory ${i}` }));
    expect((await invalid(() => small.add(four))).message).toMatch(/add got 4 memories; the limit is 3 per call/);
    expect((await invalid(() => small.import(four))).message).toMatch(/import got 4 memories; the limit is 3 per call/);
    expect(await small.count()).toBe(2);
    await small.add(four.slice(0, 3));
    expect(defaultRecordLimits.maxRecordsPerCall).toBe(10_000);
    const engine = await createEngine();
    const many = Array.from({ length: 10_001 }, (_, i) => ({ text: `memory ${i}` }));
    await invalid(() => engine.add(many));
    await invalid(() => engine.import(many));
    expect(await engine.count()).toBe(0);
  });
});

describe('search limits', () => {
  it('k ≤ 1,000 and candidatePool ≤ 10,000; k: 2**31 is refused', async () => {
    const engine = await engineWithTwo();
    for (const options of [{ k: 2 ** 31 }, { k: 1_001 }, { candidatePool: 10_001 }, { candidatePool: 2 ** 31 }]) {
      expect((await invalid(() => engine.search('gardens', options))).message).toMatch(/must be an integer from 1 to/);
    }
    expect((await engine.search('gardens', { k: 1_000, candidatePool: 10_000 })).hits.length).toBeGreaterThan(0);
    await invalid(() => createEngine({ search: { k: 2 ** 31 } }));
  });
});

/** A store over a memory store whose loadRecords returns `records` as they are (duplicates included). */
function storeReturning(records: MemoryRecord[]): Store {
  const inner = memoryStore();
  // Every read agrees with `records`, the by-id ones too (the engine opens from summaries when a store has them).
  return {
    ...inner,
    kind: inner.kind,
    persistent: inner.persistent,
    loadRecords: async () => structuredClone(records),
    loadRecordSummaries: async () => structuredClone(records.map(summarize)),
    loadRecordsByIds: async (ids) => structuredClone(records.filter((r) => ids.includes(r.id))),
  };
}

function stored(id: string, text: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  return memoryRecord(id, { text, createdAt: Date.UTC(2024, 0, 1), ...extra });
}

describe('a store that returns an id twice (a database from before ids had to be well-formed)', () => {
  it('the engine opens, keeps the later version by updatedAt, and reports DUPLICATE_ID once', async () => {
    // '\ud800' and '\ud801' were two rows in SQLite; both read back as '\ufffd'.
    const records = [
      stored('\ufffd', 'newer version about kites', { updatedAt: Date.UTC(2024, 2, 1) }),
      stored('\ufffd', 'older version about boats', { updatedAt: Date.UTC(2024, 1, 1) }),
      stored('other', 'an ordinary memory about kites'),
    ];
    const errors: unknown[] = [];
    const engine = await createEngine({ store: storeReturning(records), embedder: testEmbedder(), onBackgroundError: (e) => errors.push(e) });
    expect(await engine.count()).toBe(2);
    expect((await engine.get('\ufffd'))!.text).toBe('newer version about kites');
    expect(errors).toHaveLength(1);
    expect(isEngramError(errors[0], 'DUPLICATE_ID')).toBe(true);
    expect((errors[0] as EngramError).details).toEqual({ ids: ['\ufffd'], dropped: 1 });
    expect((await engine.search('boats', { mode: 'lexical' })).hits).toEqual([]);
    expect((await engine.search('kites', { mode: 'lexical', k: 5 })).hits.map((h) => h.id).sort()).toEqual(['other', '\ufffd']);
    await engine.ready;
    expect(engine.indexing()).toBeNull();
  });

  it('by createdAt when neither was updated, and the one loaded last on a tie', async () => {
    const byCreated = await createEngine({
      store: storeReturning([stored('a', 'later', { createdAt: 20 }), stored('a', 'earlier', { createdAt: 10 })]),
      onBackgroundError: () => undefined,
    });
    expect((await byCreated.get('a'))!.text).toBe('later');
    const tie = await createEngine({ store: storeReturning([stored('a', 'first row'), stored('a', 'second row')]), onBackgroundError: () => undefined });
    expect((await tie.get('a'))!.text).toBe('second row');
  });

  it('no duplicates: nothing reported', async () => {
    const errors: unknown[] = [];
    await createEngine({ store: storeReturning([stored('a', 'one'), stored('b', 'two')]), onBackgroundError: (e) => errors.push(e) });
    expect(errors).toEqual([]);
  });
});

describe('a stored record with a date the engine now refuses', () => {
  it('is shown without a date in the context rather than failing the search', async () => {
    // Numbers the engine accepted before dates had to lie within the Date range.
    const records = [stored('future', 'a memory about lanterns', { createdAt: 1e16 }), stored('past', 'another memory about lanterns', { createdAt: -1e16 })];
    const engine = await createEngine({ store: storeReturning(records), clock: () => NOW });
    const result = await engine.search('lanterns', { k: 5, touch: false });
    expect(result.hits.map((h) => h.id).sort()).toEqual(['future', 'past']);
    expect(result.context.text.split('\n\n').sort()).toEqual(['a memory about lanterns', 'another memory about lanterns']);
  });
});

describe('the query is cut before it is embedded', () => {
  it('the vector leg embeds at most maxQueryChars characters (default 10,000)', async () => {
    const embedder = testEmbedder();
    const engine = await createEngine({ embedder });
    await engine.add({ text: 'a memory about gardens' });
    embedder.calls.length = 0;
    await engine.search(`gardens ${'word '.repeat(10_000)}`, { mode: 'vector' });
    expect(embedder.calls.map((texts) => texts.map((t) => t.length))).toEqual([[10_000]]);
  });

  it('at lexical.maxQueryChars when set, without splitting a surrogate pair', async () => {
    const embedder = testEmbedder();
    const engine = await createEngine({ embedder, lexical: { maxQueryChars: 12 } });
    await engine.add({ text: 'a memory about gardens' });
    embedder.calls.length = 0;
    await engine.search('gardens and more words after the cut', { mode: 'hybrid' });
    await engine.search('gardens x🙂🙂 more', { mode: 'hybrid' }); // the cut at 12 falls inside the second 🙂
    expect(embedder.calls).toEqual([['gardens and '], ['gardens x🙂']]);
    await invalid(() => createEngine({ lexical: { maxQueryChars: 0 } }));
  });
});
