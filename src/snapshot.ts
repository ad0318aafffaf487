/**
 * Lexical index snapshots: MiniSearch's serialised index plus what it was built from, so a reopen can skip
 * re-indexing every text (the slow part of opening a large store). A snapshot is used only when its format
 * and version match, it was made under the same lexical settings, and its fingerprint of the records' ids,
 * texts and tags equals the fingerprint of the records just loaded; otherwise the index is rebuilt. Touch
 * bookkeeping does not change the fingerprint, so searches do not make a snapshot stale.
 */
import type { MemoryRecord } from './types.js';

export const SNAPSHOT_FORMAT = 'engram-lexical-index';
export const SNAPSHOT_VERSION = 1;

export interface IndexSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  version: number;
  /** The lexical settings it was built under (LexicalIndex.settingsKey). */
  settings: string;
  /** Order-independent hash of every record's id, text and tags, with the record count. */
  fingerprint: string;
  /** MiniSearch's JSON. */
  lexical: string;
}

/** Two independent 32-bit hashes per record, summed mod 2^32: order-independent, 64 bits in all. */
export function fingerprint(records: Iterable<MemoryRecord>): string {
  let a = 0;
  let b = 0;
  let count = 0;
  for (const record of records) {
    const key = `${record.id}\u0000${record.text}\u0000${record.tags.join('\u0001')}`;
    let h1 = 0x811c9dc5;
    let h2 = 0x9e3779b9;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x85ebca6b) ^ (h2 >>> 13);
    }
    a = (a + (h1 >>> 0)) >>> 0;
    b = (b + (h2 >>> 0)) >>> 0;
    count++;
  }
  return `${count}:${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`;
}

export function snapshotMatches(snapshot: unknown, settings: string, expectedFingerprint: string): snapshot is IndexSnapshot {
  if (typeof snapshot !== 'object' || snapshot === null) return false;
  const s = snapshot as Partial<IndexSnapshot>;
  return (
    s.format === SNAPSHOT_FORMAT &&
    s.version === SNAPSHOT_VERSION &&
    s.settings === settings &&
    s.fingerprint === expectedFingerprint &&
    typeof s.lexical === 'string'
  );
}
