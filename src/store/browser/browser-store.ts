/** Opening the SQLite store (src/store/sqlite-store.ts) on wa-sqlite: OPFS or IndexedDB, keys, the eviction sentinel. */
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../../errors.js';
import type { EncryptionOptions } from '../../util/encryption.js';
import { migrate } from '../sqlite-schema.js';
import { corruptionError, PAGE_SIZE, SqliteStore } from '../sqlite-store.js';
import { keyRequired, notEncrypted, unlock } from './keyring.js';
import { Connection, isCorruption, isIoFailure, isQuotaFailure, isSqliteError, preloadSqlite, SQLITE_NOTADB, type SqliteBackend } from './wa-sqlite.js';
export { SqliteStore };
import { readSentinel, writeSentinel } from './sentinel.js';

interface SqliteStoreOptions {
  /** Database name: letters, digits, '_', '-' and '.'. */
  name: string;
  backend: SqliteBackend;
  /** Encrypt at rest (keyring.ts). Default null: a plain database. */
  encryption?: EncryptionOptions | null;
  /** The data key itself, already unwrapped (an unlock after an idle lock): used instead of `encryption`, and owned. */
  dataKey?: Uint8Array | null;
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
  preloadSqlite(options.backend, Boolean(options.encryption ?? options.dataKey));
  const key = options.dataKey ?? (await unlock(sentinelKey, options.name, options.encryption ?? null, (dataKey) => checkNewKey(options, dataKey)));
  try {
    const store = await openWithKey(options, sentinelKey, key, recorded);
    // The data key lives as long as the store (reconnects need it), and no longer: an idle lock closes the store.
    const close = store.close.bind(store);
    store.close = () => close().finally(() => key?.fill(0));
    return store;
  } catch (error) {
    key?.fill(0);
    throw error;
  }
}

async function openWithKey(options: SqliteStoreOptions, sentinelKey: string, key: Uint8Array | null, recorded: ReturnType<typeof readSentinel>): Promise<SqliteStore> {
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
  return new SqliteStore(db, {
    kind: options.backend === 'idb' ? 'idb' : 'opfs',
    reconnect: connect,
    failure: (error, ioError) => (isCorruption(error) ? 'corrupt' : isQuotaFailure(error, ioError) ? 'quota' : isIoFailure(error) ? 'io' : null),
    // The first memory of an instance arms the sentinel: from now on, losing this database is reported.
    afterPut: sentinelState ? () => armSentinel(sentinelState) : undefined,
    evicted,
    encrypted: key !== null,
  });
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
  // A plain open reads nothing yet: only a read of the first page tells a plain file from an encrypted one.
  const plain = await Connection.open(options.backend, options.name).catch(() => null);
  if (plain) {
    const readable = await plain.scalar('SELECT count(*) FROM sqlite_schema').then(() => true, () => false);
    await plain.close();
    if (readable) throw notEncrypted(options.name);
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
    if (options.encryption || options.dataKey) return new EngramError(ErrorCode.STORE_FAILED, `database "${options.name}" does not decrypt with the key its key record holds`, { cause: error });
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
    // NOTADB on the first read is the whole file not opening: a key matter (openError), as at Connection.open.
    const damaged = isCorruption(error) && !(isSqliteError(error) && error.code === SQLITE_NOTADB);
    const failure = damaged ? await corruptionError(connection, error, `cannot open database "${options.name}" (${options.backend})`) : openError(error, ioError, options);
    await connection.close().catch(() => undefined);
    throw failure;
  }
}

/** What the store keeps of its sentinel, to record the first memory of an instance that had none. */
interface SentinelState {
  key: string;
  instance: string;
  hadData: boolean;
}

async function armSentinel(sentinel: SentinelState): Promise<void> {
  if (sentinel.hadData) return;
  sentinel.hadData = true; // one sentinel write at a time; set back if it fails, so a later write retries
  sentinel.hadData = await writeSentinel(sentinel.key, { instance: sentinel.instance, hadData: true });
}
