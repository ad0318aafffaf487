/**
 * The eviction sentinel: a small record, kept outside the database, saying that a database of this name existed,
 * which instance it was (the random id stored inside it, see `INSTANCE_KEY` in browser-store.ts) and whether it
 * ever held memories. When the sentinel names an instance that held data and the database opened now is another
 * one (a new, empty file), the database was deleted behind Engram's back: evicted by the browser or cleared.
 *
 * Where: one IndexedDB database, `engram-sentinels`, for both backends. For an OPFS database that is another
 * storage area; for an IndexedDB database (`engram-<name>`) it is another IndexedDB database, so deleting that one
 * (DevTools, a script, a partial clear) leaves the sentinel. IndexedDB is the one area every context that runs
 * either backend has: workers have no localStorage or cookies, and the IndexedDB fallback exists precisely for
 * contexts where OPFS is missing or refuses (so an OPFS file could not hold its sentinel).
 *
 * Failure modes: the browser evicts an origin (storage bucket) as a whole, and "clear site data" clears every
 * area, so both vanish together and the next open looks like a first run (`evicted` stays false); only a
 * persisted origin (`navigator.storage.persisted()`, asked by `createMemory({ persist })`) is safe from the
 * browser's eviction. Where IndexedDB is unavailable or refuses (some private modes, a full disk), the sentinel is
 * skipped: `evicted` is false and opening is never held up by it.
 */

import { committed, readRecord, withRecords } from '../../util/idb.js';

const SENTINEL_DATABASE = 'engram-sentinels';
const SENTINEL_STORE = 'databases';

interface SentinelRecord {
  /** The instance id stored inside the database (its `meta` row). */
  instance: string;
  /** The instance held at least one memory at some point. */
  hadData: boolean;
}

function isSentinelRecord(value: unknown): value is SentinelRecord {
  return typeof value === 'object' && value !== null && typeof (value as SentinelRecord).instance === 'string' && typeof (value as SentinelRecord).hadData === 'boolean';
}

/** The sentinel of database `key`; null when there is none, `undefined` when IndexedDB cannot be read here. */
export async function readSentinel(key: string): Promise<SentinelRecord | null | undefined> {
  if (typeof indexedDB === 'undefined') return undefined;
  try {
    const value = await readRecord(SENTINEL_DATABASE, SENTINEL_STORE, key);
    return isSentinelRecord(value) ? { instance: value.instance, hadData: value.hadData } : null;
  } catch {
    return undefined;
  }
}

/** Replaces the sentinel of `key`. Best effort: false when it could not be written (e.g. over quota). */
export async function writeSentinel(key: string, record: SentinelRecord): Promise<boolean> {
  if (typeof indexedDB === 'undefined') return false;
  try {
    return await withRecords(SENTINEL_DATABASE, SENTINEL_STORE, async (db) => {
      const tx = db.transaction(SENTINEL_STORE, 'readwrite');
      tx.objectStore(SENTINEL_STORE).put({ instance: record.instance, hadData: record.hadData }, key);
      await committed(tx);
      return true;
    });
  } catch {
    return false;
  }
}
