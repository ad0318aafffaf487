/**
 * Store conformance spec: framework-free (no test runner, no node: imports), so the same cases run under
 * vitest in Node against `memoryStore()` and inside a browser worker against the SQLite store.
 *
 *   for (const c of storeSpec) await c.run(openStore)   // each case opens its own fresh store
 *
 * `open` must return an empty store on its first call in a case; a later call within the same case must
 * reopen the same data (for the persistence case; it is skipped when `store.persistent` is false).
 */
import { ErrorCode } from '../../src/errors.js';
import type { PackedVectors, Store, StoreWrite } from '../../src/store/store.js';
import { defaultRecordLimits, recordFromInput } from '../../src/engine/validate.js';
import type { Link, MemoryRecord } from '../../src/types.js';
import { testEmbedder } from '../unit/helpers/embedder.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { summarize } from '../../src/store/summary.js';

export interface StoreSpecCase {
  name: string;
  run(open: () => Promise<Store>): Promise<void>;
}

// ---- tiny assertions ------------------------------------------------------------------------------------

export class SpecFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpecFailure';
  }
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new SpecFailure(message);
}

function assertEqual(actual: unknown, expected: unknown, message: string): void {
  const a = canonical(actual);
  const e = canonical(expected);
  if (a !== e) throw new SpecFailure(`${message}\n  expected: ${e}\n  actual:   ${a}`);
}

async function assertRejects(promise: Promise<unknown>, message: string): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new SpecFailure(`${message}: expected a rejection`);
}

function assertCode(error: unknown, code: ErrorCode, message: string): void {
  const actual = (error as { code?: unknown } | null)?.code;
  if (actual !== code) throw new SpecFailure(`${message}: expected an error with code ${code}, got ${String(actual)} (${String(error)})`);
}

/** Stable JSON: object keys sorted, typed arrays as plain arrays rounded to 6 decimals. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Float32Array) return Array.from(v, (x) => Math.round(x * 1e6) / 1e6);
    if (v instanceof Uint8Array) return { bytes: Array.from(v) };
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)));
    }
    return v;
  });
}

// ---- fixtures -------------------------------------------------------------------------------------------

function record(id: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  return { id, text: `memory ${id}`, createdAt: 1_700_000_000_000, priority: 1, pinned: false, tags: [], accessCount: 0, ...extra };
}

function unit(dim: number, seed: number): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = Math.sin(seed * 7.1 + i * 1.3);
  let norm = 0;
  for (const x of v) norm += x * x;
  return v.map((x) => x / Math.sqrt(norm));
}

function packed(vectorSpace: string, dim: number, ids: string[], seedBase = 0): PackedVectors {
  const data = new Float32Array(ids.length * dim);
  ids.forEach((_, i) => data.set(unit(dim, seedBase + i), i * dim));
  return { vectorSpace, dim, ids, data };
}

function byId(records: MemoryRecord[]): MemoryRecord[] {
  return records.slice().sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Vectors as a map id → rounded row, for comparison regardless of order. */
function vectorMap(p: PackedVectors): Record<string, Float32Array> {
  const out: Record<string, Float32Array> = {};
  p.ids.forEach((id, i) => (out[id] = p.data.slice(i * p.dim, (i + 1) * p.dim)));
  return out;
}

async function withStore(open: () => Promise<Store>, body: (store: Store) => Promise<void>): Promise<void> {
  const store = await open();
  try {
    await body(store);
  } finally {
    await store.close().catch(() => undefined);
  }
}

/** The store's methods bound to it, so a copy of them (`{ ...store }`) works for a class-based store too. */
function bound(store: Store): Store {
  const copy: Record<string, unknown> = { kind: store.kind, persistent: store.persistent };
  for (let from: object | null = store; from && from !== Object.prototype; from = Object.getPrototypeOf(from)) {
    for (const key of Object.getOwnPropertyNames(from)) {
      const method = (store as unknown as Record<string, unknown>)[key];
      if (key !== 'constructor' && !(key in copy) && typeof method === 'function') copy[key] = method.bind(store);
    }
  }
  return copy as unknown as Store;
}

// ---- cases ----------------------------------------------------------------------------------------------

