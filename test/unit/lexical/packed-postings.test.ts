/**
 * PackedPostings against a plain Map, under the operations MiniSearch makes (an add appends a higher short id or
 * counts the last one again, a removal decrements or deletes any posting), from an empty list and from a snapshot's
 * views; and the engine's lexical index, restored from a snapshot, keeps its lists packed through adds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { PackedPostings } from '../../../src/lexical/packed-postings.js';
import { decodeSnapshot, encodeSnapshot } from '../../../src/lexical/snapshot.js';
import { memoryRecord } from '../helpers/records.js';

type Op = { kind: 'add'; gap: number; count: number } | { kind: 'again' } | { kind: 'decrement'; at: number } | { kind: 'delete'; at: number } | { kind: 'get'; key: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('add' as const), gap: fc.nat(3), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'again' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('decrement' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('get' as const), key: fc.nat(60) }) },
);

const sorted = (entries: Iterable<[number, number]>) => [...entries].sort((a, b) => a[0] - b[0]);

function check(list: PackedPostings, reference: Map<number, number>): void {
  expect(list.size).toBe(reference.size);
  expect(sorted(list)).toEqual(sorted(reference));
  const viaForEach: [number, number][] = [];
  list.forEach((freq, doc) => viaForEach.push([doc, freq]));
  expect(sorted(viaForEach)).toEqual(sorted(reference));
  const packed = list.packed();
  // Packed, the arrays are the live postings in ascending order.
  if (packed) expect([...packed.docs].map((doc, i) => [doc, packed.freqs[i]])).toEqual(sorted(reference));
}

describe('PackedPostings', () => {
  it('property: answers as a Map under MiniSearch’s operations, from one posting or from a snapshot’s views', () => {
    const startArb = fc.oneof(
      fc.record({ kind: fc.constant('one' as const), doc: fc.nat(5), freq: fc.integer({ min: 1, max: 3 }) }),
      fc.record({ kind: fc.constant('views' as const), docs: fc.uniqueArray(fc.nat(40), { maxLength: 12 }), freqBytes: fc.constantFrom(1, 2, 4) }),
    );
    fc.assert(
      fc.property(startArb, fc.array(opArb, { maxLength: 60 }), (start, ops) => {
        const reference = new Map<number, number>();
        let list: PackedPostings;
        let next: number;
        let snapshot: { buffer: Uint32Array; freqs: ArrayLike<number>; before: number[][] } | null = null;
        if (start.kind === 'one') {
          list = PackedPostings.of(start.doc, start.freq);
          reference.set(start.doc, start.freq);
          next = start.doc + 1;
        } else {
          const docs = Uint32Array.from([...start.docs].sort((a, b) => a - b));
          const freqs = start.freqBytes === 1 ? new Uint8Array(docs.length) : start.freqBytes === 2 ? new Uint16Array(docs.length) : new Uint32Array(docs.length);
          docs.forEach((doc, i) => (freqs[i] = 1 + (doc % 3)));
          // A snapshot's buffer, a little longer than the views: a write must never reach past them.
          const buffer = new Uint32Array(docs.length + 2).fill(7);
          buffer.set(docs);
          list = new PackedPostings(buffer.subarray(0, docs.length), freqs);
          docs.forEach((doc, i) => reference.set(doc, freqs[i]!));
          next = (docs.at(-1) ?? 0) + 1;
          check(list, reference);
          snapshot = { buffer, freqs, before: [Array.from(buffer), Array.from(freqs)] };
        }
        let last = [...reference.keys()].at(-1);
        for (const op of ops) {
          if (op.kind === 'add') {
            const doc = next + op.gap;
            next = doc + 1;
            last = doc;
            for (let c = 0; c < op.count; c++) {
              list.set(doc, (list.get(doc) ?? 0) + 1);
              reference.set(doc, (reference.get(doc) ?? 0) + 1);
            }
          } else if (op.kind === 'again' && last !== undefined && reference.has(last)) {
            list.set(last, list.get(last)! + 1);
            reference.set(last, reference.get(last)! + 1);
          } else if ((op.kind === 'decrement' || op.kind === 'delete') && reference.size > 0) {
            const keys = [...reference.keys()].sort((a, b) => a - b);
            const key = keys[op.at % keys.length]!;
            // As MiniSearch's removeTerm: a count above one goes down, else the posting goes.
            if (op.kind === 'decrement' && reference.get(key)! > 1) {
              list.set(key, list.get(key)! - 1);
              reference.set(key, reference.get(key)! - 1);
            } else {
              expect(list.delete(key)).toBe(true);
              reference.delete(key);
              expect(list.delete(key)).toBe(false);
            }
          } else if (op.kind === 'get') {
            expect(list.get(op.key)).toBe(reference.get(op.key));
            expect(list.has(op.key)).toBe(reference.has(op.key));
          }
          check(list, reference);
        }
        // A snapshot's arrays are never written: changes go to arrays of the list's own.
        if (snapshot) expect([Array.from(snapshot.buffer), Array.from(snapshot.freqs)]).toEqual(snapshot.before);
      }),
    );
  });

  it('adds keep a list packed, and taking out the newest posting keeps it packed too', () => {
    const list = PackedPostings.of(3, 1);
    for (let doc = 4; doc < 1000; doc++) list.set(doc, 1);
    list.set(999, 2);
    expect(list.packed()?.docs.length).toBe(997);
    expect(list.get(999)).toBe(2);
    expect(list.delete(999)).toBe(true);
    expect(list.packed()?.docs.length).toBe(996);
    // Another posting: an ordinary Map from then on, with the same entries.
    expect(list.delete(500)).toBe(true);
    expect(list.packed()).toBeNull();
    expect(list.size).toBe(995);
    expect(list.has(500)).toBe(false);
    expect(list.get(501)).toBe(1);
  });
});

describe('the lexical index’s postings', () => {
  const rec = (id: string, text: string) => memoryRecord(id, { text });
  const termLists = (index: LexicalIndex, term: string) => {
    for (const [t, data] of index.state().terms) if (t === term) return [...data.values()];
    return [];
  };

  it('are packed when made by adds, stay packed through adds after a snapshot restore, and give the same search', () => {
    const fresh = new LexicalIndex({ stopWords: false, stem: false });
    fresh.addAll(Array.from({ length: 300 }, (_, i) => rec(`m${i}`, `harbour tide ${i % 7 === 0 ? 'storm' : 'calm'} boat${i}`)));
    expect(termLists(fresh, 'harbour').every((list) => list instanceof PackedPostings && list.packed()?.docs.length === 300)).toBe(true);

    const state = fresh.state();
    const restored = new LexicalIndex({ stopWords: false, stem: false });
    restored.restore(decodeSnapshot(encodeSnapshot(state, { settings: fresh.settingsKey, counter: 0 }, new Uint32Array(state.documentIds.size * 2))).state);
    const more = Array.from({ length: 50 }, (_, i) => rec(`n${i}`, `harbour storm warning ${i}`));
    restored.addAll(more);
    fresh.addAll(more);
    const harbour = termLists(restored, 'harbour');
    expect(harbour.every((list) => list instanceof PackedPostings && list.packed()?.docs.length === 350)).toBe(true);
    for (const query of ['harbour storm', 'tide', 'warning 7', 'calm boat12']) expect(restored.search(query, 20)).toEqual(fresh.search(query, 20));
  });

  it('a snapshot with a list out of order is refused', () => {
    const index = new LexicalIndex({ stopWords: false, stem: false });
    index.addAll([rec('a', 'harbour'), rec('b', 'harbour'), rec('c', 'harbour')]);
    const state = index.state();
    const list = [...state.terms].find(([term]) => term === 'harbour')![1].values().next().value as PackedPostings;
    const { docs } = list.packed()!;
    [docs[0], docs[1]] = [docs[1]!, docs[0]!];
    expect(() => decodeSnapshot(encodeSnapshot(state, { settings: index.settingsKey, counter: 0 }, new Uint32Array(6)))).toThrow(/out of order/);
  });
});
