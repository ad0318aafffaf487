import * as SQLite from '@journeyapps/wa-sqlite';
import { toHex } from '../../util/ids.js';
import { runStatement, scalarOf, type RowReader, type SqlValue } from '../sql-connection.js';

/**
 * Where the database file lives and through which wa-sqlite VFS:
 * - 'opfs': OPFSCoopSyncVFS on the synchronous build (the default; see docs/worker.md for the measurements).
 * - 'opfs-pool': AccessHandlePoolVFS on the synchronous build (kept for the benchmark: single connection only,
 *   and a quota error thrown by its write escapes into WebAssembly instead of becoming SQLITE_IOERR).
 * - 'idb': IDBBatchAtomicVFS on the asyncify build, for contexts without OPFS sync access handles.
 */
export type SqliteBackend = 'opfs' | 'opfs-pool' | 'idb';

interface Runtime {
  sqlite3: SQLiteAPI;
  module: EmscriptenModule;
}

interface EmscriptenModule {
  ccall(name: string, returns: 'number', argTypes: string[], args: unknown[]): number;
}

/**
 * The asyncify build serves the IndexedDB VFS (its methods are asynchronous). The `mc-` builds are SQLite3 Multiple
 * Ciphers (page-level encryption, docs/worker.md): loaded only for an encrypted database, so a plain one pays nothing.
 */
type Build = 'sync' | 'async' | 'mc-sync' | 'mc-async';

// One WebAssembly instance per build and worker; each database registers its own VFS on it.
const runtimes = new Map<Build, Promise<Runtime>>();

function runtime(build: Build): Promise<Runtime> {
  let pending = runtimes.get(build);
  if (!pending) {
    pending = (async () => {
      // Each build finds its WASM through its own `new URL(file, import.meta.url)`, which the app's bundler emits.
      const factory = (
        build === 'sync'
          ? await import('@journeyapps/wa-sqlite/dist/wa-sqlite.mjs')
          : build === 'async'
            ? await import('@journeyapps/wa-sqlite/dist/wa-sqlite-async.mjs')
            : build === 'mc-sync'
              ? await import('@journeyapps/wa-sqlite/dist/mc-wa-sqlite.mjs')
              : await import('@journeyapps/wa-sqlite/dist/mc-wa-sqlite-async.mjs')
      ).default;
      const module = (await factory()) as EmscriptenModule;
      return { sqlite3: SQLite.Factory(module), module };
    })();
    runtimes.set(build, pending);
  }
  return pending;
}

function buildFor(backend: SqliteBackend, encrypted: boolean): Build {
  const build = backend === 'idb' ? 'async' : 'sync';
  return encrypted ? `mc-${build}` : build;
}

/** Starts loading the SQLite build a database will open with, so compiling its WASM overlaps other work. */
export function preloadSqlite(backend: SqliteBackend, encrypted: boolean): void {
  runtime(buildFor(backend, encrypted)).catch(() => undefined);
}

/** SQLite's "file is not a database": what a page that does not decrypt (a wrong key, or a key on a plain file) gives. */
export const SQLITE_NOTADB = 26;

/** SQLite's "database disk image is malformed" (and its extended codes): a page that does not parse. */
const SQLITE_CORRUPT = 11;

/**
 * True for an error that says the file is damaged: SQLITE_CORRUPT, or SQLITE_NOTADB once the database is open (at
 * open, NOTADB means a wrong key or an encrypted file, see browser-store.ts). sqlite3mc reports a page whose MAC
 * fails as one of these too.
 */
export function isCorruption(error: unknown): boolean {
  return isSqliteError(error) && ((error.code & 0xff) === SQLITE_CORRUPT || error.code === SQLITE_NOTADB);
}

/** The page cipher of an encrypted database (sqlite3mc's name); recorded in its key envelope (keyring.ts). */
export const PAGE_CIPHER = 'chacha20';

/**
 * Wraps `vfs` in sqlite3mc's encrypting VFS and returns the wrapper's name. The wrapper encrypts every page of the
 * database, its WAL and its journals on their way to `vfs`.
 */
