/** The SQLite store: Engram's Store on wa-sqlite, one connection, every call serialised. */
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../src/errors.js';
import { checkAssociations, checkLinks } from '../src/store/graph-rows.js';
import type { AssociationEdge, PackedVectors, RecordSummary, Store, StoreWrite } from '../src/store/store.js';
import type { Link, MemoryRecord } from '../src/types.js';
import type { EncryptionOptions } from '../src/client/protocol.js';
import { keyRequired, notEncrypted, unlock } from './keyring.js';
import { Connection, isCorruption, isIoFailure, isQuotaFailure, isSqliteError, preloadSqlite, SQLITE_NOTADB, type SqliteBackend } from './sqlite.js';
import { readSentinel, writeSentinel } from './sentinel.js';
import {
  CHANGES_INDEXED, DELETE_ASSOCIATIONS, DELETE_GRAPH_OF, DELETE_LINKS, encodeVectors, LOAD_ASSOCIATIONS, LOAD_CHUNK, LOAD_LINKS,
  LOAD_RECORDS, LOAD_RECORDS_BY_IDS, LOAD_SUMMARIES, LOAD_VECTORS, loadedNumber, setOptionalFields, toRow, UPSERT_ASSOCIATIONS,
  UPSERT_LINKS, UPSERT_RECORDS, UPSERT_VECTORS, type LoadedNumber, type OptionalRow, type SummaryRow,
} from './sqlite-rows.js';
import { migrate } from './sqlite-schema.js';
import { splitUtf8 } from './utf8.js';

/**
 * The vectors of a list of ids (a JSON array, ?3) in one statement: ids as one JSON array, rows as one concatenated
 * blob in the same order (both aggregates walk the same rows). Each id is a lookup in the (memory_id, embedder_id) index.
 */
const LOAD_VECTORS_BY_IDS = `
  SELECT count(*), json_group_array(memory_id), CAST(group_concat(data, '') AS BLOB)
  FROM (SELECT v.memory_id, v.data FROM json_each(?3) AS j JOIN vectors AS v ON v.memory_id = j.value AND v.embedder_id = ?1
        WHERE v.dim = ?2 AND length(v.data) = ?4)`;

interface SqliteStoreOptions {
  /** Database name: letters, digits, '_', '-' and '.'. */
  name: string;
  backend: SqliteBackend;
  /** Encrypt at rest (worker/keyring.ts). Default null: a plain database. */
  encryption?: EncryptionOptions | null;
}

/** Database names become file and IndexedDB names: keep them to a safe alphabet. */
export function checkDatabaseName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !/^[\w.-]{1,100}$/.test(name)) {
    throw invalidInput(`database name must be 1-100 letters, digits, '_', '-' or '.', got ${JSON.stringify(name)}`);
  }
}

/**
 * The `meta` row holding this database's instance id: random, written once when the database is created (or first
 * opened by an Engram that has this row). The eviction sentinel (sentinel.ts) remembers it outside the database.
 */
export const INSTANCE_KEY = 'engram.instance';

