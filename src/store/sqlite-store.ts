/**
 * Engram's Store on one SQLite connection (sql-connection.ts), every call serialised: the same schema, statements and
 * loading code for the worker's wa-sqlite databases and Node's files. Opening a connection is the caller's part.
 */
import { EngramError, ErrorCode, toEngramError } from '../errors.js';
import type { Link, MemoryRecord } from '../types.js';
import { splitUtf8 } from '../util/utf8.js';
import { checkAssociations, checkLinks } from './graph-rows.js';
import type { SqlConnection } from './sql-connection.js';
import {
  CHANGES_INDEXED, DELETE_ASSOCIATIONS, DELETE_GRAPH_OF, DELETE_LINKS, encodeVectors, LOAD_ASSOCIATIONS, LOAD_CHUNK, LOAD_LINKS,
  LOAD_RECORDS, LOAD_RECORDS_BY_IDS, LOAD_SUMMARIES, LOAD_VECTORS, loadedNumber, setOptionalFields, toRow, UPSERT_ASSOCIATIONS,
  UPSERT_LINKS, UPSERT_RECORDS, UPSERT_VECTORS, type LoadedNumber, type OptionalRow, type SummaryRow,
} from './sqlite-rows.js';
import type { AssociationEdge, PackedVectors, RecordSummary, Store, StoreWrite } from './store.js';

/** How a store's connection came about and what its failures mean: the opener's part (worker/ or node/). */
export interface SqliteStoreSetup {
  kind: 'opfs' | 'idb' | 'file';
  /** A fresh connection, after a failure `failure` called 'io' or 'quota' (SQLite recovers from the file). */
  reconnect(): Promise<SqlConnection>;
  /** 'quota' for a full disk, 'io' for another I/O failure, 'corrupt' for a damaged file, null for the rest. */
  failure(error: unknown, ioError: unknown): 'quota' | 'io' | 'corrupt' | null;
  /** After each write that put records (the worker's eviction sentinel). */
  afterPut?(): Promise<void>;
  evicted?: boolean;
  encrypted?: boolean;
}

/**
 * The vectors of a list of ids (a JSON array, ?3) in one statement: ids as one JSON array, rows as one concatenated
 * blob in the same order (both aggregates walk the same rows). Each id is a lookup in the (memory_id, embedder_id) index.
 */
const LOAD_VECTORS_BY_IDS = `
  SELECT count(*), json_group_array(memory_id), CAST(group_concat(data, '') AS BLOB)
  FROM (SELECT v.memory_id, v.data FROM json_each(?3) AS j JOIN vectors AS v ON v.memory_id = j.value AND v.embedder_id = ?1
        WHERE v.dim = ?2 AND length(v.data) = ?4)`;

/** Page size of a new database (OPFS and Node files): faster bulk writes and fewer reads on open (docs/worker.md). */
export const PAGE_SIZE = 16384;
/** Quiet time after a removal before the WAL is checkpointed and truncated. */
const CHECKPOINT_IDLE_MS = 1_000;