function encryptingVfs(module: EmscriptenModule, vfs: WaSqliteVfs): string {
  const rc = module.ccall('sqlite3mc_vfs_create', 'number', ['string', 'number'], [vfs.name, 0]);
  if (rc !== 0) throw new SQLite.SQLiteError(`cannot create the encrypting VFS over ${vfs.name}`, rc);
  return `multipleciphers-${vfs.name}`;
}

// VFS names must be unique per WebAssembly instance (a database may be opened again in the same worker).
let vfsCount = 0;

/** Creates the VFS for one database and returns it with the file name SQLite should open through it. */
async function createVfs(backend: SqliteBackend, database: string, module: unknown): Promise<{ vfs: WaSqliteVfs; file: string }> {
  switch (backend) {
    case 'opfs': {
      const { OPFSCoopSyncVFS } = await import('@journeyapps/wa-sqlite/src/examples/OPFSCoopSyncVFS.js');
      // A real SQLite file in OPFS (filesystem transparent: it can be exported as is).
      return { vfs: await OPFSCoopSyncVFS.create(`engram-opfs-${++vfsCount}`, module), file: `/engram/${database}.sqlite3` };
    }
    case 'opfs-pool': {
      const { AccessHandlePoolVFS } = await import('@journeyapps/wa-sqlite/src/examples/AccessHandlePoolVFS.js');
      // Its name is also its OPFS directory, so it stays fixed per database.
      return { vfs: await AccessHandlePoolVFS.create(`engram-pool/${database}`, module), file: `${database}.sqlite3` };
    }
    case 'idb': {
      // wa-sqlite's bundled declaration of this class predates its static `create`.
      const { IDBBatchAtomicVFS } = (await import('@journeyapps/wa-sqlite/src/examples/IDBBatchAtomicVFS.js')) as unknown as {
        IDBBatchAtomicVFS: { create(name: string, module: unknown, options: { idbName: string }): Promise<WaSqliteVfs> };
      };
      const vfs = await IDBBatchAtomicVFS.create(`engram-idb-${++vfsCount}`, module, { idbName: `engram-${database}` });
      return { vfs, file: `${database}.sqlite3` };
    }
  }
}

/** Room for `/engram/` + a 100-character database name + `.sqlite3-journal`, and then some. */
const MAX_PATHNAME = 256;

const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
const AsyncFunction = (async () => undefined).constructor;

/**
 * IDBBatchAtomicVFS lets some asynchronous methods throw (jUnlock and jLock, after an IndexedDB transaction was
 * aborted, e.g. over quota), and a throw there leaves the asyncify build waiting forever. Turn those throws into
 * SQLITE_IOERR like its other methods do; the store then reopens the connection (see SqliteStore).
 */
function guardAsyncMethods(vfs: WaSqliteVfs): void {
  const target = vfs as unknown as Record<string, unknown>;
  for (let proto: object | null = Object.getPrototypeOf(vfs); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      const method = target[key];
      if (!/^j[A-Z]/.test(key) || !(method instanceof AsyncFunction) || Object.hasOwn(target, key)) continue;
      const original = method as (...args: unknown[]) => Promise<number>;
      // Still an async function: wa-sqlite decides how to call a VFS method by that.
      target[key] = async function (this: unknown, ...args: unknown[]): Promise<number> {
        try {
          return await original.apply(vfs, args);
        } catch (error) {
          vfs.lastError = error;
          return SQLITE_IOERR;
        }
      };
    }
  }
}

let lastIdbAbort: DOMException | null = null;
let recordingIdbAborts = false;

/**
 * IDBBatchAtomicVFS reports an aborted IndexedDB transaction as a plain "transaction aborted" error, dropping the
 * reason (QuotaExceededError when the disk is full). Keep the reason of the last abort in this worker.
 */
function recordIdbAborts(): void {
  if (recordingIdbAborts) return;
  recordingIdbAborts = true;
  const transaction = IDBDatabase.prototype.transaction;
  IDBDatabase.prototype.transaction = function (this: IDBDatabase, ...args: Parameters<typeof transaction>) {
    const tx = transaction.apply(this, args);
    tx.addEventListener('abort', () => (lastIdbAbort = tx.error));
    return tx;
  } as typeof transaction;
}

