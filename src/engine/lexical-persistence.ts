/** The lexical index on open (from a snapshot when it still fits the store, else rebuilt) and its snapshot form. */
import type { LexicalIndex } from '../lexical/lexical-index.js';
import { decodeSnapshot, documentHashes, encodeSnapshot, staleDocuments, type IndexSnapshot } from '../lexical/snapshot.js';
import type { Store } from '../store/store.js';
import type { MemoryRecord } from '../types.js';
import type { Engine } from './api.js';
import type { RecordTable } from './record-table.js';

/** Meta key of the stored lexical index snapshot (the engine checks it still matches the records before using it). */
const SNAPSHOT_KEY = 'engram.lexical-snapshot';

/**
 * Fills the empty `lexical` index with the stored memories (those of `records`): restored from `snapshot` when it
 * was made under the same settings, else indexed from the records (read from the store when not in memory).
 */
export async function openLexical(
  lexical: LexicalIndex,
  records: RecordTable,
  snapshot: IndexSnapshot | null,
  store: Pick<Store, 'changeCounter'>,
): Promise<'snapshot' | 'rebuilt'> {
  if (snapshot && (await restore(lexical, snapshot, records, store))) return 'snapshot';
  for await (const chunk of records.scan([...records.keys()])) lexical.addAll(chunk);
  return 'rebuilt';
}

/** Every record of the table, by id (a whole-table pass: only for catching up or rebuilding). */
async function allRecords(records: RecordTable): Promise<Map<string, MemoryRecord>> {
  const byId = new Map<string, MemoryRecord>();
  for await (const chunk of records.scan([...records.keys()])) for (const record of chunk) byId.set(record.id, record);
  return byId;
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
      const byId = await allRecords(records);
      const { changed, removed } = staleDocuments(decoded, byId);
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
  return encodeSnapshot(state, { settings: lexical.settingsKey, counter }, await hashes(state.documentIds, records));
}

/** `documentHashes` of every indexed memory; records not in memory are read a chunk at a time, not cached. */
async function hashes(documentIds: Map<number, string>, records: RecordTable, chunk = 10_000): Promise<Uint32Array> {
  if (records.isResident) return documentHashes(documentIds, records);
  const out = new Uint32Array(documentIds.size * 2);
  const entries = [...documentIds];
  for (let start = 0; start < entries.length; start += chunk) {
    const slice = new Map(entries.slice(start, start + chunk));
    const byId = new Map<string, MemoryRecord>();
    for await (const part of records.scan([...slice.values()])) for (const record of part) byId.set(record.id, record);
    out.set(await documentHashes(slice, byId), start * 2);
  }
  return out;
}

/**
 * Replaces the index by its own snapshot, decoded: the same documents and postings, held as packed arrays (views
 * of a copy of `snapshot`, which the caller keeps) instead of the Map per term and field that indexing builds, a
 * fraction of their memory after a large import. Call it right after `encodeLexical`, in the same write-queue task.
 */
export function repackLexical(lexical: LexicalIndex, snapshot: IndexSnapshot): void {
  lexical.restore(decodeSnapshot(snapshot.slice()).state, true);
}

/** The stored snapshot, or null when there is none (an older JSON snapshot counts as none: the engine rebuilds). */
export async function readSnapshot(store: Pick<Store, 'readMeta'>): Promise<IndexSnapshot | null> {
  const raw = await store.readMeta(SNAPSHOT_KEY).catch(() => null);
  return raw instanceof Uint8Array ? raw : null;
}

/**
 * Serialises the engine's lexical index into the store's meta table, and saves what changed of its compact vector
 * index (the worker's and engram/node's savers); returns the bytes written.
 */
export async function saveSnapshot(engine: Pick<Engine, 'indexSnapshot' | 'saveVectorIndex'>, store: Pick<Store, 'write'>): Promise<number> {
  const bytes = await engine.indexSnapshot();
  await store.write({ meta: { [SNAPSHOT_KEY]: bytes } });
  return bytes.byteLength + (await engine.saveVectorIndex());
}
