/**
 * holdersOfRarestTerm with the batch's statements (what supersede 'same' asks on add): the holders it leaves out are
 * only ones that say none of them, so the add folds exactly the memories it folded when it read every holder,
 * whatever was added, replaced, removed, restored from a snapshot or repacked before.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { decodeSnapshot, documentHashes, encodeSnapshot } from '../../../src/lexical/snapshot.js';
import { statementHash, statementKey } from '../../../src/lexical/statement.js';
import type { MemoryRecord } from '../../../src/types.js';
import { runs } from '../helpers/tier.js';

// Few words, so that texts share terms and often say the same thing ("The cat sat." and "cat sat").
const WORDS = ['cat', 'sat', 'mat', 'The', 'the', 'not', 'dog', 'ran', '42', 'is'];
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ') + (w.length % 2 ? '.' : ''));
const op = fc.oneof(
  fc.record({ kind: fc.constant('put' as const), id: fc.integer({ min: 0, max: 11 }), text }),
  fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 11 }) }),
  fc.record({ kind: fc.constantFrom('restore' as const, 'repack' as const) }),
);

function record(id: string, body: string): MemoryRecord {
  return { id, text: body, tags: [], createdAt: 0, priority: 1, pinned: false, accessCount: 0 };
}

async function snapshotOf(index: LexicalIndex, records: Map<string, MemoryRecord>) {
  const state = index.state();
  return decodeSnapshot(encodeSnapshot(state, { settings: index.settingsKey, counter: 0 }, await documentHashes(state.documentIds, records))).state;
}

describe('holders of the rarest term, by statement', () => {
  it('property: with the statements given, no holder saying one of them is left out, and the order is kept', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.array(text, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 6 }), async (ops, batch, cap) => {
        const index = new LexicalIndex();
        const records = new Map<string, MemoryRecord>();
        for (const step of ops) {
          if (step.kind === 'put') {
            const r = record(`m${step.id}`, step.text);
            records.set(r.id, r);
            index.addAll([r]);
          } else if (step.kind === 'remove') {
            records.delete(`m${step.id}`);
            index.remove(`m${step.id}`);
          } else if (step.kind === 'restore') {
            // As on open: every statement unknown, then some learnt (supersede learns those of the holders it reads).
            index.restore(await snapshotOf(index, records));
            for (const r of records.values()) if (r.id.endsWith('1')) index.learnStatement(r.id, statementKey(r.text));
          } else {
            index.restore(await snapshotOf(index, records), true);
          }
        }
        const keys = new Set(batch.map(statementKey).filter(Boolean));
        const hashes = new Set([...keys].map(statementHash));
        const says = (id: string) => keys.has(statementKey(records.get(id)!.text));
        for (const body of batch) {
          const every = index.holdersOfRarestTerm(body, cap);
          const some = index.holdersOfRarestTerm(body, cap, hashes);
          expect(some.every((id) => every.includes(id))).toBe(true);
          expect(some.filter(says)).toEqual(every.filter(says));
        }
      }),
      { numRuns: runs(300) },
    );
  });

  it('skips holders known to say something else, and answers at once when no memory says any of them', () => {
    const index = new LexicalIndex();
    index.addAll([record('a', 'the cat sat'), record('b', 'cat sat on the mat'), record('c', 'Cat sat.')]);
    const wanted = new Set([statementHash(statementKey('cat sat'))]);
    expect(index.holdersOfRarestTerm('cat sat', 10)).toEqual(['a', 'b', 'c']);
    expect(index.holdersOfRarestTerm('cat sat', 10, wanted)).toEqual(['a', 'c']);
    expect(index.holdersOfRarestTerm('cat sat', 2, wanted)).toEqual(['a']); // the cap counts the holders skipped
    expect(index.holdersOfRarestTerm('dog sat', 10, new Set([statementHash(statementKey('dog sat'))]))).toEqual([]);
    index.remove('a');
    index.remove('c');
    expect(index.holdersOfRarestTerm('cat sat', 10, wanted)).toEqual([]);
  });
});
