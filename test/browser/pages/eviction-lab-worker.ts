/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import { isEngramError } from '../../../src/errors.js';
import type { MemoryRecord } from '../../../src/types.js';
import { openStore } from '../../../src/store/browser/open-store.js';
import { migrations, SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';
import { Connection } from '../../../src/store/browser/wa-sqlite.js';
import { INSTANCE_KEY } from '../../../src/store/browser/browser-store.js';

type Backend = 'opfs' | 'idb';

function memory(i: number): MemoryRecord {
  return { id: `m${i}`, text: `memory ${i}`, createdAt: 1_700_000_000_000 + i, priority: 1, pinned: false, tags: [], accessCount: 0 };
}

function describe(error: unknown): string {
  if (isEngramError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** FNV-1a over every vector row in id order: equal before and after a migration when nothing was lost. */
async function vectorDigest(db: Connection): Promise<{ rows: number; digest: number }> {
  let digest = 0x811c9dc5;
  let rows = 0;
  await db.each('SELECT memory_id, data FROM vectors ORDER BY memory_id, embedder_id', [], (row) => {
    rows++;
    for (const byte of new TextEncoder().encode(row.text(0))) digest = Math.imul(digest ^ byte, 0x01000193) >>> 0;
    for (const byte of row.blob(1)) digest = Math.imul(digest ^ byte, 0x01000193) >>> 0;
  });
  return { rows, digest };
}

const lab = {
  /** One open through what the worker uses (openStore): adds `add` memories, optionally removes them all. */
  async open(backend: Backend, name: string, options: { add?: number; removeAll?: boolean } = {}) {
    const store = await openStore(name, backend);
    try {
      const evicted = store.evicted;
      const countAtOpen = await store.count();
      if (options.add) await store.write({ put: Array.from({ length: options.add }, (_, i) => memory(countAtOpen + i)) });
      if (options.removeAll) await store.write({ remove: (await store.loadRecords()).map((r) => r.id) });
      return { evicted, countAtOpen, count: await store.count() };
    } finally {
      await store.close();
    }
  },

  /** The outcome of one open: its error code, or the schema version and count it reached. */
  async tryOpen(backend: Backend, name: string) {
    try {
      const store = await openStore(name, backend);
      const count = await store.count();
      await store.close();
      return { code: null, message: '', count, ...(await lab.inspect(backend, name)) };
    } catch (error) {
      const code = isEngramError(error) ? error.code : describe(error);
      // A database the refused open did not create cannot be read either (its creation needs room too).
      const inspected = await lab.inspect(backend, name).catch((e: unknown) => ({ inspectError: describe(e) }));
      return { code, message: describe(error), count: null, ...inspected };
    }
  },

  /**
   * Fills the disk through an Engram database of its own until a write is refused with QUOTA_EXCEEDED (as the
   * store tests do). Returns the number of writes that fitted, or null if none was refused in 2,000.
   */
  async fillUntilRefused(backend: Backend, name: string, options: { memoriesPerWrite?: number; textBytes?: number } = {}) {
    const { memoriesPerWrite = 10, textBytes = 200_000 } = options;
    const store = await openStore(name, backend);
    try {
      const text = 'x'.repeat(textBytes);
      let stored = await store.count();
      for (let batch = 0; batch < 2000; batch++) {
        try {
          await store.write({ put: Array.from({ length: memoriesPerWrite }, (_, j) => ({ ...memory(stored + j), text: text + (stored + j) })) });
          stored += memoriesPerWrite;
        } catch (error) {
          if (isEngramError(error) && error.code === 'QUOTA_EXCEEDED') return batch;
          throw error;
        }
      }
      return null;
    } finally {
      await store.close();
    }
  },

  /** Deletes the database's instance id, as a database written before the id existed lacks it. */
  async dropInstanceId(backend: Backend, name: string) {
    const db = await Connection.open(backend, name);
    try {
      await db.run('DELETE FROM meta WHERE key = ?1', [INSTANCE_KEY]);
      return Number(await db.scalar('SELECT count(*) FROM meta WHERE key = ?1', [INSTANCE_KEY]));
    } finally {
      await db.close();
    }
  },

  /** Reads a database straight through SQLite (no migration): its version, rows and vector digest. */
  async inspect(backend: Backend, name: string) {
    const db = await Connection.open(backend, name);
    try {
      const version = Number(await db.scalar('PRAGMA user_version'));
      const memories = Number(await db.scalar('SELECT count(*) FROM memories'));
      return { version, memories, vectors: await vectorDigest(db) };
    } finally {
      await db.close();
    }
  },

  /** A schema version 1 database (vectors keyed by memory id) with `rows` memories and a `dim`-float vector each. */
  async buildVersion1(backend: Backend, name: string, rows: number, dim: number) {
    const db = await Connection.open(backend, name);
    try {
      await db.transaction(async () => {
        await migrations[0]!(db);
        await db.run(
          `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
           INSERT INTO memories (id, text, created_at, priority, pinned, tags, access_count)
           SELECT 'm' || i, 'memory ' || i, i, 1, 0, '[]', 0 FROM n`,
          [rows],
        );
        await db.run(
          `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 - 1)
           INSERT INTO vectors SELECT 'm' || i, 'e', ?2, randomblob(?2 * 4) FROM n`,
          [rows, dim],
        );
        await db.exec('PRAGMA user_version = 1');
      });
    } finally {
      await db.close();
    }
    return { ...(await lab.inspect(backend, name)), latest: SCHEMA_VERSION };
  },
};

export type EvictionLab = typeof lab;
Comlink.expose(lab);
