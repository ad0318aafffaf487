import { EngramError, ErrorCode, invalidInput, toEngramError } from '../src/errors.js';
import type { PackedVectors, Store, StoreWrite } from '../src/store/store.js';
import type { MemoryRecord } from '../src/types.js';
import { Connection, isSqliteError, type SqliteBackend } from './sqlite.js';
import { splitUtf8 } from './utf8.js';

/** Bump when the schema changes and add the step to `migrations`. A database newer than this is refused. */
export const SCHEMA_VERSION = 2;

/** `migrations[v]` takes a database from user_version v to v + 1 (exported for the migration test). */
export const migrations: ((db: Connection) => Promise<void>)[] = [
  async (db) => {
    await db.exec(`
      CREATE TABLE memories (
        id TEXT PRIMARY KEY NOT NULL,
        text TEXT NOT NULL,
        created_at INTEGER NOT NULL, -- epoch ms; INTEGER affinity stores whole numbers compactly, fractions as REAL
        priority REAL NOT NULL,
        pinned INTEGER NOT NULL,
        project TEXT,
        scope TEXT,
        tags TEXT NOT NULL,          -- JSON array
        kind TEXT,
        valid_until INTEGER,
        meta TEXT,                   -- JSON object
        superseded_by TEXT,
        access_count INTEGER NOT NULL,
        last_accessed_at INTEGER,
        updated_at INTEGER
      );
      -- Keyed by memory first so removing a memory's vectors is a prefix range; loading scans once anyway.
      CREATE TABLE vectors (
        memory_id TEXT NOT NULL,
        embedder_id TEXT NOT NULL,
        dim INTEGER NOT NULL,
        data BLOB NOT NULL,          -- dim little-endian float32
        PRIMARY KEY (memory_id, embedder_id)
      ) WITHOUT ROWID;
      CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value) WITHOUT ROWID;
      CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), change_counter INTEGER NOT NULL);
      INSERT INTO state VALUES (1, 0);
    `);
  },
  // Vectors move to a rowid table. Keyed by memory id, each batch of new memories (random UUIDs) landed on pages all
  // over the table, so a commit rewrote nearly every page of it: at 20k memories a 1,000-memory write put 7.6 MB in
  // the WAL and took ~500 ms (docs/worker.md). Rows now append in insertion order; only the small unique index on
  // (memory_id, embedder_id) takes the random inserts.
  async (db) => {
    await db.exec(`
      CREATE TABLE vectors_v2 (
        memory_id TEXT NOT NULL,
        embedder_id TEXT NOT NULL,
        dim INTEGER NOT NULL,
        data BLOB NOT NULL,          -- dim little-endian float32
        UNIQUE (memory_id, embedder_id)
      );
      INSERT INTO vectors_v2 (memory_id, embedder_id, dim, data) SELECT memory_id, embedder_id, dim, data FROM vectors;
      DROP TABLE vectors;
      ALTER TABLE vectors_v2 RENAME TO vectors;
    `);
  },
];

// Record fields in the order a written JSON row carries them.
const COLUMNS = [
  'id', 'text', 'created_at', 'priority', 'pinned', 'project', 'scope', 'tags',
  'kind', 'valid_until', 'meta', 'superseded_by', 'access_count', 'last_accessed_at', 'updated_at',
] as const;
type Row = [
  id: string, text: string, createdAt: number, priority: number, pinned: 0 | 1, project: string | null,
  scope: string | null, tags: string[], kind: string | null, validUntil: number | null,
  meta: Record<string, unknown> | null, supersededBy: string | null, accessCount: number,
  lastAccessedAt: number | null, updatedAt: number | null,
];

// A whole batch binds as one JSON array and is expanded by json_each: one bind and one step per batch instead of
// one per field, which is what makes bulk writes fast through the WebAssembly boundary. (`WHERE true` keeps SQLite
// from reading ON CONFLICT as part of the SELECT's join.)
const UPSERT_RECORDS = `
  INSERT INTO memories (${COLUMNS.join(', ')})
  SELECT ${COLUMNS.map((_, i) => `value->>${i}`).join(', ')} FROM json_each(?1) WHERE true
  ON CONFLICT (id) DO UPDATE SET ${COLUMNS.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')}`;
