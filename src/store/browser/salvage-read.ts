/**
 * Salvage: reads what is left of a damaged database without opening it as a Memory (which loads every memory and
 * stops at the first bad page). Rows come back in rowid order, in export()'s form, so they import into a new one.
 */
import { EngramError, ErrorCode, toEngramError } from '../../errors.js';
import type { EncryptionOptions } from '../../util/encryption.js';
import type { SalvageReport } from './types.js';
import type { MemoryRecord } from '../../types.js';
import { unlock } from './keyring.js';
import { Connection, type SqliteBackend } from './wa-sqlite.js';
import { SALVAGE_RECORD_AT, SALVAGE_RECORDS_AFTER } from '../sqlite-rows.js';
import { quickCheck, readRecordChunk } from '../sqlite-store.js';
import { checkDatabaseName } from './browser-store.js';

/** Rows read per statement while nothing fails. */
const CHUNK = 512;
/** A damaged gap up to this many rowids wide is probed one rowid at a time; a wider one is reported lost whole. */
const POINT_PROBES = 4096;
/** Rowids are below 2^53 here (SQLite's own go to 2^63, but Engram's rows are appended from 1). */
const MAX_ROWID = Number.MAX_SAFE_INTEGER;

export async function salvageDatabase(name: string, backend: SqliteBackend, encryption: EncryptionOptions | null): Promise<SalvageReport> {
  checkDatabaseName(name);
  // The key record is only read: salvage never creates one.
  const key = await unlock(`${backend}:${name}`, name, encryption);
  let db: Connection;
  try {
    db = await Connection.open(backend, name, key, { salvage: true });
  } catch (error) {
    throw toEngramError(error, ErrorCode.STORE_CORRUPT, `salvage: database "${name}" (${backend}) cannot be opened at all (its first page is unreadable, or it does not exist)`);
  } finally {
    key?.fill(0);
  }
  try {
    const findings = await quickCheck(db);
    const { records, lost } = await readMemories(db);
    return { records, lost, quickCheck: findings };
  } catch (error) {
    throw toEngramError(error, ErrorCode.STORE_CORRUPT, `salvage: database "${name}" (${backend})`);
  } finally {
    await db.close().catch(() => undefined);
  }
}

/**
 * Walks the memories table in rowid order, a chunk at a time. Where a chunk fails it goes one row at a time up to
 * the damage, then finds the first rowid past it from which reading works again (doubling steps, then bisecting),
 * and probes each rowid of the gap on its own: a point lookup touches only the pages on its own path.
 */
async function readMemories(db: Connection): Promise<{ records: MemoryRecord[]; lost: SalvageReport['lost'] }> {
  const records: MemoryRecord[] = [];
  const lost: SalvageReport['lost'] = [];
  const loseRowid = (rowid: number) => {
    const last = lost.at(-1);
    if (last && last.to === rowid - 1) last.to = rowid;
    else lost.push({ from: rowid, to: rowid });
  };
  /** Rows after `after`, or null when the read failed (nothing is kept from a failed read). */
  const readAfter = async (after: number, limit: number) => {
    const batch: MemoryRecord[] = [];
    try {
      const chunk = await readRecordChunk(db, SALVAGE_RECORDS_AFTER, [after, limit], batch);
      records.push(...batch);
      return chunk;
    } catch {
      return null;
    }
  };
  /** Whether the row after `rowid` can be found (then its rowid, or null for none), or undefined when that fails. */
  const nextRowid = async (rowid: number): Promise<number | null | undefined> => {
    try {
      const next = await db.scalar('SELECT rowid FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT 1', [rowid]);
      return typeof next === 'number' ? next : null;
    } catch {
      return undefined;
    }
  };

  let after = 0;
  let limit = CHUNK;
  for (;;) {
    const chunk = await readAfter(after, limit);
    if (chunk) {
      if (chunk.rows < limit) return { records, lost };
      after = chunk.lastRowid;
      continue;
    }
    if (limit > 1) {
      limit = 1; // up to the damage, one row at a time
      continue;
    }
    // The row after `after` cannot be read. Find a readable point past it: doubling steps, then bisection.
    let bad = after;
    let found: number | undefined;
    for (let step = 1; after + step <= MAX_ROWID; step *= 2) {
      if ((await nextRowid(after + step)) !== undefined) {
        found = after + step;
        break;
      }
      bad = after + step;
    }
    if (found === undefined) {
      lost.push({ from: after + 1, to: null });
      return { records, lost };
    }
    let good: number = found;
    while (good - bad > 1) {
      const mid: number = bad + Math.floor((good - bad) / 2);
      if ((await nextRowid(mid)) !== undefined) good = mid;
      else bad = mid;
    }
    // Rowids (after, good] lie in or around the damage: each one on its own, when there are few enough.
    if (good - after <= POINT_PROBES) {
      for (let rowid = after + 1; rowid <= good; rowid++) {
        try {
          await readRecordChunk(db, SALVAGE_RECORD_AT, [rowid], records);
        } catch {
          loseRowid(rowid);
        }
      }
    } else {
      lost.push({ from: after + 1, to: good });
    }
    after = good;
    limit = CHUNK;
  }
}