/**
 * Opens (creating or migrating) an Engram database in wa-sqlite. Only in a worker for the OPFS backends.
 * Refuses with QUOTA_EXCEEDED when the disk is too full to open or migrate it (the database stays as it was, at
 * its schema version), SCHEMA_TOO_NEW for a newer Engram's database, KEY_REQUIRED, WRONG_KEY or NOT_ENCRYPTED
 * when `encryption` does not fit the database (see `unlock`), STORE_FAILED otherwise.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  checkDatabaseName(options.name);
  const sentinelKey = `${options.backend}:${options.name}`;
  // Another storage area: read while SQLite opens rather than after.
  const recorded = readSentinel(sentinelKey);
  // The key derivation (with a passphrase) and the key record's read overlap the WASM compile.
  preloadSqlite(options.backend, Boolean(options.encryption));
  const key = await unlock(sentinelKey, options.name, options.encryption ?? null, (dataKey) => checkNewKey(options, dataKey));
  const connect = () => openConnection(options, key);
  let db = await connect();
  let identity: Identity;
  try {
    identity = await identify(db);
  } catch (error) {
    const ioError = db.lastIoError();
    if (isCorruption(error)) {
      const corrupt = await corruptionError(db, error, `cannot open database "${options.name}" (${options.backend})`);
      await db.close().catch(() => undefined);
      throw corrupt;
    }
    await db.close().catch(() => undefined);
    // Recording the instance id is worth an open, not a refusal: a full disk must not hide readable data.
    // A fresh connection recovers whatever the failed write left (SQLite rolls it back from the file).
    if (!isQuotaFailure(error, ioError)) throw openError(error, ioError, options);
    db = await connect();
    identity = { previous: null, instance: null, hasMemories: await hasMemories(db, options.name) };
  }
  const sentinel = await recorded;
  // Data was here (the sentinel says this database held memories) and the database opened now is another, empty
  // one: its files were deleted behind Engram's back. An emptied database keeps its instance id, so it is not this.
  const evicted = sentinel?.hadData === true && sentinel.instance !== identity.previous && !identity.hasMemories;
  let sentinelState: SentinelState | null = null;
  if (sentinel !== undefined && identity.instance !== null) {
    const hadData = identity.hasMemories || (sentinel?.instance === identity.instance && sentinel.hadData);
    sentinelState = { key: sentinelKey, instance: identity.instance, hadData };
    if (sentinel?.instance !== identity.instance || sentinel.hadData !== hadData) {
      if (!(await writeSentinel(sentinelKey, { instance: identity.instance, hadData }))) sentinelState.hadData = false;
    }
  }
  return new SqliteStore(db, options.backend === 'idb' ? 'idb' : 'opfs', connect, { evicted, sentinel: sentinelState }, key !== null);
}

/**
 * Before a new data key's envelope is stored: the file must open with it, so it is new or empty. An existing plain
 * database is refused (NOT_ENCRYPTED: Engram does not encrypt in place), as is one encrypted under a key whose
 * record is gone. Nothing is written either way.
 */
async function checkNewKey(options: SqliteStoreOptions, dataKey: Uint8Array): Promise<void> {
  try {
    await (await Connection.open(options.backend, options.name, dataKey)).close();
    return;
  } catch (error) {
    if (!isSqliteError(error) || error.code !== SQLITE_NOTADB) throw openError(error, null, options);
  }
  const plain = await Connection.open(options.backend, options.name).catch(() => null);
  if (plain) {
    await plain.close();
    throw notEncrypted(options.name);
  }
  throw new EngramError(ErrorCode.STORE_FAILED, `database "${options.name}" is encrypted, but its key record (IndexedDB "engram-keys") is gone: it cannot be opened`);
}

interface Identity {
  /** The instance id the database had when opened; null when it had none (new, or older than the id). */
  previous: string | null;
  /** Its instance id now; null when it had none and one could not be written (a full disk). */
  instance: string | null;
  hasMemories: boolean;
}

async function identify(db: Connection): Promise<Identity> {
  const stored = await db.scalar('SELECT value FROM meta WHERE key = ?1', [INSTANCE_KEY]);
  const previous = typeof stored === 'string' ? stored : null;
  const memories = await memoriesExist(db);
  if (previous !== null) return { previous, instance: previous, hasMemories: memories };
  const instance = crypto.randomUUID();
  await db.transaction(() => db.run('INSERT OR IGNORE INTO meta (key, value) VALUES (?1, ?2)', [INSTANCE_KEY, instance]));
  return { previous, instance, hasMemories: memories };
}

async function memoriesExist(db: Connection): Promise<boolean> {
  return Number(await db.scalar('SELECT EXISTS (SELECT 1 FROM memories)')) === 1;
}

/** `memoriesExist` on a connection of its own, closed if the query fails. */
async function hasMemories(db: Connection, name: string): Promise<boolean> {
  try {
    return await memoriesExist(db);
  } catch (error) {
    const failure = isCorruption(error) ? await corruptionError(db, error, `cannot open database "${name}"`) : error;
    await db.close().catch(() => undefined);
    throw toEngramError(failure, ErrorCode.STORE_FAILED, `cannot open database "${name}"`);
  }
}