/** Runs one chunk statement of sqlite-rows.ts's record columns and appends its records to `records`. */
export async function readRecordChunk(db: SqlConnection, sql: string, params: (string | number)[], records: MemoryRecord[]): Promise<{ rows: number; lastRowid: number }> {
  let rows = 0;
  let lastRowid = 0;
  let ids: string[] = [];
  let texts: string[] = [];
  let createdAt: number[] = [];
  let tags: string[][] = [];
  let optional: OptionalRow[] = [];
  await db.each(sql, params, (row) => {
    rows = row.number(0);
    if (rows === 0) return;
    lastRowid = row.number(1);
    // A blob is a view into WebAssembly memory, valid until the next read: each is split as soon as it is taken.
    const idLengths = JSON.parse(row.text(3)) as number[];
    ids = splitUtf8(row.blob(2), idLengths);
    const textLengths = JSON.parse(row.text(5)) as number[];
    texts = splitUtf8(row.blob(4), textLengths);
    createdAt = (JSON.parse(row.text(6)) as LoadedNumber[]).map(loadedNumber);
    tags = JSON.parse(row.text(7)) as string[][];
    optional = row.isNull(8) ? [] : (JSON.parse(row.text(8)) as OptionalRow[]);
  });
  if (ids.length !== rows || texts.length !== rows || createdAt.length !== rows || tags.length !== rows) {
    throw new EngramError(ErrorCode.STORE_FAILED, 'load memories: the columns of a chunk disagree in length');
  }
  const start = records.length;
  for (let i = 0; i < rows; i++) {
    records.push({ id: ids[i]!, text: texts[i]!, createdAt: createdAt[i]!, priority: 1, pinned: false, tags: tags[i]!, accessCount: 0 });
  }
  if (optional.length > 0) {
    // A chunk holds an id twice only for a legacy duplicate (the engine's open): both rows get their own fields, in order.
    const rowsOf = new Map<string, MemoryRecord[]>();
    for (const record of records.slice(start)) rowsOf.set(record.id, [...(rowsOf.get(record.id) ?? []), record]);
    const seen = new Map<string, number>();
    for (const fields of optional) {
      const nth = seen.get(fields[0]) ?? 0;
      seen.set(fields[0], nth + 1);
      setOptionalFields(rowsOf.get(fields[0])![nth]!, fields);
    }
  }
  return { rows, lastRowid };
}

/** At most this many quick_check findings go into a STORE_CORRUPT error: the first ones say where the damage is. */
const QUICK_CHECK_LIMIT = 20;

/**
 * What `PRAGMA quick_check` finds on `db` (['ok'] for an intact file), at most QUICK_CHECK_LIMIT lines; when the check
 * itself cannot finish (an encrypted page whose MAC fails stops it), its last line says where it stopped.
 */
export async function quickCheck(db: SqlConnection): Promise<string[]> {
  const findings: string[] = [];
  try {
    await db.each(`PRAGMA quick_check(${QUICK_CHECK_LIMIT})`, [], (row) => findings.push(row.text(0)));
  } catch (error) {
    findings.push(`quick_check stopped: ${error instanceof Error ? error.message : String(error)}`);
  }
  return findings;
}

/** STORE_CORRUPT for a corruption error met on `db`, with quick_check's findings in its details. */
export async function corruptionError(db: SqlConnection, error: unknown, what: string): Promise<EngramError> {
  const findings = await quickCheck(db);
  const reason = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return new EngramError(ErrorCode.STORE_CORRUPT, `${what}: the database file is damaged (${reason}); salvageMemory() reads what is left of it`, {
    cause: error,
    details: { quickCheck: findings, sqliteCode: typeof code === 'number' ? code : null },
  });
}

export class SqliteStore implements Store {
  readonly persistent = true;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;
  private checkpointTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set by an I/O failure: the next call starts on a fresh connection (SQLite recovers from the file). */
  private broken = false;

  readonly kind: SqliteStoreSetup['kind'];
  /** The database vanished since the last open (browser/sentinel.ts); the store is usable, and empty. */
  readonly evicted: boolean;
  /** Its pages are encrypted at rest. */
  readonly encrypted: boolean;

  constructor(
    private db: SqlConnection,
    private readonly setup: SqliteStoreSetup,
  ) {
    this.kind = setup.kind;
    this.evicted = setup.evicted ?? false;
    this.encrypted = setup.encrypted ?? false;
  }

  loadRecords(): Promise<MemoryRecord[]> {
    return this.serial('load memories', async () => {
      const records: MemoryRecord[] = [];
      for (let after = 0; ; ) {
        const chunk = await readRecordChunk(this.db, LOAD_RECORDS, [after], records);
        after = chunk.lastRowid;
        if (chunk.rows < LOAD_CHUNK) return records;
      }
    });
  }

  loadRecordsByIds(ids: readonly string[]): Promise<MemoryRecord[]> {
    return this.serial('load memories by id', async () => {
      const records: MemoryRecord[] = [];
      for (let start = 0; start < ids.length; start += LOAD_CHUNK) {
        await readRecordChunk(this.db, LOAD_RECORDS_BY_IDS, [JSON.stringify(ids.slice(start, start + LOAD_CHUNK))], records);
      }
      return records;
    });
  }