// Whether a batch of rows adds a memory or changes a text or tags: only then does the change counter move.
const CHANGES_INDEXED = `
  SELECT EXISTS (SELECT 1 FROM json_each(?1) AS new LEFT JOIN memories AS old ON old.id = new.value->>0
                 WHERE old.id IS NULL OR old.text IS NOT new.value->>1 OR old.tags IS NOT new.value->>7)`;
// Vectors of a batch bind as one blob; each row takes its slice. A replaced vector is updated where it is.
const UPSERT_VECTORS = `
  INSERT INTO vectors (memory_id, embedder_id, dim, data)
  SELECT value, ?2, ?3, substr(?4, key * ?5 + 1, ?5) FROM json_each(?1) WHERE true
  ON CONFLICT (memory_id, embedder_id) DO UPDATE SET dim = excluded.dim, data = excluded.data`;
// Records load in rowid (insertion) order, a chunk of rows per call, column by column in one pass: ids and texts as
// their concatenated UTF-8 bytes plus byte lengths (split in JS), tags as one JSON array of the stored JSON texts,
// and the fields that are usually at their defaults only for the rows where they are not. Building one JSON string
// of every row spent most of its time escaping texts (100k memories: 260–450 ms in SQLite + 90–180 ms JSON.parse).
const LOAD_CHUNK = 10_000;
const OPTIONAL_COLUMNS = COLUMNS.filter((c) => !['id', 'text', 'created_at', 'tags'].includes(c));
const LOAD_RECORDS = `
  SELECT count(*), max(rowid),
    CAST(group_concat(id, '') AS BLOB), json_group_array(octet_length(id)),
    CAST(group_concat(text, '') AS BLOB), json_group_array(octet_length(text)),
    json_group_array(created_at), '[' || group_concat(tags, ',') || ']',
    json_group_array(json_array(id, ${OPTIONAL_COLUMNS.map((c) => (c === 'meta' ? 'json(meta)' : c)).join(', ')}))
      FILTER (WHERE priority != 1 OR pinned != 0 OR access_count != 0 OR ${OPTIONAL_COLUMNS.filter((c) => !['priority', 'pinned', 'access_count'].includes(c)).map((c) => `${c} IS NOT NULL`).join(' OR ')})
  FROM (SELECT rowid, * FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT ${LOAD_CHUNK})`;
type OptionalRow = [
  id: string, priority: number, pinned: 0 | 1, project: string | null, scope: string | null, kind: string | null,
  validUntil: number | null, meta: Record<string, unknown> | null, supersededBy: string | null, accessCount: number,
  lastAccessedAt: number | null, updatedAt: number | null,
];

// Vectors load a chunk per call too, in rowid order (one pass over the table): ids as one JSON array, rows as one
// concatenated blob (group_concat copies blob bytes as they are), instead of a step and two column reads per memory.
const LOAD_VECTORS = `
  SELECT count(*), max(rowid), json_group_array(memory_id), CAST(group_concat(data, '') AS BLOB)
  FROM (SELECT rowid, memory_id, data FROM vectors
        WHERE rowid > ?3 AND embedder_id = ?1 AND dim = ?2 AND length(data) = ?4 ORDER BY rowid LIMIT ${LOAD_CHUNK})`;

export interface SqliteStoreOptions {
  /** Database name: letters, digits, '_', '-' and '.'. */
  name: string;
  backend: SqliteBackend;
}

/** Database names become file and IndexedDB names: keep them to a safe alphabet. */
export function checkDatabaseName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !/^[\w.-]{1,100}$/.test(name)) {
    throw invalidInput(`database name must be 1-100 letters, digits, '_', '-' or '.', got ${JSON.stringify(name)}`);
  }
}

/** Opens (creating or migrating) an Engram database in wa-sqlite. Only in a worker for the OPFS backends. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  checkDatabaseName(options.name);
  const connect = () => openConnection(options);
  return new SqliteStore(await connect(), options.backend === 'idb' ? 'idb' : 'opfs', connect);
}

/** Page size of a new database on OPFS (bench:worker: ingest 13k → 22k memories/s, fewer reads on open). */
const PAGE_SIZE = 16384;