/** Page size of a new database on OPFS: faster bulk writes and fewer reads on open (docs/worker.md). */
const PAGE_SIZE = 16384;
/** Quiet time after a removal before the WAL is checkpointed and truncated. */
const CHECKPOINT_IDLE_MS = 1_000;

/** At most this many quick_check findings go into a STORE_CORRUPT error: the first ones say where the damage is. */
const QUICK_CHECK_LIMIT = 20;

/**
 * What `PRAGMA quick_check` finds on `db` (['ok'] for an intact file), at most QUICK_CHECK_LIMIT lines; when the check
 * itself cannot finish (an encrypted page whose MAC fails stops it), its last line says where it stopped.
 */
export async function quickCheck(db: Connection): Promise<string[]> {
  const findings: string[] = [];
  try {
    await db.each(`PRAGMA quick_check(${QUICK_CHECK_LIMIT})`, [], (row) => findings.push(row.text(0)));
  } catch (error) {
    findings.push(`quick_check stopped: ${error instanceof Error ? error.message : String(error)}`);
  }
  return findings;
}

/** STORE_CORRUPT for a corruption error met on `db`, with quick_check's findings in its details. */
async function corruptionError(db: Connection, error: unknown, what: string): Promise<EngramError> {
  const findings = await quickCheck(db);
  const reason = error instanceof Error ? error.message : String(error);
  return new EngramError(ErrorCode.STORE_CORRUPT, `${what}: the database file is damaged (${reason}); salvageMemory() reads what is left of it`, {
    cause: error,
    details: { quickCheck: findings, sqliteCode: isSqliteError(error) ? error.code : null },
  });
}

/** A failure while opening or migrating: a full disk is QUOTA_EXCEEDED, and the database is left as it was. */
function openError(error: unknown, ioError: unknown, options: SqliteStoreOptions): EngramError {
  if (isQuotaFailure(error, ioError)) {
    return new EngramError(
      ErrorCode.QUOTA_EXCEEDED,
      `cannot open database "${options.name}" (${options.backend}): storage quota exceeded; the database was left as it was (at its schema version), free space and open it again`,
      { cause: error },
    );
  }
  if (isSqliteError(error) && error.code === SQLITE_NOTADB) {
    if (options.encryption) return new EngramError(ErrorCode.STORE_FAILED, `database "${options.name}" does not decrypt with the key its key record holds`, { cause: error });
    // A plain open of an encrypted file whose key record could not be read: never treat it as an empty database.
    return keyRequired(options.name, error);
  }
  return toEngramError(error, ErrorCode.STORE_FAILED, `cannot open database "${options.name}" (${options.backend})`);
}

async function openConnection(options: SqliteStoreOptions, key: Uint8Array | null): Promise<Connection> {
  const connection = await Connection.open(options.backend, options.name, key).catch(async (error: unknown) => {
    // NOTADB at open is a key matter (openError); a malformed first read is damage, checked on a salvage connection.
    if (!isCorruption(error) || (isSqliteError(error) && error.code === SQLITE_NOTADB)) throw openError(error, null, options);
    const salvage = await Connection.open(options.backend, options.name, key, { salvage: true }).catch(() => null);
    const failure = salvage
      ? await corruptionError(salvage, error, `cannot open database "${options.name}" (${options.backend})`)
      : new EngramError(ErrorCode.STORE_CORRUPT, `cannot open database "${options.name}" (${options.backend}): the database file is damaged`, { cause: error, details: { quickCheck: ['quick_check not run: the file does not open'] } });
    await salvage?.close().catch(() => undefined);
    throw failure;
  });
  try {
    // Only a new database takes it (an existing one keeps its page size). Opening reads every record and vector,
    // in fewer VFS reads with larger pages. (IDBBatchAtomicVFS refuses a page size change.)
    if (options.backend !== 'idb') await connection.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
    // IndexedDB: a migration's pages stay in memory until its commit, which IDBBatchAtomicVFS writes as one IDB
    // transaction. Pages spilled before the commit are written as a pending version that, when the commit fails
    // for lack of space, must be cleaned up by a write before the database can be read again: on a full disk, not
    // even a read would work until space is freed. (A migration's size is bounded by the database's.)
    if (options.backend === 'idb') await connection.exec('PRAGMA cache_spill = OFF');
    await migrate(connection, options.name);
    if (options.backend === 'idb') await connection.exec('PRAGMA cache_spill = ON');
    // OPFS: WAL (on the connection's exclusive lock, see Connection.open) makes small commits much cheaper than the
    // rollback journal (docs/worker.md). Set after the version check so a newer Engram's database is never written.
    // IndexedDB keeps its default journal: IDBBatchAtomicVFS commits a whole transaction as one IDB transaction.
    if (options.backend !== 'idb') await connection.exec('PRAGMA journal_mode = WAL');
    await connection.exec('PRAGMA cache_size = -16000');
    // A removed memory's text is overwritten with zeros in the pages that held it, not left in free pages.
    await connection.exec('PRAGMA secure_delete = ON');
    // Statement journals (an upsert of a batch inside the write transaction keeps one) in memory, not as OPFS files:
    // they hold the original of every page a statement changes, so on disk they cost as much as the WAL writes.
    await connection.exec('PRAGMA temp_store = MEMORY');
    return connection;
  } catch (error) {
    const ioError = connection.lastIoError();
    const failure = isCorruption(error) ? await corruptionError(connection, error, `cannot open database "${options.name}" (${options.backend})`) : openError(error, ioError, options);
    await connection.close().catch(() => undefined);
    throw failure;
  }
}