export const storeSpec: StoreSpecCase[] = [
  {
    name: 'a new store is empty',
    run: (open) =>
      withStore(open, async (store) => {
        assertEqual(await store.loadRecords(), [], 'loadRecords');
        assertEqual(await store.count(), 0, 'count');
        const v = await store.loadVectors('e', 4);
        assertEqual([v.vectorSpace, v.dim, v.ids, v.data.length], ['e', 4, [], 0], 'loadVectors');
        assertEqual(await store.readMeta('missing'), null, 'readMeta of a missing key');
        assert(typeof store.persistent === 'boolean', 'persistent is a boolean');
      }),
  },
  {
    name: 'put stores whole records, loadRecords returns them unchanged',
    run: (open) =>
      withStore(open, async (store) => {
        const full = record('a', {
          project: 'p',
          scope: 's',
          kind: 'note',
          tags: ['x', 'y'],
          validUntil: 1_800_000_000_000,
          quality: 0.75,
          meta: { nested: { n: 1, list: [1, 'two', null] }, flag: true },
          supersededBy: 'b',
          accessCount: 3,
          lastAccessedAt: 1_700_000_100_000,
          updatedAt: 1_700_000_200_000,
          pinned: true,
          priority: 1.5,
          text: 'unicode ✓ — "quotes" \n newline 🙂',
        });
        await store.write({ put: [full, record('b')] });
        assertEqual(byId(await store.loadRecords()), [full, record('b')], 'records round-trip');
        assertEqual(await store.count(), 2, 'count');
      }),
  },
  {
    name: 'put upserts: a second put of an id replaces the record (optional fields removed stay removed)',
    run: (open) =>
      withStore(open, async (store) => {
        await store.write({ put: [record('a', { project: 'p', tags: ['t'], quality: 0.5 })] });
        await store.write({ put: [record('a', { text: 'changed' })] });
        assertEqual(await store.loadRecords(), [record('a', { text: 'changed' })], 'replaced record');
        assertEqual(await store.count(), 1, 'count');
      }),
  },
  {
    name: 'records load exactly over several load chunks: any text, fractional numbers, each optional field alone',
    run: (open) =>
      withStore(open, async (store) => {
        const texts = ['\uFEFFa leading BOM', 'naïve café ✓', '🙂 four bytes 🙂', 'a NUL \u0000 inside', 'plain', '"quotes" \\ and \n a newline'];
        const alone: Partial<MemoryRecord>[] = [
          { priority: 1.1 }, { pinned: true }, { project: 'p' }, { scope: 's' }, { kind: 'k' }, { validUntil: 1_800_000_000_000 },
          { meta: { n: 1, nested: [1, 'two', null] } }, { supersededBy: 'x' }, { accessCount: 2 }, { lastAccessedAt: 1_700_000_000_001.5 },
          { updatedAt: 1_700_000_000_002 }, { quality: 0 }, { quality: 1 }, { quality: 0.1 },
        ];
        // More rows than the SQLite store loads per chunk (10,000).
        const records = Array.from({ length: 12_345 }, (_, i) =>
          record(i % 7 === 0 ? `id-ü-${i}` : `id-${i}`, {
            text: `${texts[i % texts.length]} ${i}`,
            createdAt: 1_700_000_000_000 + i + (i % 5 === 0 ? 0.25 : 0),
            tags: i % 3 === 0 ? ['a', `t${i}`] : [],
            ...(i % 100 < alone.length ? alone[i % 100] : {}),
          }),
        );
        await store.write({ put: records });
        assertEqual(byId(await store.loadRecords()), byId(records), 'every record as written');
      }),
  },
  {
    name: 'records the engine accepts at its limits load back exactly (JSON meta edge cases, astral ids, longest labels)',
    run: (open) =>
      withStore(open, async (store) => {
        const limits = defaultRecordLimits;
        // Nested to the deepest accepted meta: the meta object is depth 1.
        let deep: Record<string, unknown> = { leaf: 'bottom' };
        for (let depth = 2; depth < limits.maxMetaDepth; depth++) deep = { d: deep };
        const edgeMeta = JSON.parse('{"__proto__": {"own": "key, not a prototype"}}') as Record<string, unknown>;
        Object.assign(edgeMeta, {
          '': 'empty key',
          'clé 🙂': ['astral', '\u0000 NUL', '"quotes" \\ \n', '\u2028\u2029'],
          numbers: [0, -1.5, 0.1, 5e-324, 1.7976931348623157e308, 2 ** 53, -(2 ** 53), 1e21, 123456789.123],
          flags: [true, false, null],
          empty: [{}, []],
          deep,
        });
        const inputs = [
          { id: '🙂 astral id', text: 'astral 🙂 text', meta: edgeMeta, tags: ['🙂', 'é'] },
          {
            id: 'longest',
            text: 'labels at their limits',
            project: 'p'.repeat(limits.maxLabelLength),
            scope: 'é'.repeat(limits.maxLabelLength),
            kind: '🙂'.repeat(limits.maxLabelLength / 2),
            tags: Array.from({ length: limits.maxTags }, (_, i) => `${i}`.padEnd(limits.maxTagLength, 'x')),
            // Just under the size limit as JSON, in UTF-8 bytes: mixed 1-, 2-, 3- and 4-byte characters.
            meta: { big: 'aé✓🙂'.repeat(Math.floor((limits.maxMetaBytes - 20) / 10)) },
          },
        ];
        const records = inputs.map((input, i) => recordFromInput(input, 1_700_000_000_000, limits, `input[${i}]`));
        await store.write({ put: records });
        const loaded = byId(await store.loadRecords());
        assertEqual(loaded, byId(records), 'records as the engine made them');
        const astral = loaded.find((r) => r.id === '🙂 astral id');
        assert(astral?.meta && Object.getPrototypeOf(astral.meta) === Object.prototype, 'meta keeps a plain prototype');
        assertEqual(Object.keys(astral.meta), Object.keys(records[0]!.meta!), 'meta keys, in order, including "__proto__"');
      }),
  },
  {
    name: 'numbers keep every digit: fractional dates, priority, counts and quality of 16-17 significant digits',
    run: (open) =>
      withStore(open, async (store) => {
        // 15 significant digits are not enough to read back a double (SQLite's JSON prints 15): each has 16 or 17.
        const records = [
          record('a', { createdAt: 1_700_000_000_000.123, priority: 1 + 1 / 3, quality: 1 / 3 }),
          record('b', { validUntil: 1_800_000_000_000.0002, lastAccessedAt: 1_700_000_000_001.1234, updatedAt: 1_700_000_000_002.0001 }),
          record('c', { createdAt: -1e-7 - 1 / 3, priority: 1.2345678901234567, quality: 0.12345678901234568, accessCount: 2 ** 53 - 1 }),
        ];
        await store.write({ put: records });
        const loaded = byId(await store.loadRecords());
        for (const [i, expected] of records.entries()) {
          for (const key of ['createdAt', 'priority', 'quality', 'validUntil', 'lastAccessedAt', 'updatedAt', 'accessCount'] as const) {
            assert(Object.is(loaded[i]?.[key], expected[key]), `${expected.id}.${key}: expected ${String(expected[key])}, got ${String(loaded[i]?.[key])}`);
          }
        }
      }),
  },
  {
    name: 'a quality score is stored exactly, replaced, and cleared by a put without it',
    run: async (open) => {
      const store = await open();
      try {
        const scores = [0, 1, 0.1, 1 / 3, 5e-324];
        await store.write({ put: scores.map((quality, i) => record(`q${i}`, { quality })) });
        assertEqual(byId(await store.loadRecords()).map((r) => r.quality), scores, 'scores as written');
        await store.write({ put: [record('q0', { quality: 0.9 }), record('q1')] });
        const loaded = byId(await store.loadRecords());
        assertEqual(loaded[0]?.quality, 0.9, 'a replaced score');
        assert(loaded[1] !== undefined && !('quality' in loaded[1]), 'a cleared score is absent, not undefined or null');
      } finally {
        await store.close().catch(() => undefined);
      }
      if (!store.persistent) return;
      await withStore(open, async (reopened) => {
        assertEqual(byId(await reopened.loadRecords()).map((r) => r.quality), [0.9, undefined, 0.1, 1 / 3, 5e-324], 'scores after reopen');
      });
    },
  },
  {
    name: 'records handed in or out are copies',
    run: (open) =>
      withStore(open, async (store) => {
        const r = record('a', { tags: ['t'] });
        await store.write({ put: [r] });
        r.tags.push('mutated');
        r.text = 'mutated';
        const [loaded] = await store.loadRecords();
        assertEqual(loaded, record('a', { tags: ['t'] }), 'caller mutation after write does not leak in');
        (loaded as MemoryRecord).text = 'mutated again';
        assertEqual(await store.loadRecords(), [record('a', { tags: ['t'] })], 'mutation of a loaded record does not leak in');
      }),
  },
  {
    name: 'remove deletes records and their vectors of every embedder; unknown ids are ignored',
    run: (open) =>
      withStore(open, async (store) => {
        await store.write({ put: [record('a'), record('b'), record('c')], vectors: packed('e1', 3, ['a', 'b', 'c']) });
        await store.write({ vectors: packed('e2', 2, ['a', 'b']) });
        await store.write({ remove: ['a', 'nope'] });
        assertEqual(byId(await store.loadRecords()).map((r) => r.id), ['b', 'c'], 'records left');
        assertEqual((await store.loadVectors('e1', 3)).ids.slice().sort(), ['b', 'c'], 'e1 vectors left');
        assertEqual((await store.loadVectors('e2', 2)).ids, ['b'], 'e2 vectors left');
        assertEqual(await store.count(), 2, 'count');
      }),
  },
  {
    name: 'vectors are kept per embedder id and dim, and upserted by id',
    run: (open) =>
      withStore(open, async (store) => {
        await store.write({ put: [record('a'), record('b')], vectors: packed('e1', 3, ['a', 'b'], 10) });
        await store.write({ vectors: packed('e2', 5, ['a'], 20) });
        const e1 = await store.loadVectors('e1', 3);
        assertEqual([e1.vectorSpace, e1.dim, e1.data.length], ['e1', 3, 6], 'e1 shape');
        assertEqual(vectorMap(e1), vectorMap(packed('e1', 3, ['a', 'b'], 10)), 'e1 values');
        assertEqual(vectorMap(await store.loadVectors('e2', 5)), vectorMap(packed('e2', 5, ['a'], 20)), 'e2 values');
        assertEqual((await store.loadVectors('e1', 4)).ids, [], 'another dim of the same id is not returned');
        assertEqual((await store.loadVectors('e3', 3)).ids, [], 'an unknown embedder has no vectors');
        await store.write({ vectors: packed('e1', 3, ['b'], 30) });
        assertEqual(vectorMap(await store.loadVectors('e1', 3)), { ...vectorMap(packed('e1', 3, ['a'], 10)), ...vectorMap(packed('e1', 3, ['b'], 30)) }, 'upsert one row');
      }),
  },
  {
    name: 'keepOnlyVectorSpace drops the vectors of every other vector space',
    run: (open) =>
      withStore(open, async (store) => {
        await store.write({ put: [record('a')], vectors: packed('old', 3, ['a']) });
        await store.write({ vectors: packed('new', 3, ['a']), keepOnlyVectorSpace: 'new' });
        assertEqual((await store.loadVectors('old', 3)).ids, [], 'old vectors dropped');
        assertEqual((await store.loadVectors('new', 3)).ids, ['a'], 'new vectors kept');
        assertEqual(await store.count(), 1, 'records untouched');
      }),
  },
  {
    name: 'one write applies put, remove, vectors and meta together',
    run: (open) =>
      withStore(open, async (store) => {
        await store.write({ put: [record('old')] });
        await store.write({ put: [record('new')], remove: ['old'], vectors: packed('e', 2, ['new']), meta: { k: 'v' } });
        assertEqual((await store.loadRecords()).map((r) => r.id), ['new'], 'records');
        assertEqual((await store.loadVectors('e', 2)).ids, ['new'], 'vectors');
        assertEqual(await store.readMeta('k'), 'v', 'meta');
      }),
  },
  {
    name: 'a write that fails midway changes nothing (vectors block of the wrong size)',
    run: (open) =>
      withStore(open, async (store) => {
        await store.write({ put: [record('keep')], vectors: packed('e', 3, ['keep']), meta: { k: 'before' } });
        const counter = await store.changeCounter();
        const bad: PackedVectors = { vectorSpace: 'e', dim: 3, ids: ['x', 'y'], data: new Float32Array(4) };
        const error = await assertRejects(
          store.write({ put: [record('x'), record('y')], remove: ['keep'], vectors: bad, meta: { k: 'after' } }),
          'write with a malformed vectors block',
        );
        assertCode(error, ErrorCode.DIMENSION_MISMATCH, 'a block of another size than ids × dim');
        assertEqual((await store.loadRecords()).map((r) => r.id), ['keep'], 'records unchanged');
        assertEqual((await store.loadVectors('e', 3)).ids, ['keep'], 'vectors unchanged');
        assertEqual(await store.readMeta('k'), 'before', 'meta unchanged');
        assertEqual(await store.changeCounter(), counter, 'change counter unchanged');
        // and the store still works afterwards
        await store.write({ put: [record('z')] });
        assertEqual(await store.count(), 2, 'count after recovery');
      }),
  },
  {
    name: 'a vectors block without a vector space or with a bad dim is refused with STORE_FAILED, changing nothing',
    run: (open) =>
      withStore(open, async (store) => {
        await store.write({ put: [record('keep')], vectors: packed('e', 3, ['keep']) });
        const blocks: [string, PackedVectors][] = [
          ['no vector space', { ...packed('e', 3, ['x']), vectorSpace: '' }],
          ['dim 0', { vectorSpace: 'e', dim: 0, ids: ['x'], data: new Float32Array(0) }],
          ['fractional dim', { vectorSpace: 'e', dim: 1.5, ids: ['x', 'y'], data: new Float32Array(3) }],
        ];
        for (const [what, vectors] of blocks) {
          const error = await assertRejects(store.write({ put: [record('x')], vectors }), `write with ${what}`);
          assertCode(error, ErrorCode.STORE_FAILED, what);
        }
        assertEqual((await store.loadRecords()).map((r) => r.id), ['keep'], 'records unchanged');
        assertEqual((await store.loadVectors('e', 3)).ids, ['keep'], 'vectors unchanged');
      }),
  },
  {
    name: 'meta stores strings and bytes, null deletes',
    run: (open) =>
      withStore(open, async (store) => {
        const bytes = new Uint8Array([0, 1, 2, 250, 255]);
        await store.write({ meta: { s: 'text ✓', b: bytes } });
        bytes[0] = 99; // the store keeps its own copy
        assertEqual(await store.readMeta('s'), 'text ✓', 'string meta');
        const back = await store.readMeta('b');
        assert(back instanceof Uint8Array, 'bytes come back as a Uint8Array');
        assertEqual(back, new Uint8Array([0, 1, 2, 250, 255]), 'bytes meta');
        await store.write({ meta: { s: null } });
        assertEqual(await store.readMeta('s'), null, 'deleted meta');
        assertEqual(await store.count(), 0, 'meta is not records');
      }),
  },
  {
    name: 'changeCounter increases with every write that adds, removes or changes a text or tags',
    run: (open) =>
      withStore(open, async (store) => {
        const counters = [await store.changeCounter()];
        const moved = async (what: string, change: StoreWrite) => {
          await store.write(change);
          const counter = await store.changeCounter();
          assert(counter > (counters.at(-1) as number), `counter must increase on ${what}: ${[...counters, counter].join(', ')}`);
          counters.push(counter);
        };
        await moved('an add', { put: [record('a', { tags: ['x'] }), record('b')] });
        await moved('a text change', { put: [record('a', { text: 'other text', tags: ['x'] })] });
        await moved('a tags change', { put: [record('a', { text: 'other text', tags: ['x', 'y'] })] });
        await moved('a mixed batch', { put: [record('a', { text: 'other text', tags: ['x', 'y'] }), record('c')] });
        await moved('a remove', { remove: ['b'] });
        // Bookkeeping (same text and tags), vectors and meta leave it: search touches and snapshot saves must not
        // make the lexical index snapshot look stale.
        await store.write({ put: [record('a', { text: 'other text', tags: ['x', 'y'], accessCount: 3, pinned: true })] });
        await store.write({ vectors: packed('e', 2, ['a']), meta: { k: 'v' } });
        assertEqual(await store.changeCounter(), counters.at(-1), 'counter after bookkeeping, vectors and meta');
      }),
  },
  {
    name: 'vectorCounter (when the store has it) increases with every write that changes the vectors, and only then',
    run: (open) =>
      withStore(open, async (store) => {
        if (!store.vectorCounter) return;
        const counters = [await store.vectorCounter()];
        const step = async (what: string, change: StoreWrite, moves: boolean) => {
          await store.write(change);
          const counter = await store.vectorCounter!();
          const last = counters.at(-1) as number;
          assert(moves ? counter > last : counter === last, `counter must ${moves ? 'increase' : 'stay'} on ${what}: ${[...counters, counter].join(', ')}`);
          counters.push(counter);
        };
        await step('records without vectors', { put: [record('a'), record('b')] }, false);
        await step('vectors alone', { vectors: packed('e', 2, ['a', 'b']) }, true);
        await step('records with vectors', { put: [record('c')], vectors: packed('e', 2, ['c']) }, true);
        await step('a remove', { remove: ['b'] }, true);
        await step('keepOnlyVectorSpace', { keepOnlyVectorSpace: 'e' }, true);
        await step('bookkeeping and meta', { put: [record('a', { accessCount: 2 })], meta: { k: 'v' } }, false);
      }),
  },
  {
    name: 'calls after close reject',
    run: async (open) => {
      const store = await open();
      await store.close();
      await assertRejects(store.loadRecords(), 'loadRecords after close');
      await assertRejects(store.write({ put: [record('a')] }), 'write after close');
      await assertRejects(store.count(), 'count after close');
    },
  },
  {
    name: 'a persistent store keeps records, vectors, meta and its counter across reopen',
    run: async (open) => {
      const first = await open();
      if (!first.persistent) {
        await first.close();
        return; // nothing to check for an in-memory store
      }
      await first.write({ put: [record('a', { tags: ['t'] }), record('b')], vectors: packed('e', 3, ['a', 'b']), meta: { k: 'v' } });
      await first.write({ remove: ['b'] });
      const counter = await first.changeCounter();
      const vectorCounter = await first.vectorCounter?.();
      await first.close();
      await withStore(open, async (second) => {
        assertEqual(await second.loadRecords(), [record('a', { tags: ['t'] })], 'records after reopen');
        assertEqual(vectorMap(await second.loadVectors('e', 3)), vectorMap(packed('e', 3, ['a'])), 'vectors after reopen');
        assertEqual(await second.readMeta('k'), 'v', 'meta after reopen');
        assert((await second.changeCounter()) >= counter, 'counter does not go back after reopen');
        if (vectorCounter !== undefined) assert((await second.vectorCounter!()) >= vectorCounter, 'vector counter does not go back after reopen');
      });
    },
  },
  {
    name: 'summaries and by-id reads agree with loadRecords (when the store has them)',
    run: (open) =>
      withStore(open, async (store) => {
        if (!store.loadRecordSummaries || !store.loadRecordsByIds) return;
        const records = [
          record('a', { project: 'p', scope: 's', kind: 'k', tags: ['x', 'ü'], validUntil: 1 / 3, supersededBy: 'b', meta: { thread: 'chat 1' } }),
          record('b', { meta: { thread: 7.25, other: 'x' } }),
          record('c', { meta: { thread: { nested: true } }, createdAt: 1 / 3 }),
          record('d', { meta: { thread: null }, pinned: true, accessCount: 3 }),
          record('e'),
        ];
        await store.write({ put: records });
        const loaded = await store.loadRecords();
        assertEqual(await store.loadRecordSummaries(), loaded.map(summarize), 'summaries, in loadRecords order');
        assertEqual((await store.loadRecordSummaries())[0]?.validUntil, 1 / 3, 'validUntil read back to the same double');
        assertEqual(byId(await store.loadRecordsByIds(['e', 'zz', 'a', 'a'])), [records[0], records[4]], 'by id: unknown skipped, each once');
        assertEqual(await store.loadRecordsByIds([]), [], 'by id: none');
        const many = [...Array.from({ length: 10_050 }, (_, i) => `x${i}`), 'c', 'b', 'd'];
        assertEqual(byId(await store.loadRecordsByIds(many)), [records[1], records[2], records[3]], 'by id: more ids than one chunk');
        await store.write({ remove: ['a'] });
        assertEqual(await store.loadRecordsByIds(['a']), [], 'by id: removed');
        assertEqual((await store.loadRecordSummaries()).map((r) => r.id), ['b', 'c', 'd', 'e'], 'summaries after a removal');
      }),
  },
  {
    name: 'an engine opened from summaries answers as one that loaded every record, across a reopen',
    run: async (open) => {
      const first = await open();
      const keepOpen = (store: Store): Store => ({ ...bound(store), close: async () => undefined });
      const writer = await createEngine({ store: keepOpen(first), clock: () => 1_700_000_000_000 });
      const words = ['kite', 'river', 'lantern', 'piano', 'storm'];
      await writer.add(
        Array.from({ length: 120 }, (_, i) => ({
          id: `m${i}`,
          text: `${words[i % 5]} ${words[(i * 3) % 5]} note ${i}`,
          createdAt: 1_600_000_000_000 + i * 1000,
          tags: i % 4 === 0 ? ['t'] : [],
          ...(i % 3 === 0 ? { project: 'p' } : {}),
          ...(i % 5 === 0 ? { meta: { thread: `th${i % 2}` } } : {}),
        })),
      );
      await writer.update('m7', { validUntil: 1_600_000_000_000 });
      const indexSnapshot = await writer.indexSnapshot();
      await writer.close();
      let store = first;
      if (first.persistent) {
        await first.close();
        store = await open();
      }
      try {
        const { loadRecordSummaries: _s, loadRecordsByIds: _b, ...whole } = bound(store);
        const options = { clock: () => 1_700_000_000_000, indexSnapshot };
        const reference = await createEngine({ ...options, store: { ...whole, kind: store.kind, persistent: store.persistent, close: async () => undefined } });
        const onDemand = await createEngine({ ...options, store: keepOpen(store), residentRecords: 0, recordCacheSize: 3 });
        const answers = async (engine: Engine) => [
          (await engine.search('kite river', { k: 8, touch: false })).hits.map((h) => [h.id, h.score, h.text]),
          (await engine.search('piano', { k: 5, touch: false, filter: { project: 'p', tags: ['t'] } })).hits.map((h) => h.id),
          (await engine.search('lantern', { k: 5, touch: false, deepRecall: true })).hits.map((h) => h.id),
          await engine.get('m42'),
          await engine.timeline('m10', { before: 2, after: 2 }),
          (await engine.export()).length,
        ];
        assertEqual(await answers(onDemand), await answers(reference), 'same answers');
        await onDemand.close();
        await reference.close();
      } finally {
        await store.close().catch(() => undefined);
      }
    },
  },
  {
    name: 'associations and links: upserted, deleted by key, gone with their memory, kept across reopen',
    run: async (open) => {
      const first = await open();
      if (!first.loadAssociations || !first.loadLinks) {
        await first.close();
        return;
      }
      const sorted = <T>(rows: T[]) => rows.slice().sort((x, y) => (canonical(x) < canonical(y) ? -1 : 1));
      const edge = (a: string, b: string, weight: number) => ({ a, b, weight, lastAt: 1_700_000_000_000 + 1 / 3 });
      const link = (from: string, to: string, kind: Link['kind'], confidence = 1): Link => ({ from, to, kind, confidence, createdAt: 1_700_000_000_000 });
      await first.write({
        put: ['a', 'b', 'c'].map((id) => record(id, { stability: 1 / 3, sessions: ['s1', 's2'], core: true })),
        associations: { put: [edge('a', 'b', 0.1), edge('a', 'c', 1 / 3), edge('b', 'c', 1)] },
        links: { put: [link('a', 'b', 'derives_from'), link('c', 'a', 'causes', 0.25)] },
      });
      await first.write({ associations: { put: [edge('a', 'b', 0.7)], remove: [['b', 'c']] }, links: { remove: [{ from: 'c', to: 'a', kind: 'causes' }] } });
      assertEqual(sorted(await first.loadAssociations()), [edge('a', 'b', 0.7), edge('a', 'c', 1 / 3)], 'associations upserted and deleted');
      assertEqual(await first.loadLinks(), [link('a', 'b', 'derives_from')], 'links upserted and deleted');
      assertEqual((await first.loadRecords()).find((r) => r.id === 'a'), record('a', { stability: 1 / 3, sessions: ['s1', 's2'], core: true }), 'learning fields stored exactly');
      assertEqual((await first.loadRecordSummaries?.())?.[0]?.core ?? true, true, 'the summary says core');
      const refused = await assertRejects(first.write({ put: [record('d')], associations: { put: [edge('b', 'a', 0.5)] } }), 'an edge with a > b');
      assertCode(refused, ErrorCode.STORE_FAILED, 'malformed edge');
      assertEqual(await first.count(), 3, 'nothing of the refused write was stored');
      await first.write({ remove: ['b'], links: { put: [link('c', 'b', 'references')] } });
      assertEqual(await first.loadAssociations(), [edge('a', 'c', 1 / 3)], "a removed memory's associations go with it");
      assertEqual(await first.loadLinks(), [], "a removed memory's links go with it, even one written in the same write");
      if (!first.persistent) {
        await first.close();
        return;
      }
      // More rows than one load chunk (10,000) of either table.
      const many = Array.from({ length: 10_050 }, (_, i) => `n${String(i).padStart(5, '0')}`);
      const manyEdges = many.map((id) => edge('a', id, 0.5));
      const manyLinks = many.map((id) => link('a', id, 'references'));
      await first.write({ associations: { put: [edge('a', 'c', 0.5), ...manyEdges] }, links: { put: [link('a', 'c', 'edits', 0.5), ...manyLinks] } });
      await first.close();
      await withStore(open, async (second) => {
        assertEqual(sorted(await second.loadAssociations!()), sorted([edge('a', 'c', 0.5), ...manyEdges]), 'associations after reopen, over two load chunks');
        assertEqual(sorted(await second.loadLinks!()), sorted([link('a', 'c', 'edits', 0.5), ...manyLinks]), 'links after reopen, over two load chunks');
      });
    },
  },
  {
    name: 'an engine learns through the store: reinforced records, associations and links survive a reopen',
    run: async (open) => {
      const first = await open();
      const keepOpen = (store: Store): Store => ({ ...bound(store), close: async () => undefined });
      const clock = () => 1_700_000_000_000;
      const engine = await createEngine({ store: keepOpen(first), clock, embedder: testEmbedder(), supersedeThreshold: false });
      await engine.add(['kite river', 'kite lantern', 'piano storm', 'lantern piano'].map((text, i) => ({ id: `m${i}`, text, createdAt: 1_600_000_000_000 })));
      for (let i = 0; i < 3; i++) await engine.search('kite', { k: 2, session: `s${i}` });
      await engine.link('m0', 'm2', 'derives_from');
      const related = await engine.related('m0');
      assertEqual(related.map((r) => [r.id, Math.round(r.weight * 1e9) / 1e9]), [['m1', 0.3]], 'three co-retrievals: weight 0.3');
      const hit = await engine.get('m0');
      assertEqual([hit?.accessCount, hit?.sessions], [3, ['s0', 's1', 's2']], 'three retrievals in three sessions');
      await engine.close();
      let store = first;
      if (first.persistent) {
        await first.close();
        store = await open();
      }
      try {
        const reopened = await createEngine({ store: keepOpen(store), clock, embedder: testEmbedder() });
        assertEqual(await reopened.related('m0'), related, 'associations after reopen');
        assertEqual(await reopened.get('m0'), hit, 'reinforced record after reopen');
        assertEqual((await reopened.why('m0')).edges.map((e) => [e.from, e.to, e.kind]), [['m0', 'm2', 'derives_from']], 'links after reopen');
        const assoc = (await reopened.search('kite', { k: 1, touch: false, associations: { floor: 0.3, bridges: false, bridgeMinCosine: 0 } })).hits;
        assertEqual(assoc.map((h) => h.id).length, 1, 'one hit');
        await reopened.remove('m1');
        assertEqual(await reopened.related('m0'), [], 'removed with its memory');
        await reopened.close();
      } finally {
        await store.close().catch(() => undefined);
      }
    },
  },
  {
    name: 'bulk: 2,000 records and vectors in one write',
    run: (open) =>
      withStore(open, async (store) => {
        const ids = Array.from({ length: 2000 }, (_, i) => `m${i}`);
        await store.write({ put: ids.map((id) => record(id)), vectors: packed('e', 8, ids) });
        assertEqual(await store.count(), 2000, 'count');
        const v = await store.loadVectors('e', 8);
        assertEqual(v.ids.length, 2000, 'vector rows');
        const rows = vectorMap(v);
        assertEqual(rows['m1234'], unit(8, 1234), 'a row survives packing');
      }),
  },
];