/** True when this context can use OPFS synchronous access handles (dedicated workers in current browsers). */
export function hasOpfsSyncAccess(): boolean {
  return (
    typeof navigator !== 'undefined' &&
    typeof navigator.storage?.getDirectory === 'function' &&
    typeof FileSystemFileHandle !== 'undefined' &&
    'createSyncAccessHandle' in FileSystemFileHandle.prototype
  );
}

export function isSqliteError(error: unknown): error is Error & { code: number } {
  return error instanceof SQLite.SQLiteError;
}

function isQuotaException(error: unknown): error is DOMException {
  return error instanceof DOMException && error.name === 'QuotaExceededError';
}

/** True for an SQLite I/O failure (any SQLITE_IOERR, or SQLITE_FULL): the connection should be opened again. */
export function isIoFailure(error: unknown): boolean {
  return isSqliteError(error) && ((error.code & 0xff) === SQLITE_IOERR || error.code === SQLITE_FULL);
}

/**
 * True when `error` (thrown by SQLite or the VFS) comes from a full disk. `ioError` is the JS-side error the VFS
 * kept for the last I/O failure (`Connection.lastIoError`): SQLite itself reports only SQLITE_IOERR.
 */
export function isQuotaFailure(error: unknown, ioError: unknown): boolean {
  if (isQuotaException(error)) return true;
  if (!isSqliteError(error)) return false;
  return error.code === SQLITE_FULL || ((error.code & 0xff) === SQLITE_IOERR && isQuotaException(ioError));
}

/**
 * One wa-sqlite connection with a prepared-statement cache. Calls must not interleave (wa-sqlite is async and a
 * connection has one transaction state): the store serialises them.
 */
export class Connection {
  private readonly statements = new Map<string, number>();

  private constructor(
    private readonly sqlite3: SQLiteAPI,
    private readonly db: number,
    private readonly vfs: WaSqliteVfs,
  ) {}

  /**
   * Opens (creating if needed) the database `database` of `backend`. With `key` (32 bytes), through SQLite3
   * Multiple Ciphers: a new database is encrypted from its first page, and an existing one must decrypt with
   * `key`, else this throws SQLITE_NOTADB (also for a plain database opened with a key).
   */
  static async open(backend: SqliteBackend, database: string, key: Uint8Array | null = null, options: { salvage?: boolean } = {}): Promise<Connection> {
    const { sqlite3, module } = await runtime(buildFor(backend, key !== null));
    const { vfs, file } = await createVfs(backend, database, module);
    if (backend === 'idb') {
      guardAsyncMethods(vfs);
      recordIdbAborts();
    }
    // wa-sqlite's default of 64 bytes fits no database name over ~40 characters once a path and '-journal' are added.
    vfs.mxPathname = MAX_PATHNAME;
    sqlite3.vfs_register(vfs, false);
    vfs.lastError = null;
    lastIdbAbort = null;
    let db: number | undefined;
    try {
      const vfsName = key ? encryptingVfs(module, vfs) : vfs.name;
      // Salvage never creates a database that is not there.
      db = await sqlite3.open_v2(file, options.salvage ? SQLite.SQLITE_OPEN_READWRITE : SQLite.SQLITE_OPEN_CREATE | SQLite.SQLITE_OPEN_READWRITE, vfsName);
      const connection = new Connection(sqlite3, db, vfs);
      // Salvage reads a page whose MAC fails as it decrypts (a flipped bit stays one flipped bit under the stream
      // cipher) rather than losing the whole page; never in a normal open, where the MAC is what detects tampering.
      if (key && options.salvage) await connection.exec('PRAGMA hmac_check = 0');
      // A raw key (x'…'): the data key is random, so sqlite3mc's own passphrase KDF would add only time.
      if (key) await connection.exec(`PRAGMA cipher = '${PAGE_CIPHER}'; PRAGMA key = "x'${toHex(key)}'"`);
      // OPFS databases run in WAL mode without shared memory (the store sets it), which SQLite allows only with an
      // exclusive lock; a connection without it cannot even read them. Only the leader's worker opens the file.
      // (Through sqlite3mc's VFS, such a read does not fail cleanly: it calls the missing shared-memory method.)
      if (backend !== 'idb') await connection.exec('PRAGMA locking_mode = EXCLUSIVE');
      // Salvage writes nothing of its own (SQLite still folds a WAL into the file when it closes). writable_schema
      // also lets SQLite read a file shorter than its header says (else every read of it is SQLITE_CORRUPT).
      if (options.salvage) await connection.exec('PRAGMA query_only = ON; PRAGMA writable_schema = ON');
      // The key is only checked when the first page is read: read it now, so a wrong key fails here.
      if (key) await connection.exec('SELECT count(*) FROM sqlite_schema');
      return connection;
    } catch (error) {
      const ioError = lastIdbAbort ?? vfs.lastError;
      if (db !== undefined) await sqlite3.close(db).catch(() => undefined);
      await Promise.resolve()
        .then(() => vfs.close())
        .catch(() => undefined);
      // The SQLite error says only "I/O error": hand on the quota error behind it, so the store maps it.
      throw !isQuotaException(error) && isQuotaException(ioError) && isQuotaFailure(error, ioError) ? ioError : error;
    }
  }