/** Runs one chunk statement of sqlite-rows.ts's record columns and appends its records to `records`. */
export async function readRecordChunk(db: Connection, sql: string, params: (string | number)[], records: MemoryRecord[]): Promise<{ rows: number; lastRowid: number }> {
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

/** What the store keeps of its sentinel, to record the first memory of an instance that had none. */
interface SentinelState {
  key: string;
  instance: string;
  hadData: boolean;
}

export class SqliteStore implements Store {
  readonly persistent = true;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;
  private checkpointTimer: ReturnType<typeof setTimeout> | undefined;
  /** Set by an I/O failure: the next call starts on a fresh connection (SQLite recovers from the file). */
  private broken = false;

  /**
   * True when this open found the database missing or empty although the eviction sentinel says it held memories:
   * the browser evicted the origin's data or someone deleted it (see sentinel.ts). The store is usable, and empty.
   */
  readonly evicted: boolean;
  private readonly sentinel: SentinelState | null;

  constructor(
    private db: Connection,
    readonly kind: 'opfs' | 'idb',
    private readonly reconnect: () => Promise<Connection>,
    eviction: { evicted: boolean; sentinel: SentinelState | null } = { evicted: false, sentinel: null },
    /** Its pages are encrypted (SqliteStoreOptions.encryption). */
    readonly encrypted = false,
  ) {
    this.evicted = eviction.evicted;
    this.sentinel = eviction.sentinel;
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
        if (indexedChange) await this.db.run('UPDATE state SET change_counter = change_counter + 1');
      }),
    );
    if (removed && this.kind === 'opfs') this.checkpointWhenIdle();
    // The first memory of an instance arms the sentinel: from now on, losing this database is reported.
    const sentinel = this.sentinel;
    if (sentinel && !sentinel.hadData && records) {
      sentinel.hadData = true; // one sentinel write at a time; set back if it fails, so a later write retries
      sentinel.hadData = await writeSentinel(sentinel.key, { instance: sentinel.instance, hadData: true });
    }
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
          this.db = await this.reconnect();
          this.broken = false;
        }
        this.db.clearIoError();
        return await operation();
      } catch (error) {
        if (isCorruption(error)) throw await corruptionError(this.db, error, `${what} failed (${this.kind})`);
        throw this.mapError(error, what);
      }
    };
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result;
  }

  private mapError(error: unknown, what: string): EngramError {
    if (isIoFailure(error)) this.broken = true;
    if (isQuotaFailure(error, this.db.lastIoError())) {
      return new EngramError(ErrorCode.QUOTA_EXCEEDED, `${what}: storage quota exceeded; nothing from this call was saved, earlier data is intact`, {
        cause: error,
      });
    }
    return toEngramError(error, ErrorCode.STORE_FAILED, `${what} failed (${this.kind})`);
  }
}
