import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src/errors.js';
import { createEngine, type Store } from '../../../src/index.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { decodeSnapshot, documentHashes, encodeSnapshot, recordHash, SNAPSHOT_VERSION } from '../../../src/lexical/snapshot.js';
import type { MemoryRecord } from '../../../src/types.js';
import { reopenable } from '../helpers/stores.js';
import { runs } from '../helpers/tier.js';

const clock = () => Date.UTC(2024, 5, 1);
type Engine = Awaited<ReturnType<typeof createEngine>>;

async function seeded() {
  const store = reopenable();
  const engine = await createEngine({ clock, store });
  await engine.add(Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, text: `note ${i} about ${i % 2 ? 'apples' : 'pears'}`, tags: [`t${i % 3}`] })));
  await engine.search('apples'); // touch bookkeeping must not make the snapshot stale
  const snapshot = await engine.indexSnapshot();
  return { store, engine, snapshot };
}

const QUERIES = ['apples', 'pears t1', 'note 7', 'kiwis', 'changed words', 'about'];
const ranking = async (engine: Engine, q: string, k = 10) => (await engine.search(q, { touch: false, k })).hits.map((h) => [h.id, h.score]);

/**
 * Same ranking as an index rebuilt from the store. A caught-up index still holds discarded documents in its postings;
 * the BM25 scorer counts them out, so even the first search of a term scores as the rebuilt index does. With
 * `exactOrder` false, equal scores may come in another order: a memory indexed again during the catch-up has moved
 * to the end of the index, while the rebuilt index holds memories in store order.
 */
async function expectSameAsRebuilt(engine: Engine, store: Store, exactOrder = true): Promise<void> {
  const rebuilt = await createEngine({ clock, store });
  expect(rebuilt.lexicalSource).toBe('rebuilt');
  for (const q of QUERIES) {
    // Every match (k = 100) when the order of ties may differ: the top 10 could cut a run of equal scores elsewhere.
    const k = exactOrder ? 10 : 100;
    const [got, want] = [await ranking(engine, q, k), await ranking(rebuilt, q, k)];
    if (exactOrder) expect(got, q).toEqual(want);
    else expect(got.map(([id, score]) => [id, Number(score).toFixed(9)]).sort(), q).toEqual(want.map(([id, score]) => [id, Number(score).toFixed(9)]).sort());
  }
}

/** A copy of `bytes` with the u32 word at `word` set to `value` (the checksum not updated unless asked). */
function withWord(bytes: Uint8Array, word: number, value: number): Uint8Array {
  const copy = bytes.slice();
  new DataView(copy.buffer).setUint32(word * 4, value, true);
  return copy;
}

/** Sets the checksum word of `bytes` edited on purpose, computed as snapshot.ts does over every word after it. */
function resealed(bytes: Uint8Array): Uint8Array {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  let h = 0x2545f491;
  for (const word of words.subarray(3)) {
    h = Math.imul(h ^ word, 0x9e3779b1);
    h ^= h >>> 15;
  }
  words[2] = h >>> 0;
  return bytes;
}

/** What every snapshot refusal throws. */
const refusal = expect.objectContaining({ name: 'EngramError', code: ErrorCode.SNAPSHOT_INVALID });

