/** The Engram database schema: its version, the migration steps that build it, and the migration on open. */
import { EngramError, ErrorCode } from '../errors.js';
import type { SqlConnection as Connection } from './sql-connection.js';

/** Bump when the schema changes and add the step to `migrations`. A database newer than this is refused. */
export const SCHEMA_VERSION = 6;

/** `migrations[v]` takes a database from user_version v to v + 1 (exported for the migration test). */
export const migrations: ((db: Connection) => Promise<void>)[] = [
  // vectors.embedder_id holds the vector space (PackedVectors.vectorSpace): renaming the column needs a migration.
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
  // over the table, so a commit rewrote nearly every page of it (docs/worker.md). Rows now append in insertion
  // order; only the small unique index on (memory_id, embedder_id) takes the random inserts.
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
  // A memory's quality score (MemoryRecord.quality, 0 to 1). Adding a nullable column rewrites no row: old
  // memories read back without a quality, as they were.
  async (db) => {
    await db.exec('ALTER TABLE memories ADD COLUMN quality REAL');
  },
  // Learning from use (docs/learning.md): each memory's stability, sessions and core mark, the associations formed
  // between memories retrieved together (one row per pair, a < b, weights decayed at read time), and the provenance
  // links an app records. Each edge table is keyed by its first end and indexed by the other, so removing a memory
  // finds its edges from either side.
  async (db) => {
    await db.exec(`
      ALTER TABLE memories ADD COLUMN core INTEGER;     -- 1 or NULL
      ALTER TABLE memories ADD COLUMN stability REAL;
      ALTER TABLE memories ADD COLUMN sessions TEXT;    -- JSON array
      CREATE TABLE associations (
        a TEXT NOT NULL,
        b TEXT NOT NULL,
        weight REAL NOT NULL,
        last_at INTEGER NOT NULL,
        PRIMARY KEY (a, b)
      ) WITHOUT ROWID;
      CREATE INDEX associations_b ON associations (b);
      CREATE TABLE links (
        from_id TEXT NOT NULL,
        to_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        confidence REAL NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (from_id, to_id, kind)
      ) WITHOUT ROWID;
      CREATE INDEX links_to ON links (to_id);
    `);
  },
  // Memory formation's facts and summaries get a kind ('fact', 'summary'; docs/formation.md), so a search can keep to
  // them or leave the turns out. Those written before carry the mark in meta.formation only; an app's own kind stays.
  async (db) => {
    await db.exec(`
      UPDATE memories SET kind = json_extract(meta, '$.formation')
      WHERE kind IS NULL AND meta IS NOT NULL AND json_valid(meta) AND json_extract(meta, '$.formation') IN ('fact', 'summary');
    `);
  },
  // A counter of writes that change the vectors table (Store.vectorCounter): the engine's saved vector index is
  // current only at the count it was saved at. An Engram before it refuses this version, so none writes vectors
  // without counting them.
  async (db) => {
    await db.exec('ALTER TABLE state ADD COLUMN vector_counter INTEGER NOT NULL DEFAULT 0');
  },
];

/**
 * Brings the database `name` to SCHEMA_VERSION, or refuses it with SCHEMA_TOO_NEW (untouched) if it is newer.
 * Each step is its own transaction and sets user_version with its changes, so a step that fails (a full disk)
 * leaves the database whole at the version before it, readable by this Engram, and the next open resumes there.
 */
export async function migrate(db: Connection, name: string): Promise<void> {
  for (;;) {
    const done = await db.transaction(async () => {
      // Read inside the write transaction so two openers cannot both migrate.
      const version = Number(await db.scalar('PRAGMA user_version'));
      if (version > SCHEMA_VERSION) {
        throw new EngramError(
          ErrorCode.SCHEMA_TOO_NEW,
          `database "${name}" has schema version ${version}, this version of Engram reads up to ${SCHEMA_VERSION}: upgrade Engram (the database was left untouched)`,
          { details: { version, supported: SCHEMA_VERSION } },
        );
      }
      if (version === SCHEMA_VERSION) return true;
      await migrations[version]!(db);
      await db.exec(`PRAGMA user_version = ${version + 1}`);
      return false;
    });
    if (done) return;
  }
}