  /** The JS-side error behind the last I/O failure (wa-sqlite VFSs keep it), cleared by `clearIoError`. */
  lastIoError(): unknown {
    return lastIdbAbort ?? this.vfs.lastError ?? null;
  }

  clearIoError(): void {
    this.vfs.lastError = null;
    lastIdbAbort = null;
  }

  /** Runs one or more statements without bindings. */
  async exec(sql: string): Promise<void> {
    await this.sqlite3.exec(this.db, sql);
  }

  /** Runs one cached statement; `onRow` reads columns through the raw API (no per-row arrays). */
  async each(sql: string, bindings: readonly SqlValue[], onRow?: (row: RowReader) => void): Promise<void> {
    const stmt = await this.prepare(sql);
    const api = this.sqlite3;
    try {
      for (let i = 0; i < bindings.length; i++) api.bind(stmt, i + 1, bindings[i] ?? null);
      const reader: RowReader = {
        text: (column) => api.column_text(stmt, column),
        number: (column) => api.column_double(stmt, column),
        isNull: (column) => api.column_type(stmt, column) === SQLite.SQLITE_NULL,
        value: (column) => {
          const value = api.column(stmt, column);
          return value instanceof Uint8Array ? value.slice() : value;
        },
        // A view into WebAssembly memory, valid only until the next step: callers copy it.
        blob: (column) => api.column_blob(stmt, column),
      };
      while ((await api.step(stmt)) === SQLite.SQLITE_ROW) onRow?.(reader);
    } finally {
      await api.reset(stmt).catch(() => undefined);
      api.clear_bindings(stmt);
    }
  }

  run(sql: string, bindings: readonly SqlValue[] = []): Promise<void> {
    return runStatement(this, sql, bindings);
  }

  /** First column of the first row, or null. */
  scalar(sql: string, bindings: readonly SqlValue[] = []): Promise<SqlValue> {
    return scalarOf(this, sql, bindings);
  }

  /** BEGIN IMMEDIATE … COMMIT, or ROLLBACK when `body` or the commit fails. */
  async transaction<T>(body: () => Promise<T>): Promise<T> {
    await this.exec('BEGIN IMMEDIATE');
    try {
      const result = await body();
      await this.exec('COMMIT');
      return result;
    } catch (error) {
      // A failed COMMIT may already have rolled back (e.g. SQLITE_FULL): then ROLLBACK itself fails.
      if (!this.sqlite3.get_autocommit(this.db)) await this.exec('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    for (const stmt of this.statements.values()) await this.sqlite3.finalize(stmt);
    this.statements.clear();
    await this.sqlite3.close(this.db);
    await this.vfs.close();
  }

  private async prepare(sql: string): Promise<number> {
    const cached = this.statements.get(sql);
    if (cached !== undefined) return cached;
    // `unscoped` keeps the statement alive after the iterator ends; close() finalizes it.
    const iterator = this.sqlite3.statements(this.db, sql, { unscoped: true })[Symbol.asyncIterator]();
    const first = await iterator.next();
    await iterator.return?.(undefined);
    if (first.done || typeof first.value !== 'number') throw new Error(`not one SQL statement: ${sql}`);
    this.statements.set(sql, first.value);
    return first.value;
  }
}
