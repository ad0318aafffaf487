/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import { createEngine } from '../../../src/index.js';
import { isEngramError } from '../../../src/errors.js';
import type { MemoryRecord } from '../../../src/types.js';
import { storeSpec } from '../../spec/store-spec.js';
import { migrations, SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import { openSqliteStore } from '../../../src/store/browser/browser-store.js';
import { Connection, type SqliteBackend } from '../../../src/store/browser/wa-sqlite.js';

export interface SpecResult {
  name: string;
  error: string | null;
  /** How long the case took. */
  ms: number;
}

let opened = 0;
const uniqueName = (prefix: string) => `${prefix}-${Date.now()}-${opened++}`;

function describe(error: unknown): string {
  if (isEngramError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function memory(i: number, text = `memory ${i}`): MemoryRecord {
  return { id: `m${i}`, text, createdAt: 1_700_000_000_000 + i, priority: 1, pinned: false, tags: [], accessCount: 0 };
}

/** The columns of the memories table, in order, read straight from SQLite. */
async function memoryColumns(db: Connection): Promise<string[]> {
  const names: string[] = [];
  await db.each('SELECT name FROM pragma_table_info(?1) ORDER BY cid', ['memories'], (row) => names.push(row.text(0)));
  return names;
}

/** Every byte a database of `backend` keeps through the browser's storage APIs: its OPFS files, or its IndexedDB values. */
async function storedBytes(backend: SqliteBackend, name: string): Promise<Uint8Array[]> {
  if (backend === 'opfs') {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('engram');
    const out: Uint8Array[] = [];
    for await (const [file, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
      if (file.startsWith(`${name}.sqlite3`) && handle.kind === 'file') out.push(new Uint8Array(await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer()));
    }
    return out;
  }
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open(`engram-${name}`);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const out: Uint8Array[] = [];
  const collect = (value: unknown): void => {
    if (value instanceof ArrayBuffer) out.push(new Uint8Array(value));
    else if (ArrayBuffer.isView(value)) out.push(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    else if (value && typeof value === 'object') for (const v of Object.values(value)) collect(v);
  };
  for (const storeName of db.objectStoreNames) {
    const values = await new Promise<unknown[]>((resolve, reject) => {
      const request = db.transaction(storeName).objectStore(storeName).getAll();
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
    values.forEach(collect);
  }
  db.close();
  return out;
}

function holds(chunks: readonly Uint8Array[], text: string): boolean {
  const needle = new TextEncoder().encode(text);
  return chunks.some((bytes) => {
    outer: for (let i = bytes.indexOf(needle[0] as number); i >= 0 && i <= bytes.length - needle.length; i = bytes.indexOf(needle[0] as number, i + 1)) {
      for (let j = 1; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  });
}

const lab = {
  /**
   * A memory's text is in the database's stored bytes once written, and gone from them once removed (secure_delete,
   * then the WAL checkpointed), while the memories kept are still there.
   */
  async removedTextGone(backend: SqliteBackend) {
    const name = uniqueName(`scrub-${backend}`);
    const secret = 'zebra-quartz-secret-4417';
    const kept = 'walrus-amber-kept-2290';
    let store = await openSqliteStore({ name, backend });
    await store.write({ put: [...Array.from({ length: 300 }, (_, i) => memory(i)), memory(1000, `${secret} a`), memory(1001, `${kept} b`), memory(1002, `${secret} c`)] });
    await store.close();
    const before = await storedBytes(backend, name);
    store = await openSqliteStore({ name, backend });
    await store.write({ remove: ['m1000', 'm1002'] });
    await store.close();
    const after = await storedBytes(backend, name);
    store = await openSqliteStore({ name, backend });
    const count = await store.count();
    await store.close();
    return { secretBefore: holds(before, secret), keptBefore: holds(before, kept), secretAfter: holds(after, secret), keptAfter: holds(after, kept), count };
  },


  /** Rows in a database's memories table, read straight from SQLite (no engine). */
  async countRows(backend: SqliteBackend, name: string): Promise<number> {
    const store = await openSqliteStore({ name, backend });
    try {
      return await store.count();
    } finally {
      await store.close();
    }
  },

  /**
   * Runs every case of the shared store spec against a fresh database of `backend`; `encrypted`: each one
   * encrypted under an app key (the passphrase path is tested through createMemory, test/browser/encryption.test.ts).
   */
  async runSpec(backend: SqliteBackend, encrypted = false): Promise<SpecResult[]> {
    const results: SpecResult[] = [];
    const key = encrypted ? await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']) : null;
    for (const spec of storeSpec) {
      // As long as checkDatabaseName allows: wa-sqlite's default path limit once failed names over ~40 characters.
      const name = uniqueName(`spec-${backend}${encrypted ? '-encrypted' : ''}`).padEnd(100, 'n');
      const t0 = performance.now();
      try {
        await spec.run(() => openSqliteStore({ name, backend, encryption: key && { key } }));
        results.push({ name: spec.name, error: null, ms: performance.now() - t0 });
      } catch (error) {
        results.push({ name: spec.name, error: error instanceof Error ? `${describe(error)}\n${error.stack}` : describe(error), ms: performance.now() - t0 });
      }
    }
    return results;
  },

  /** More rows than one load chunk: every record and every vector row comes back, each with its own values. */
  async largeRoundTrip(backend: SqliteBackend, n: number) {
    const name = uniqueName(`large-${backend}`);
    const dim = 8;
    const store = await openSqliteStore({ name, backend });
    for (let start = 0; start < n; start += 5000) {
      const put = Array.from({ length: Math.min(5000, n - start) }, (_, j) => memory(start + j));
      const data = new Float32Array(put.length * dim).map((_, k) => start * dim + k + 0.5);
      await store.write({ put, vectors: { vectorSpace: 'e', dim, ids: put.map((r) => r.id), data } });
    }
    await store.close();
    const reopened = await openSqliteStore({ name, backend });
    const records = await reopened.loadRecords();
    const vectors = await reopened.loadVectors('e', dim);
    await reopened.close();
    let wrongVectors = 0;
    vectors.ids.forEach((id, row) => {
      const i = Number(id.slice(1));
      for (let k = 0; k < dim; k++) if (vectors.data[row * dim + k] !== i * dim + k + 0.5) wrongVectors++;
    });
    return {
      records: records.length,
      distinctRecords: new Set(records.map((r) => r.id)).size,
      inInsertionOrder: records.every((r, i) => r.id === `m${i}`),
      vectors: vectors.ids.length,
      distinctVectors: new Set(vectors.ids).size,
      wrongVectors,
    };
  },

  /**
   * A database at schema version 1 (vectors keyed by memory id) is migrated on open: its records, vectors of both
   * embedders and change counter are kept, and writes and loads work on the new layout.
   */
  async migrateFromVersion1(backend: SqliteBackend) {
    const name = uniqueName(`v1-${backend}`);
    const old = await Connection.open(backend, name);
    await old.transaction(async () => {
      await migrations[0]!(old);
      await old.exec(`
        INSERT INTO memories (id, text, created_at, priority, pinned, tags, access_count) VALUES
          ('b', 'second', 2, 1, 0, '[]', 0), ('a', 'first', 1, 1, 1, '["t"]', 0);
        INSERT INTO vectors VALUES ('a', 'e', 2, X'0000803F00000040'), ('b', 'e', 2, X'0000404000008040'),
          ('a', 'other', 1, X'0000A040');
        UPDATE state SET change_counter = 7;
        PRAGMA user_version = 1;`);
    });
    await old.close();
    const store = await openSqliteStore({ name, backend });
    const loaded = { records: (await store.loadRecords()).map((r) => `${r.id}:${r.text}:${r.pinned}:${r.tags.join()}`), vectors: await store.loadVectors('e', 2) };
    const counter = await store.changeCounter();
    // Replace one migrated vector, add a memory with a vector.
    await store.write({
      put: [memory(3)],
      vectors: { vectorSpace: 'e', dim: 2, ids: ['b', 'm3'], data: new Float32Array([5, 6, 7, 8]) },
    });
    const after = await store.loadVectors('e', 2);
    const other = await store.loadVectors('other', 1);
    await store.close();
    const check = await Connection.open(backend, name);
    const version = await check.scalar('PRAGMA user_version');
    const vectorRows = await check.scalar('SELECT count(*) FROM vectors');
    await check.close();
    const byId = (v: { ids: string[]; data: Float32Array }) => Object.fromEntries(v.ids.map((id, i) => [id, [...v.data.slice(i * 2, i * 2 + 2)]]));
    return {
      records: loaded.records,
      vectors: byId(loaded.vectors),
      counter,
      after: byId(after),
      other: [...other.data],
      version,
      expectedVersion: SCHEMA_VERSION,
      vectorRows,
    };
  },

  /**
   * A database at schema version 2 (the one before quality) is migrated on open: its records come back as they
   * were, without a quality, its counter is kept, and an engine on it stores, updates and clears quality scores
   * that survive a reopen.
   */
  async migrateFromVersion2(backend: SqliteBackend) {
    const name = uniqueName(`v2-${backend}`);
    const old = await Connection.open(backend, name);
    await old.transaction(async () => {
      await migrations[0]!(old);
      await migrations[1]!(old);
      await old.exec(`
        INSERT INTO memories (id, text, created_at, priority, pinned, tags, access_count, project) VALUES
          ('b', 'second', 2, 1, 0, '[]', 0, NULL), ('a', 'first', 1, 1.5, 1, '["t"]', 4, 'p');
        INSERT INTO vectors (memory_id, embedder_id, dim, data) VALUES ('a', 'e', 2, X'0000803F00000040');
        UPDATE state SET change_counter = 7;
        PRAGMA user_version = 2;`);
    });
    const columnsBefore = await memoryColumns(old);
    await old.close();

    const store = await openSqliteStore({ name, backend });
    const loaded = await store.loadRecords();
    const counter = await store.changeCounter();
    const vectors = await store.loadVectors('e', 2);
    await store.close();

    const check = await Connection.open(backend, name);
    const version = Number(await check.scalar('PRAGMA user_version'));
    const columnsAfter = await memoryColumns(check);
    await check.close();

    // An engine (no embedder) on the migrated database: set, change and clear quality; then reopen.
    const engine = await createEngine({ store: await openSqliteStore({ name, backend }), embedder: null });
    await engine.update('a', { quality: 0.25 });
    await engine.update('b', { quality: 1 });
    await engine.add({ id: 'c', text: 'third', quality: 0 });
    await engine.update('b', { quality: null });
    const refused = await engine.add({ id: 'd', text: 'fourth', quality: 1.5 }).then(() => 'stored', (e: unknown) => (isEngramError(e) ? e.code : describe(e)));
    await engine.close();
    const reopened = await createEngine({ store: await openSqliteStore({ name, backend }), embedder: null });
    const afterReopen = Object.fromEntries((await reopened.export()).map((r) => [r.id, 'quality' in r ? r.quality : 'absent']));
    await reopened.close();

    return {
      loaded: loaded.map((r) => ({ id: r.id, hasQuality: 'quality' in r, priority: r.priority, pinned: r.pinned, project: r.project ?? null, accessCount: r.accessCount })),
      counter,
      vectorIds: vectors.ids,
      version,
      expectedVersion: SCHEMA_VERSION,
      addedColumns: columnsAfter.filter((c) => !columnsBefore.includes(c)),
      refused,
      afterReopen,
    };
  },

  /** A database written by a newer Engram (user_version 99) is refused and left byte-for-byte alone. */
  async openNewerSchema(backend: SqliteBackend) {
    const name = uniqueName(`newer-${backend}`);
    const store = await openSqliteStore({ name, backend });
    await store.write({ put: [memory(1)] });
    await store.close();
    const bump = await Connection.open(backend, name);
    await bump.exec('PRAGMA user_version = 99');
    await bump.close();
    const error = await openSqliteStore({ name, backend }).then(
      async (store) => {
        await store.close();
        return null;
      },
      (e: unknown) => e,
    );
    const check = await Connection.open(backend, name);
    const version = await check.scalar('PRAGMA user_version');
    const rows = await check.scalar('SELECT count(*) FROM memories');
    const mode = await check.scalar('PRAGMA journal_mode');
    await check.close();
    return { code: isEngramError(error) ? error.code : describe(error), message: describe(error), version, rows, mode };
  },

  /**
   * Fills the database until the (test-lowered) quota stops it. Returns what the failing write said and
   * what the store still reads afterwards.
   */
  async fillUntilQuota(backend: SqliteBackend) {
    const name = uniqueName(`quota-${backend}`);
    const store = await openSqliteStore({ name, backend });
    await store.write({ put: [memory(0), memory(1)], meta: { k: 'before' } });
    const big = 'x'.repeat(200_000);
    let stored = 2;
    let failure: unknown = null;
    for (let batch = 0; batch < 500 && !failure; batch++) {
      const put = Array.from({ length: 10 }, (_, j) => memory(stored + j, big + (stored + j)));
      try {
        await store.write({ put, meta: { k: `batch ${batch}` } });
        stored += put.length;
      } catch (error) {
        failure = error;
      }
    }
    const records = await store.loadRecords();
    const after = {
      count: await store.count(),
      ids: records.length,
      meta: await store.readMeta('k'),
      lastIntact: records.every((r) => r.id === 'm0' || r.id === 'm1' || r.text === big + r.id.slice(1)),
    };
    // A small write still fails or succeeds cleanly; either way the data stays readable.
    const small = await store.write({ put: [memory(999_999)] }).then(
      () => 'ok',
      (e: unknown) => (isEngramError(e) ? e.code : describe(e)),
    );
    await store.close();
    const reopened = await openSqliteStore({ name, backend });
    const countAfterReopen = await reopened.count();
    await reopened.close();
    return { stored, code: isEngramError(failure) ? failure.code : describe(failure), message: describe(failure), after, small, countAfterReopen };
  },
};

export type StoreLab = typeof lab;
Comlink.expose(lab);
