/**
 * Engram's SQLite store on a file, for Node: the browser's schema, statements and loading code
 * (../sqlite-store.ts) on better-sqlite3, an optional peer dependency loaded only when a file is opened.
 */
import { chmodSync, closeSync, mkdirSync, openSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../../errors.js';
import { runStatement, scalarOf, type RowReader, type SqlConnection, type SqlValue } from '../sql-connection.js';
import { migrate } from '../sqlite-schema.js';
import { PAGE_SIZE, SqliteStore } from '../sqlite-store.js';
import type { Store } from '../store.js';

export interface NodeStoreOptions {
  /**
   * The database file (created, with its directory, when missing). It holds the memories in clear, so the folder it
   * creates is 0700 and the database, its journal and its WAL are 0600, whatever the umask.
   */
  path: string;
  /**
   * How long to wait for another process holding the file to close it before failing with STORE_LOCKED.
   * Default 0: fail at once.
   */
  lockTimeoutMs?: number;
  /** Not supported: Node files are not encrypted (better-sqlite3 has no cipher); passing it is INVALID_INPUT. */
  encryption?: undefined;
}

type Database = BetterSqlite3.Database;

/**
 * Opens (creating or migrating) the Engram database at `path`. One process at a time: the connection holds SQLite's
 * exclusive lock until `close()`, because each engine keeps the memories in memory and writes whole records, so two
 * writers would overwrite each other's changes. Another process gets STORE_LOCKED (after `lockTimeoutMs`), and so does a
 * second open in this process while the first is open (its message says so).
 *
 * @example
 * const engine = await createEngine({ store: await openNodeStore({ path: 'data/memories.sqlite3' }), embedder: await createEmbedder() });
 */
export async function openNodeStore(options: NodeStoreOptions): Promise<Store> {
  if (typeof options?.path !== 'string' || options.path === '') throw invalidInput('openNodeStore: `path` must be a file path');
  if ((options as { encryption?: unknown }).encryption != null) {
    throw invalidInput('openNodeStore: `encryption` is not supported in Node (better-sqlite3 has no cipher): the file is stored in clear');
  }
  const timeout = options.lockTimeoutMs ?? 0;
  if (!Number.isFinite(timeout) || timeout < 0) throw invalidInput(`openNodeStore: lockTimeoutMs must be a number ≥ 0, got ${timeout}`);
  const path = resolve(options.path);
  const Driver = await loadDriver();
  let held: string | undefined;
  const connect = async (): Promise<SqlConnection> => {
    let db: Database | undefined;
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      if (held === undefined) {
        // By the real path: two spellings of one file are one file. Checked before SQLite, whose refusal would name another process.
        const real = join(realpathSync(dirname(path)), basename(path));
        if (openHere.has(real)) {
          throw new EngramError(ErrorCode.STORE_LOCKED, `database file "${path}" is already open in this process: close the store opened on it first, or share its engine`, {
            details: { path, holder: 'this process' },
          });
        }
        openHere.add((held = real));
      }
      createPrivate(path);
      db = new Driver(path, { timeout });
      // Held from the first read until close: no other connection reads or writes meanwhile.
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma(`page_size = ${PAGE_SIZE}`);
      const connection = new FileConnection(db);
      await migrate(connection, path);
      // After the version check, so a newer Engram's file is never written. Under the exclusive lock the WAL index
      // lives in the process's memory (no -shm file).
      db.pragma('journal_mode = WAL');
      db.pragma('secure_delete = ON');
      // A file an earlier Engram created readable by others (0644), or left behind: SQLite gives a new journal or
      // WAL the database's own mode.
      for (const file of [path, `${path}-journal`, `${path}-wal`]) makePrivate(file);
      return connection;
    } catch (error) {
      db?.close();
      throw openError(error, path);
    }
  };
  let connection: SqlConnection;
  try {
    connection = await connect();
  } catch (error) {
    if (held !== undefined) openHere.delete(held);
    throw error;
  }
  // Once: after this store closed, the path may be another store's.
  let release = () => {
    release = () => undefined;
    if (held !== undefined) openHere.delete(held);
  };
  return new FileStore(connection, () => release(), {
    kind: 'file',
    reconnect: connect,
    failure: (error) => (sqliteCode(error) === 'SQLITE_FULL' ? 'quota' : sqliteCode(error)?.startsWith('SQLITE_IOERR') ? 'io' : null),
  });
}