describe('lexical index snapshots', () => {
  it('a current snapshot is restored instead of re-indexing, with identical results', async () => {
    const { store, engine, snapshot } = await seeded();
    await engine.search('pears');
    const reopened = await createEngine({ clock, store, indexSnapshot: snapshot });
    expect(reopened.lexicalSource).toBe('snapshot');
    await expectSameAsRebuilt(reopened, store);
    // the restored index keeps working for changes
    await reopened.add({ id: 'x', text: 'kiwis' });
    expect((await reopened.search('kiwis', { neighbours: false })).hits.map((h) => h.id)).toEqual(['x']);
  });

  it('making a snapshot repacks the index in place: the same answers before and after, and changes still apply', async () => {
    const store = reopenable();
    const engine = await createEngine({ clock, store });
    await engine.add(Array.from({ length: 60 }, (_, i) => ({ id: `m${i}`, text: `note ${i} about ${i % 3 ? 'apples' : 'pears'} and ${i % 5 ? 'kiwis' : 'figs'}`, tags: [`t${i % 4}`] })));
    await engine.remove(['m3', 'm4']); // discarded documents still in the postings
    const queries = [...QUERIES, 'apples kiwis', 'pears figs t2'];
    const before = await Promise.all(queries.map((q) => ranking(engine, q, 20)));
    await engine.indexSnapshot();
    expect(await Promise.all(queries.map((q) => ranking(engine, q, 20)))).toEqual(before);
    await engine.add({ id: 'new', text: 'apples and figs, fresh' });
    await engine.update('m5', { text: 'now about plums' });
    await engine.remove('m6');
    await expectSameAsRebuilt(engine, store, false);
  });

  it('round trips MiniSearch state exactly, less the postings of discarded documents', async () => {
    const index = new LexicalIndex();
    const records = new Map<string, MemoryRecord>();
    const put = (id: string, text: string, tags: string[] = []) => {
      const record: MemoryRecord = { id, text, tags, createdAt: 0, priority: 1, pinned: false, accessCount: 0 };
      records.set(id, record);
      index.addAll([record]);
    };
    put('a', 'the quick brown fox, ünïcödé 🦊', ['x']);
    put('b', 'quick quick quick '.repeat(100)); // a term frequency above 255
    put('c', 'lazy dog');
    put('a', 'replaced text'); // discard + add: a discarded short id stays in the postings
    index.remove('c');
    records.delete('c');
    const bytes = encodeSnapshot(index.state(), { settings: index.settingsKey, counter: 7 }, await documentHashes(index.state().documentIds, records, 1));
    const decoded = decodeSnapshot(bytes);
    const state = index.state();
    expect(decoded.counter).toBe(7);
    expect(decoded.settings).toBe(index.settingsKey);
    expect(decoded.state.documentIds).toEqual(state.documentIds);
    expect(decoded.state.fieldLength).toEqual(state.fieldLength);
    expect(state.dirtCount).toBe(2);
    expect([decoded.state.documentCount, decoded.state.nextId, decoded.state.dirtCount]).toEqual([state.documentCount, state.nextId, 0]);
    expect(decoded.state.avgFieldLength).toEqual(state.avgFieldLength);
    const plain = (terms: Iterable<[string, Map<number, Map<number, number>>]>) =>
      [...terms].map(([term, data]) => [term, [...data].map(([field, postings]) => [field, [...postings]])]);
    // Terms are stored in ascending order (the restore builds MiniSearch's term tree from them in one pass).
    const sorted = (terms: Iterable<[string, Map<number, Map<number, number>>]>) => plain(terms).sort(([a], [b]) => (String(a) < String(b) ? -1 : 1));
    // Postings of the discarded short ids (the first 'a', and 'c') are left out, and terms only they held.
    const live = (terms: ReturnType<typeof plain>) =>
      terms
        .map(([term, fields]) => [term, (fields as [number, [number, number][]][]).map(([field, postings]) => [field, postings.filter(([doc]) => state.documentIds.has(doc))]).filter(([, postings]) => (postings as unknown[]).length > 0)])
        .filter(([, fields]) => (fields as unknown[]).length > 0);
    expect(plain(decoded.state.terms)).toEqual(live(sorted(state.terms)));
    expect(plain(decoded.state.terms).map(([term]) => term)).not.toContain('lazi');
    const restored = new LexicalIndex();
    restored.restore(decoded.state);
    for (const q of ['quick', 'replaced fox', 'dog', 'x']) expect(restored.search(q, 5)).toEqual(index.search(q, 5));
    const hash = new Uint32Array(2);
    [...decoded.state.documentIds.values()].forEach((id, d) => {
      recordHash(records.get(id)!, hash, 0);
      expect([...decoded.hashes.subarray(d * 2, d * 2 + 2)]).toEqual([...hash]);
    });
  });

  it('a restored index answers prefix and fuzzy searches and takes removals (and their vacuuming) like the original', async () => {
    const records = new Map<string, MemoryRecord>();
    const original = new LexicalIndex({ prefix: true, fuzzy: 0.2 });
    for (let i = 0; i < 60; i++) {
      const record: MemoryRecord = {
        id: `m${i}`, text: `entry ${i} apple${i % 4} banana${i % 3} cherry`, tags: [`t${i % 5}`], createdAt: 0, priority: 1, pinned: false, accessCount: 0,
      };
      records.set(record.id, record);
    }
    original.addAll([...records.values()]);
    const bytes = encodeSnapshot(original.state(), { settings: original.settingsKey, counter: 0 }, await documentHashes(original.state().documentIds, records));
    const restored = new LexicalIndex({ prefix: true, fuzzy: 0.2 });
    restored.restore(decodeSnapshot(bytes).state);
    // Same matches and scores. The order of equal scores may differ: a prefix or fuzzy query walks MiniSearch's
    // term tree, whose branch order depends on the order terms were inserted in (as with MiniSearch's loadJSON).
    const byId = (hits: { id: string; score: number }[]) => hits.slice().sort((a, b) => (a.id < b.id ? -1 : 1));
    const same = () => {
      for (const q of ['appl', 'banana1', 'chery', 't3', 'entry 7']) expect(byId(restored.search(q, 100)), q).toEqual(byId(original.search(q, 100)));
    };
    same();
    for (let i = 0; i < 45; i++) {
      original.remove(`m${i}`);
      restored.remove(`m${i}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50)); // MiniSearch vacuums after many removals
    same();
    restored.addAll([records.get('m3')!]);
    original.addAll([records.get('m3')!]);
    same();
  });

  it('is refused (index rebuilt, results right) when old, corrupt, truncated or made under other settings', async () => {
    const { store, snapshot } = await seeded();
    const words = new Uint32Array(snapshot.buffer, snapshot.byteOffset, snapshot.byteLength / 4);
    const flipped = snapshot.slice();
    flipped[snapshot.length - 40] = (flipped[snapshot.length - 40] as number) ^ 0x10;
    const bad: [string, Uint8Array][] = [
      ['another version', withWord(snapshot, 1, SNAPSHOT_VERSION + 1)],
      ['an older version', withWord(snapshot, 1, SNAPSHOT_VERSION - 1)],
      ['not a snapshot', withWord(snapshot, 0, 0x12345678)],
      ['a flipped bit', flipped],
      ['a wrong checksum', withWord(snapshot, 2, (words[2] as number) ^ 1)],
      ['truncated', snapshot.slice(0, snapshot.length - 8)],
      ['empty', new Uint8Array(0)],
      ['JSON of the old format', new TextEncoder().encode('{"format":"engram-lexical-index","version":1}')],
    ];
    for (const [what, bytes] of bad) {
      expect(() => decodeSnapshot(bytes), what).toThrow(refusal);
      const engine = await createEngine({ clock, store, indexSnapshot: bytes });
      expect(engine.lexicalSource, what).toBe('rebuilt');
      await expectSameAsRebuilt(engine, store);
    }
    expect((await createEngine({ clock, store, indexSnapshot: snapshot, lexical: { stopWords: false } })).lexicalSource).toBe('rebuilt');
  });

  it('refuses a flipped byte, another version and terms out of order with an EngramError SNAPSHOT_INVALID', async () => {
    const index = new LexicalIndex({ stem: false, stopWords: false });
    const record: MemoryRecord = { id: 'x', text: 'aaa bbb', tags: [], createdAt: 0, priority: 1, pinned: false, accessCount: 0 };
    index.addAll([record]);
    const state = index.state();
    const snapshot = encodeSnapshot(state, { settings: index.settingsKey, counter: 1 }, await documentHashes(state.documentIds, new Map([['x', record]])));
    expect(decodeSnapshot(resealed(snapshot.slice())).state.documentIds).toEqual(state.documentIds); // resealing alone changes nothing

    const flipped = snapshot.slice();
    flipped[snapshot.length - 5] = (flipped[snapshot.length - 5] as number) ^ 0x01;
    expect(() => decodeSnapshot(flipped)).toThrow(refusal);
    expect(() => decodeSnapshot(flipped)).toThrow(/checksum/);

    for (const version of [SNAPSHOT_VERSION - 1, SNAPSHOT_VERSION + 1]) {
      expect(() => decodeSnapshot(resealed(withWord(snapshot, 1, version)))).toThrow(refusal);
      expect(() => decodeSnapshot(resealed(withWord(snapshot, 1, version)))).toThrow(/version/);
    }

    // The terms (after the document ids in the strings section) swapped, the checksum made right again.
    const swapped = snapshot.slice();
    const at = Buffer.from(swapped).indexOf('xaaabbb') + 1;
    expect(at).toBeGreaterThan(0);
    swapped.set(new TextEncoder().encode('bbbaaa'), at);
    expect(() => decodeSnapshot(resealed(swapped))).toThrow(refusal);
    expect(() => decodeSnapshot(resealed(swapped))).toThrow(/out of order/);

    // Out of order in a decoded state: the restore refuses it too.
    const decoded = decodeSnapshot(snapshot);
    const reversed = { ...decoded.state, terms: decoded.state.terms.slice().reverse() };
    expect(() => new LexicalIndex({ stem: false, stopWords: false }).restore(reversed)).toThrow(refusal);
  });

  it('writes after the snapshot (a crash before the next save) are caught up from the hashes', async () => {
    const { store, engine, snapshot } = await seeded();
    const before = await store.changeCounter();
    await engine.update('m3', { tags: ['changed'] });
    await engine.update('m4', { text: 'changed words entirely' });
    await engine.remove(['m5', 'm6']);
    await engine.add({ id: 'k', text: 'kiwis and apples' });
    expect(await store.changeCounter()).toBeGreaterThan(before);
    const reopened = await createEngine({ clock, store, indexSnapshot: snapshot });
    expect(reopened.lexicalSource).toBe('snapshot');
    expect(await reopened.count()).toBe(39);
    // Only the lexical matches: the seeded memories share one instant, so support over time would add their neighbours.
    expect((await reopened.search('changed', { neighbours: false })).hits.map((h) => h.id).sort()).toEqual(['m3', 'm4']);
    expect((await reopened.search('kiwis', { neighbours: false })).hits.map((h) => h.id)).toEqual(['k']);
    await expectSameAsRebuilt(reopened, store, false);
  });

  it('bookkeeping writes (touches, pins) leave the change counter, text and tag changes move it', async () => {
    const { store, engine } = await seeded();
    const counter = await store.changeCounter();
    await engine.search('apples pears');
    await engine.flush();
    await engine.pin('m1');
    await engine.update('m2', { priority: 2 });
    expect(await store.changeCounter()).toBe(counter);
    await engine.update('m2', { tags: ['t0', 'new'] });
    expect(await store.changeCounter()).toBeGreaterThan(counter);
  });

  it('property: any changes after a snapshot reopen to the same results as a rebuild', async () => {
    const words = ['apple', 'pear', 'kiwi', 'plum', 'fig', 'lime'];
    const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' '));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), id: fc.integer({ min: 0, max: 15 }), text, tag: fc.constantFrom(...words) }),
      fc.record({ kind: fc.constant('update' as const), id: fc.integer({ min: 0, max: 15 }), text }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 15 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 12 }), fc.array(op, { maxLength: 12 }), async (before, after) => {
        const store = reopenable();
        const engine = await createEngine({ clock, store });
        const apply = async (ops: typeof before) => {
          for (const o of ops) {
            const id = `m${o.id}`;
            const exists = (await engine.get(id)) !== null;
            if (o.kind === 'add' && !exists) await engine.add({ id, text: o.text, tags: [o.tag] });
            if (o.kind === 'update' && exists) await engine.update(id, { text: o.text });
            if (o.kind === 'remove') await engine.remove(id);
          }
        };
        await apply(before);
        const snapshot = await engine.indexSnapshot();
        await apply(after);
        const reopened = await createEngine({ clock, store, indexSnapshot: snapshot });
        expect(reopened.lexicalSource).toBe('snapshot');
        const rebuilt = await createEngine({ clock, store });
        // Diversity off: of two identical memories it keeps the one met first, and a memory indexed again during
        // the catch-up is met after the others while the rebuilt index meets memories in store order.
        const options = { touch: false, k: 20, diversity: false } as const;
        for (const q of words) {
          const got = (await reopened.search(q, options)).hits.map((h) => h.id).sort();
          const want = (await rebuilt.search(q, options)).hits.map((h) => h.id).sort();
          expect(got).toEqual(want);
          // The engine that made the snapshot now searches its repacked index, changed since.
          expect((await engine.search(q, options)).hits.map((h) => h.id).sort()).toEqual(want);
        }
      }),
      { numRuns: runs(60) },
    );
  });
});

describe('a removed memory leaves no term in the saved snapshot', () => {
  it('its words are in the snapshot before the removal and gone after; a restored index ranks as a rebuilt one', async () => {
    const store = reopenable();
    const engine = await createEngine({ clock, store });
    await engine.add([
      { id: 'secret', text: 'zebraquartz vault combination for the basement' },
      { id: 'kept', text: 'walrusamber notes about the basement' },
      ...Array.from({ length: 20 }, (_, i) => ({ id: `n${i}`, text: `note ${i} about the garden` })),
    ]);
    const has = (bytes: Uint8Array, word: string) => new TextDecoder('latin1').decode(bytes).includes(word);
    const before = await engine.indexSnapshot();
    expect(has(before, 'zebraquartz')).toBe(true);
    await engine.remove(['secret']);
    const after = await engine.indexSnapshot();
    expect(has(after, 'zebraquartz')).toBe(false);
    expect(has(after, 'combin')).toBe(false); // Porter2's stem of "combination": no term of it survives
    expect(has(after, 'walrusamb')).toBe(true);
    const restored = await createEngine({ clock, store, indexSnapshot: after });
    expect(restored.lexicalSource).toBe('snapshot');
    expect((await restored.search('basement', { touch: false })).hits.map((h) => h.id)).toEqual(['kept']);
    await expectSameAsRebuilt(restored, store, false);
  });
});
