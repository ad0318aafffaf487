/** The lexical index on open (from a snapshot when it still fits the store, else rebuilt) and its snapshot form. */
import type { LexicalIndex } from '../lexical/lexical-index.js';
import { decodeSnapshot, documentHashes, encodeSnapshot, staleDocuments, type IndexSnapshot } from '../lexical/snapshot.js';
import type { Store } from '../store/store.js';
import type { MemoryRecord } from '../types.js';
import type { RecordTable } from './record-table.js';

/**
 * Fills the empty `lexical` index with the stored memories (`loaded`, also held in `records`): restored from
 * `snapshot` when it was made under the same settings, else indexed from the records.
 */
export async function openLexical(
  lexical: LexicalIndex,
  loaded: readonly MemoryRecord[],
  records: RecordTable,
  snapshot: IndexSnapshot | null,
  store: Pick<Store, 'changeCounter'>,
): Promise<'snapshot' | 'rebuilt'> {
  if (snapshot && (await restore(lexical, snapshot, records, store))) return 'snapshot';
  lexical.addAll(loaded);
  return 'rebuilt';
}

/**
 * Restores the lexical index from a snapshot made under the same settings. When the store's change counter has
 * moved since (a crash between a write and the next save), the memories whose text or tags no longer match the
 * snapshot's hashes are indexed again. Either way the index must then hold exactly the stored ids; false (and
 * an empty index) otherwise.
 */
async function restore(lexical: LexicalIndex, snapshot: IndexSnapshot, records: RecordTable, store: Pick<Store, 'changeCounter'>): Promise<boolean> {
  try {
    const decoded = decodeSnapshot(snapshot);
    if (decoded.settings !== lexical.settingsKey) return false;
    lexical.restore(decoded.state);
    if (decoded.counter !== (await store.changeCounter())) {
      const { changed, removed } = staleDocuments(decoded, records);
      for (const id of removed) lexical.remove(id);
      lexical.addAll(changed);
    }
    if (lexical.size === records.size && [...records.keys()].every((id) => lexical.has(id))) return true;
  } catch {
    // refused or unreadable: rebuilt by the caller
  }
  lexical.clear();
  return false;
}

/**
 * The lexical index as a snapshot, with the store's change counter. Run it in the write queue: the counter read
 * there is the one of the state encoded (no change can run in between; searches may, while the texts are
 * hashed, and they change no text, tag or document).
 */
export async function encodeLexical(lexical: LexicalIndex, records: RecordTable, store: Pick<Store, 'changeCounter'>): Promise<IndexSnapshot> {
  const counter = await store.changeCounter();
  const state = lexical.state();
  const hashes = await documentHashes(state.documentIds, records);
  return encodeSnapshot(state, { settings: lexical.settingsKey, counter }, hashes);
}