  loadRecordSummaries(): Promise<RecordSummary[]> {
    return this.serial('load memory summaries', async () => {
      const summaries: RecordSummary[] = [];
      for (let after = 0; ; ) {
        let rows = 0;
        let ids: string[] = [];
        let createdAt: number[] = [];
        let tags: string[][] = [];
        let optional: SummaryRow[] = [];
        await this.db.each(LOAD_SUMMARIES, [after], (row) => {
          rows = row.number(0);
          if (rows === 0) return;
          after = row.number(1);
          ids = splitUtf8(row.blob(2), JSON.parse(row.text(3)) as number[]);
          createdAt = (JSON.parse(row.text(4)) as LoadedNumber[]).map(loadedNumber);
          tags = JSON.parse(row.text(5)) as string[][];
          optional = row.isNull(6) ? [] : (JSON.parse(row.text(6)) as SummaryRow[]);
        });
        if (ids.length !== rows || createdAt.length !== rows || tags.length !== rows) {
          throw new EngramError(ErrorCode.STORE_FAILED, 'load memory summaries: the columns of a chunk disagree in length');
        }
        const start = summaries.length;
        for (let i = 0; i < rows; i++) summaries.push({ id: ids[i]!, createdAt: createdAt[i]!, tags: tags[i]! });
        if (optional.length > 0) {
          const byId = new Map(summaries.slice(start).map((summary) => [summary.id, summary]));
          for (const [id, project, scope, kind, validUntil, supersededBy, thread, core] of optional) {
            const summary = byId.get(id)!;
            if (project !== null) summary.project = project;
            if (scope !== null) summary.scope = scope;
            if (kind !== null) summary.kind = kind;
            if (validUntil !== null) summary.validUntil = loadedNumber(validUntil);
            if (supersededBy !== null) summary.supersededBy = supersededBy;
            if (thread !== null) summary.thread = JSON.parse(thread) as string | number;
            if (core !== null) summary.core = true;
          }
        }
        if (rows < LOAD_CHUNK) return summaries;
      }
    });
  }