async function openConnection(options: SqliteStoreOptions): Promise<Connection> {
  const connection = await Connection.open(options.backend, options.name).catch((error: unknown) => {
    throw toEngramError(error, ErrorCode.STORE_FAILED, `cannot open database "${options.name}" (${options.backend})`);
  });
  try {
    // Only a new database takes it (an existing one keeps its page size). Opening reads every record and vector:
    // 16 KB pages make a quarter of the VFS reads of the default 4 KB. (IDBBatchAtomicVFS refuses a page size change.)
    if (options.backend !== 'idb') await connection.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
    await migrate(connection, options.name);
    // OPFS: WAL (on the connection's exclusive lock, see Connection.open) made small commits ~10× cheaper than the
    // rollback journal (docs/worker.md). Set after the version check so a newer Engram's database is never written.
    // IndexedDB keeps its default journal: IDBBatchAtomicVFS commits a whole transaction as one IDB transaction.
    if (options.backend !== 'idb') await connection.exec('PRAGMA journal_mode = WAL');
    await connection.exec('PRAGMA cache_size = -16000');
    // Statement journals (an upsert of a batch inside the write transaction keeps one) in memory, not as OPFS files:
    // they hold the original of every page a statement changes, so on disk they cost as much as the WAL writes.
    await connection.exec('PRAGMA temp_store = MEMORY');
    return connection;
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw toEngramError(error, ErrorCode.STORE_FAILED, `cannot open database "${options.name}"`);
  }
}