/** Database files open in this process, by real path (released on close). */
const openHere = new Set<string>();

/** The SQLite store that frees its path for another open in this process once closed. */
class FileStore extends SqliteStore {
  constructor(connection: SqlConnection, private readonly release: () => void, setup: ConstructorParameters<typeof SqliteStore>[1]) {
    super(connection, setup);
  }

  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      this.release();
    }
  }
}

/** Creates the database file 0600 before SQLite does (SQLite would make it 0644 less the umask). */
function createPrivate(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Takes group and other permissions off `file` when it exists; a file someone else owns is left as it is. */
function makePrivate(file: string): void {
  try {
    const { mode } = statSync(file);
    if ((mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EPERM') throw error;
  }
}

async function loadDriver(): Promise<typeof BetterSqlite3> {
  try {
    return (await import('better-sqlite3')).default;
  } catch (error) {
    throw new EngramError(ErrorCode.STORE_FAILED, 'openNodeStore needs the optional peer dependency better-sqlite3 (npm install better-sqlite3@12.11.1)', { cause: error });
  }
}

function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

function openError(error: unknown, path: string): EngramError {
  if (error instanceof EngramError) return error;
  const code = sqliteCode(error);
  if (code?.startsWith('SQLITE_BUSY') || code?.startsWith('SQLITE_LOCKED')) {
    return new EngramError(ErrorCode.STORE_LOCKED, `database file "${path}" is open in another process; close it there first`, { cause: error, details: { path, holder: 'another process' } });
  }
  if (code === 'SQLITE_FULL') return new EngramError(ErrorCode.QUOTA_EXCEEDED, `cannot open "${path}": the disk is full`, { cause: error });
  return toEngramError(error, ErrorCode.STORE_FAILED, `cannot open database file "${path}"`);
}

/** better-sqlite3 takes ?1, ?2, … as the keys of an object. */
function bind(bindings: readonly SqlValue[]): Record<number, unknown>[] {
  if (bindings.length === 0) return [];
  const named: Record<number, unknown> = {};
  bindings.forEach((value, i) => (named[i + 1] = value));
  return [named];
}

/** SqlConnection over one better-sqlite3 connection (synchronous underneath). */
class FileConnection implements SqlConnection {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(private readonly db: Database) {}

  async exec(sql: string): Promise<void> {
    this.db.exec(sql);
  }

  async each(sql: string, bindings: readonly SqlValue[], onRow?: (row: RowReader) => void): Promise<void> {
    const statement = this.prepare(sql);
    if (!statement.reader) {
      statement.run(...bind(bindings));
      return;
    }
    for (const row of statement.raw(true).iterate(...bind(bindings)) as Iterable<unknown[]>) {
      onRow?.({
        text: (column) => String(row[column]),
        number: (column) => Number(row[column]),
        isNull: (column) => row[column] === null,
        value: (column) => {
          const value = row[column];
          return value instanceof Uint8Array ? new Uint8Array(value) : (value as SqlValue);
        },
        blob: (column) => row[column] as Uint8Array,
      });
    }
  }

  run(sql: string, bindings: readonly SqlValue[] = []): Promise<void> {
    return runStatement(this, sql, bindings);
  }

  scalar(sql: string, bindings: readonly SqlValue[] = []): Promise<SqlValue> {
    return scalarOf(this, sql, bindings);
  }

  async transaction<T>(body: () => Promise<T>): Promise<T> {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = await body();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  async close(): Promise<void> {
    this.statements.clear();
    this.db.close();
  }

  lastIoError(): unknown {
    return null;
  }

  clearIoError(): void {}

  private prepare(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }
}