  loadVectors(vectorSpace: string, dim: number): Promise<PackedVectors> {
    return this.serial('load vectors', async () => {
      const ids: string[] = [];
      const chunks: Uint8Array[] = [];
      await this.eachVectorChunk(vectorSpace, dim, (chunkIds, blob) => {
        ids.push(...chunkIds);
        chunks.push(blob.slice());
      });
      const data = new Float32Array(ids.length * dim);
      const bytes = new Uint8Array(data.buffer);
      let offset = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
      }
      return { vectorSpace, dim, ids, data };
    });
  }

  loadVectorsByIds(vectorSpace: string, dim: number, wanted: readonly string[]): Promise<PackedVectors> {
    return this.serial('load vectors by id', async () => {
      const unique = [...new Set(wanted)];
      const ids: string[] = [];
      const data = new Float32Array(unique.length * dim);
      const bytes = new Uint8Array(data.buffer);
      for (let start = 0; start < unique.length; start += LOAD_CHUNK) {
        await this.db.each(LOAD_VECTORS_BY_IDS, [vectorSpace, dim, JSON.stringify(unique.slice(start, start + LOAD_CHUNK)), dim * 4], (row) => {
          if (row.number(0) === 0) return;
          // The blob is a view into WebAssembly memory, valid until the next read: copied at once.
          bytes.set(row.blob(2), ids.length * dim * 4);
          ids.push(...(JSON.parse(row.text(1)) as string[]));
        });
      }
      return { vectorSpace, dim, ids, data: data.subarray(0, ids.length * dim) };
    });
  }

  loadVectorChunks(vectorSpace: string, dim: number, onChunk: (chunk: PackedVectors) => void): Promise<void> {
    return this.serial('load vectors', () =>
      this.eachVectorChunk(vectorSpace, dim, (ids, blob) => {
        // One chunk's floats at a time: the caller keeps codes, never every float at once.
        const data = new Float32Array(ids.length * dim);
        new Uint8Array(data.buffer).set(blob);
        onChunk({ vectorSpace, dim, ids, data });
      }),
    );
  }

  /**
   * Pages through the stored vectors of a space, a chunk (LOAD_CHUNK rows) at a time: `onChunk` gets its ids and
   * its floats' bytes, a view into WebAssembly memory valid only during the call. Run inside `serial`.
   */
  private async eachVectorChunk(vectorSpace: string, dim: number, onChunk: (ids: string[], blob: Uint8Array) => void): Promise<void> {
    for (let after = 0; ; ) {
      let rows = 0;
      await this.db.each(LOAD_VECTORS, [vectorSpace, dim, after, dim * 4], (row) => {
        rows = row.number(0);
        if (rows === 0) return;
        after = row.number(1);
        onChunk(JSON.parse(row.text(2)) as string[], row.blob(3));
      });
      if (rows < LOAD_CHUNK) return;
    }
  }

  async write(change: StoreWrite): Promise<void> {
    // Encode before touching the database so bad input never opens a transaction.
    const records = change.put?.length ? JSON.stringify(change.put.map(toRow)) : null;
    const removed = change.remove?.length ? JSON.stringify(change.remove) : null;
    const vectors = change.vectors ? encodeVectors(change.vectors) : null;
    const meta = Object.entries(change.meta ?? {});
    const edges = checkAssociations(change.associations);
    const links = checkLinks(change.links);
    const json = (rows: unknown[]) => (rows.length > 0 ? JSON.stringify(rows) : null);
    const edgesPut = json(edges.put.map((e) => [e.a, e.b, e.weight, e.lastAt]));
    const edgesRemoved = json(edges.remove);
    const linksPut = json(links.put.map((l) => [l.from, l.to, l.kind, l.confidence, l.createdAt]));
    const linksRemoved = json(links.remove.map((l) => [l.from, l.to, l.kind]));
    await this.serial('write', () =>
      this.db.transaction(async () => {
        let indexedChange = removed !== null;
        if (removed) {
          await this.db.run('DELETE FROM vectors WHERE memory_id IN (SELECT value FROM json_each(?1))', [removed]);
          await this.db.run('DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?1))', [removed]);
        }
        if (records) {
          indexedChange ||= Number(await this.db.scalar(CHANGES_INDEXED, [records])) === 1;
          await this.db.run(UPSERT_RECORDS, [records]);
        }
        if (vectors) await this.db.run(UPSERT_VECTORS, vectors);
        if (edgesRemoved) await this.db.run(DELETE_ASSOCIATIONS, [edgesRemoved]);
        if (edgesPut) await this.db.run(UPSERT_ASSOCIATIONS, [edgesPut]);
        if (linksRemoved) await this.db.run(DELETE_LINKS, [linksRemoved]);
        if (linksPut) await this.db.run(UPSERT_LINKS, [linksPut]);
        // After the puts: nothing of a removed memory survives the write.
        if (removed) for (const sql of DELETE_GRAPH_OF) await this.db.run(sql, [removed]);
        if (change.keepOnlyVectorSpace !== undefined) {
          await this.db.run('DELETE FROM vectors WHERE embedder_id <> ?1', [change.keepOnlyVectorSpace]);
        }
        for (const [key, value] of meta) {
          if (value === null) await this.db.run('DELETE FROM meta WHERE key = ?1', [key]);
          else await this.db.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)', [key, value]);
        }
        const vectorChange = removed !== null || vectors !== null || change.keepOnlyVectorSpace !== undefined;
        if (indexedChange || vectorChange) {
          await this.db.run('UPDATE state SET change_counter = change_counter + ?1, vector_counter = vector_counter + ?2', [Number(indexedChange), Number(vectorChange)]);
        }
      }),
    );
    if (removed && this.kind !== 'idb') this.checkpointWhenIdle();
    if (records) await this.setup.afterPut?.();
  }

  loadAssociations(): Promise<AssociationEdge[]> {
    return this.serial('load associations', async () => {
      const rows = await this.loadByKey<[string, string, LoadedNumber, LoadedNumber]>(LOAD_ASSOCIATIONS, 2);
      return rows.map(([a, b, weight, lastAt]) => ({ a, b, weight: loadedNumber(weight), lastAt: loadedNumber(lastAt) }));
    });
  }

  loadLinks(): Promise<Link[]> {
    return this.serial('load links', async () => {
      const rows = await this.loadByKey<[string, string, Link['kind'], LoadedNumber, LoadedNumber]>(LOAD_LINKS, 3);
      return rows.map(([from, to, kind, confidence, createdAt]) => ({ from, to, kind, confidence: loadedNumber(confidence), createdAt: loadedNumber(createdAt) }));
    });
  }

  /** Every row of a keyset-chunked statement (LOAD_ASSOCIATIONS, LOAD_LINKS), whose first `keyWidth` columns are the key. */
  private async loadByKey<Row extends (string | number)[]>(sql: string, keyWidth: number): Promise<Row[]> {
    const rows: Row[] = [];
    for (let after: (string | number)[] = new Array<string>(keyWidth).fill(''); ; ) {
      const chunk = JSON.parse(String(await this.db.scalar(sql, after))) as Row[];
      for (const row of chunk) rows.push(row);
      if (chunk.length < LOAD_CHUNK) return rows;
      after = chunk.at(-1)!.slice(0, keyWidth);
    }
  }

  readMeta(key: string): Promise<string | Uint8Array | null> {
    return this.serial('read meta', async () => {
      const value = await this.db.scalar('SELECT value FROM meta WHERE key = ?1', [key]);
      return typeof value === 'string' || value instanceof Uint8Array ? value : null;
    });
  }

  changeCounter(): Promise<number> {
    return this.serial('read change counter', async () => Number(await this.db.scalar('SELECT change_counter FROM state')));
  }

  vectorCounter(): Promise<number> {
    return this.serial('read vector counter', async () => Number(await this.db.scalar('SELECT vector_counter FROM state')));
  }

  count(): Promise<number> {
    return this.serial('count', async () => Number(await this.db.scalar('SELECT count(*) FROM memories')));
  }

  /** Bytes the database file occupies, and how many of them are free pages (reused before the file grows). */
  sizeOnDisk(): Promise<{ bytes: number; freeBytes: number }> {
    return this.serial('size', async () => {
      let size = { bytes: 0, freeBytes: 0 };
      await this.db.each('SELECT page_count * page_size, freelist_count * page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()', [], (row) => {
        size = { bytes: row.number(0), freeBytes: row.number(1) };
      });
      return size;
    });
  }

  close(): Promise<void> {
    this.closing ??= this.serial('close', async () => {
      this.closed = true;
      if (this.checkpointTimer !== undefined) {
        clearTimeout(this.checkpointTimer);
        this.checkpointTimer = undefined;
        await this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)').catch(() => undefined);
      }
      await this.db.close();
    });
    return this.closing;
  }

  /**
   * After a removal, once writes pause: the WAL still holds the removed memory's earlier page images until a
   * checkpoint copies the zeroed pages over them and truncates it. A failure leaves the WAL for the next one.
   */
  private checkpointWhenIdle(): void {
    if (this.checkpointTimer !== undefined) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = undefined;
      if (!this.closed) void this.serial('checkpoint', () => this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)')).catch(() => undefined);
    }, CHECKPOINT_IDLE_MS);
  }

  /** Runs `operation` after every earlier call (one connection, one transaction at a time) and maps its errors. */
  private serial<T>(what: string, operation: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.closed) throw new EngramError(ErrorCode.CLOSED, `${what}: the store is closed`);
      try {
        if (this.broken) {
          await this.db.close().catch(() => undefined);
          this.db = await this.setup.reconnect();
          this.broken = false;
        }
        this.db.clearIoError();
        return await operation();
      } catch (error) {
        if (this.setup.failure(error, null) === 'corrupt') throw await corruptionError(this.db, error, `${what} failed (${this.kind})`);
        throw this.mapError(error, what);
      }
    };
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result;
  }

  private mapError(error: unknown, what: string): EngramError {
    const failure = this.setup.failure(error, this.db.lastIoError());
    if (failure === 'quota' || failure === 'io') this.broken = true;
    if (failure === 'quota') {
      return new EngramError(ErrorCode.QUOTA_EXCEEDED, `${what}: storage quota exceeded; nothing from this call was saved, earlier data is intact`, {
        cause: error,
      });
    }
    return toEngramError(error, ErrorCode.STORE_FAILED, `${what} failed (${this.kind})`);
  }
}