async function migrate(db: Connection, name: string): Promise<void> {
  await db.transaction(async () => {
    // Read inside the write transaction so two openers cannot both migrate.
    const version = Number(await db.scalar('PRAGMA user_version'));
    if (version > SCHEMA_VERSION) {
      throw new EngramError(
        ErrorCode.SCHEMA_TOO_NEW,
        `database "${name}" has schema version ${version}, this version of Engram reads up to ${SCHEMA_VERSION}: upgrade Engram (the database was left untouched)`,
        { details: { version, supported: SCHEMA_VERSION } },
      );
    }
    for (let v = version; v < SCHEMA_VERSION; v++) await migrations[v]!(db);
    if (version !== SCHEMA_VERSION) await db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
}

export class SqliteStore implements Store {
  readonly persistent = true;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Set by an I/O failure: the next call starts on a fresh connection (SQLite recovers from the file). */
  private broken = false;

  constructor(
    private db: Connection,
    readonly kind: 'opfs' | 'idb',
    private readonly reconnect: () => Promise<Connection>,
  ) {}

  loadRecords(): Promise<MemoryRecord[]> {
    return this.serial('load memories', async () => {
      const records: MemoryRecord[] = [];
      for (let after = 0; ; ) {
        let rows = 0;
        let ids: string[] = [];
        let texts: string[] = [];
        let createdAt: number[] = [];
        let tags: string[][] = [];
        let optional: OptionalRow[] = [];
        await this.db.each(LOAD_RECORDS, [after], (row) => {
          rows = row.number(0);
          if (rows === 0) return;
          after = row.number(1);
          // A blob is a view into WebAssembly memory, valid until the next read: each is split as soon as it is taken.
          const idLengths = JSON.parse(row.text(3)) as number[];
          ids = splitUtf8(row.blob(2), idLengths);
          const textLengths = JSON.parse(row.text(5)) as number[];
          texts = splitUtf8(row.blob(4), textLengths);
          createdAt = JSON.parse(row.text(6)) as number[];
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
          const byId = new Map(records.slice(start).map((record) => [record.id, record]));
          for (const fields of optional) setOptionalFields(byId.get(fields[0])!, fields);
        }
        if (rows < LOAD_CHUNK) return records;
      }
    });
  }

  loadVectors(vectorSpace: string, dim: number): Promise<PackedVectors> {
    return this.serial('load vectors', async () => {
      const ids: string[] = [];
      const chunks: Uint8Array[] = [];
      for (let after = 0; ; ) {
        let rows = 0;
        await this.db.each(LOAD_VECTORS, [vectorSpace, dim, after, dim * 4], (row) => {
          rows = row.number(0);
          if (rows === 0) return;
          after = row.number(1);
          ids.push(...(JSON.parse(row.text(2)) as string[]));
          chunks.push(row.blob(3).slice());
        });
        if (rows < LOAD_CHUNK) break;
      }
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

  async write(change: StoreWrite): Promise<void> {
    // Encode before touching the database so bad input never opens a transaction.
    const records = change.put?.length ? JSON.stringify(change.put.map(toRow)) : null;
    const removed = change.remove?.length ? JSON.stringify(change.remove) : null;
    const vectors = change.vectors?.ids.length ? encodeVectors(change.vectors) : null;
    const meta = Object.entries(change.meta ?? {});
    return this.serial('write', () =>
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
      await this.db.close();
    });
    return this.closing;
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
        throw this.mapError(error, what);
      }
    };
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result;
  }

  private mapError(error: unknown, what: string): EngramError {
    if (isSqliteError(error) && isIoError(error.code)) this.broken = true;
    if (isQuotaError(error, this.db.lastIoError())) {
      return new EngramError(ErrorCode.QUOTA_EXCEEDED, `${what}: storage quota exceeded; nothing from this call was saved, earlier data is intact`, {
        cause: error,
      });
    }
    return toEngramError(error, ErrorCode.STORE_FAILED, `${what} failed (${this.kind})`);
  }
}

const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;

function isIoError(code: number): boolean {
  return (code & 0xff) === SQLITE_IOERR || code === SQLITE_FULL;
}

function isQuotaError(error: unknown, ioError: unknown): boolean {
  const isQuota = (e: unknown) => e instanceof DOMException && e.name === 'QuotaExceededError';
  if (isQuota(error)) return true;
  if (!isSqliteError(error)) return false;
  return error.code === SQLITE_FULL || ((error.code & 0xff) === SQLITE_IOERR && isQuota(ioError));
}

function finiteOrNull(value: number | undefined, field: string, id: string): number | null {
  if (value === undefined) return null;
  if (!Number.isFinite(value)) throw invalidInput(`memory ${id}: ${field} must be a finite number, got ${value}`);
  return value;
}

function toRow(record: MemoryRecord): Row {
  const { id } = record;
  return [
    id,
    record.text,
    finiteOrNull(record.createdAt, 'createdAt', id) ?? 0,
    finiteOrNull(record.priority, 'priority', id) ?? 1,
    record.pinned ? 1 : 0,
    record.project ?? null,
    record.scope ?? null,
    record.tags,
    record.kind ?? null,
    finiteOrNull(record.validUntil, 'validUntil', id),
    record.meta ?? null,
    record.supersededBy ?? null,
    finiteOrNull(record.accessCount, 'accessCount', id) ?? 0,
    finiteOrNull(record.lastAccessedAt, 'lastAccessedAt', id),
    finiteOrNull(record.updatedAt, 'updatedAt', id),
  ];
}

/** The fields a chunk loads only where they differ from a new record's defaults. */
function setOptionalFields(record: MemoryRecord, row: OptionalRow): void {
  const [, priority, pinned, project, scope, kind, validUntil, meta, supersededBy, accessCount, lastAccessedAt, updatedAt] = row;
  record.priority = priority;
  record.pinned = pinned === 1;
  record.accessCount = accessCount;
  // Optional fields are absent rather than undefined, as they were when stored.
  if (project !== null) record.project = project;
  if (scope !== null) record.scope = scope;
  if (kind !== null) record.kind = kind;
  if (validUntil !== null) record.validUntil = validUntil;
  if (meta !== null) record.meta = meta;
  if (supersededBy !== null) record.supersededBy = supersededBy;
  if (lastAccessedAt !== null) record.lastAccessedAt = lastAccessedAt;
  if (updatedAt !== null) record.updatedAt = updatedAt;
}

function encodeVectors(vectors: PackedVectors): [string, string, number, Uint8Array, number] {
  const { ids, dim, data, vectorSpace } = vectors;
  if (data.length !== ids.length * dim) {
    throw new EngramError(ErrorCode.DIMENSION_MISMATCH, `vectors: ${ids.length} ids × ${dim} dims needs ${ids.length * dim} floats, got ${data.length}`);
  }
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return [JSON.stringify(ids), vectorSpace, dim, bytes, dim * 4];
}
