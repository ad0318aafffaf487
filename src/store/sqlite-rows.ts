/**
 * Rows of the memories and vectors tables: how a MemoryRecord and a vectors block are encoded for a write, and the
 * batch statements that write and load them.
 */
import { invalidInput } from '../errors.js';
import { checkPackedVectors } from './packed-vectors.js';
import type { PackedVectors } from './store.js';
import type { MemoryRecord } from '../types.js';

// Record fields in the order a written JSON row carries them.
const COLUMNS = [
  'id', 'text', 'created_at', 'priority', 'pinned', 'project', 'scope', 'tags',
  'kind', 'valid_until', 'meta', 'superseded_by', 'access_count', 'last_accessed_at', 'updated_at', 'quality',
  'core', 'stability', 'sessions',
] as const;
type Row = [
  id: string, text: string, createdAt: number, priority: number, pinned: 0 | 1, project: string | null,
  scope: string | null, tags: string[], kind: string | null, validUntil: number | null,
  meta: Record<string, unknown> | null, supersededBy: string | null, accessCount: number,
  lastAccessedAt: number | null, updatedAt: number | null, quality: number | null, core: 1 | null,
  stability: number | null, sessions: string[] | null,
];

// A whole batch binds as one JSON array and is expanded by json_each: one bind and one step per batch instead of
// one per field, which is what makes bulk writes fast through the WebAssembly boundary. (`WHERE true` keeps SQLite
// from reading ON CONFLICT as part of the SELECT's join.)
export const UPSERT_RECORDS = `
  INSERT INTO memories (${COLUMNS.join(', ')})
  SELECT ${COLUMNS.map((_, i) => `value->>${i}`).join(', ')} FROM json_each(?1) WHERE true
  ON CONFLICT (id) DO UPDATE SET ${COLUMNS.slice(1).map((c) => `${c} = excluded.${c}`).join(', ')}`;
// Whether a batch of rows adds a memory or changes a text or tags: only then does the change counter move.
export const CHANGES_INDEXED = `
  SELECT EXISTS (SELECT 1 FROM json_each(?1) AS new LEFT JOIN memories AS old ON old.id = new.value->>0
                 WHERE old.id IS NULL OR old.text IS NOT new.value->>1 OR old.tags IS NOT new.value->>7)`;
// Vectors of a batch bind as one blob; each row takes its slice. A replaced vector is updated where it is.
export const UPSERT_VECTORS = `
  INSERT INTO vectors (memory_id, embedder_id, dim, data)
  SELECT value, ?2, ?3, substr(?4, key * ?5 + 1, ?5) FROM json_each(?1) WHERE true
  ON CONFLICT (memory_id, embedder_id) DO UPDATE SET dim = excluded.dim, data = excluded.data`;
// Records load in rowid (insertion) order, a chunk of rows per call, column by column in one pass: ids and texts as
// their concatenated UTF-8 bytes plus byte lengths (split in JS), tags as one JSON array of the stored JSON texts,
// and the fields that are usually at their defaults only for the rows where they are not. Building one JSON string
// of every row spent most of its time escaping texts.
export const LOAD_CHUNK = 10_000;
const OPTIONAL_COLUMNS = COLUMNS.filter((c) => !['id', 'text', 'created_at', 'tags'].includes(c));
// SQLite's JSON prints a REAL with 15 significant digits, which does not read back every double (1/3 came back as
// 0.333333333333333): a REAL leaves as 17-digit text instead (enough for any double), integers and NULL as they are.
const NUMBER_COLUMNS = new Set(['created_at', 'priority', 'valid_until', 'access_count', 'last_accessed_at', 'updated_at', 'quality', 'stability']);
const exactNumber = (column: string) => `iif(typeof(${column}) = 'real', printf('%!.17g', ${column}), ${column})`;
const loadedColumn = (column: string) => (column === 'meta' || column === 'sessions' ? `json(${column})` : NUMBER_COLUMNS.has(column) ? exactNumber(column) : column);
const loadRecordsFrom = (rows: string) => `
  SELECT count(*), max(rowid),
    CAST(group_concat(id, '') AS BLOB), json_group_array(octet_length(id)),
    CAST(group_concat(text, '') AS BLOB), json_group_array(octet_length(text)),
    json_group_array(${exactNumber('created_at')}), '[' || group_concat(tags, ',') || ']',
    json_group_array(json_array(id, ${OPTIONAL_COLUMNS.map(loadedColumn).join(', ')}))
      FILTER (WHERE priority != 1 OR pinned != 0 OR access_count != 0 OR ${OPTIONAL_COLUMNS.filter((c) => !['priority', 'pinned', 'access_count'].includes(c)).map((c) => `${c} IS NOT NULL`).join(' OR ')})
  FROM (${rows})`;
export const LOAD_RECORDS = loadRecordsFrom(`SELECT rowid, * FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT ${LOAD_CHUNK}`);
// The same columns for the rows of up to LOAD_CHUNK ids bound as one JSON array (each an index lookup), in rowid
// order so that a legacy duplicate id (see the engine's open) comes back in the order a full load gives.
export const LOAD_RECORDS_BY_IDS = loadRecordsFrom(
  'SELECT rowid, * FROM memories WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY rowid',
);
// Salvage (browser/salvage-read.ts) reads a damaged table by rowid: up to ?2 rows after rowid ?1, or the one row ?1.
export const SALVAGE_RECORDS_AFTER = loadRecordsFrom('SELECT rowid, * FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT ?2');
export const SALVAGE_RECORD_AT = loadRecordsFrom('SELECT rowid, * FROM memories WHERE rowid = ?1');
// Summaries (store.ts RecordSummary) a chunk per call in rowid order: ids as UTF-8 bytes plus lengths, createdAt and
// tags for every row, the rest only for rows that have one. Texts are never read out.
export const LOAD_SUMMARIES = `
  SELECT count(*), max(rowid),
    CAST(group_concat(id, '') AS BLOB), json_group_array(octet_length(id)),
    json_group_array(${exactNumber('created_at')}), '[' || group_concat(tags, ',') || ']',
    json_group_array(json_array(id, project, scope, kind, ${exactNumber('valid_until')}, superseded_by, thread, core))
      FILTER (WHERE project IS NOT NULL OR scope IS NOT NULL OR kind IS NOT NULL OR valid_until IS NOT NULL
                 OR superseded_by IS NOT NULL OR thread IS NOT NULL OR core IS NOT NULL)
  FROM (SELECT rowid, id, created_at, tags, project, scope, kind, valid_until, superseded_by, core,
               iif(json_type(meta, '$.thread') IN ('text', 'integer', 'real'), meta -> '$.thread', NULL) AS thread
        FROM memories WHERE rowid > ?1 ORDER BY rowid LIMIT ${LOAD_CHUNK})`;
export type SummaryRow = [
  id: string, project: string | null, scope: string | null, kind: string | null, validUntil: LoadedNumber | null,
  supersededBy: string | null, thread: string | null, core: 1 | null,
];
/** A loaded number column: a JSON number, or the 17-digit text of a REAL (see NUMBER_COLUMNS). */
export type LoadedNumber = number | string;
export type OptionalRow = [
  id: string, priority: LoadedNumber, pinned: 0 | 1, project: string | null, scope: string | null, kind: string | null,
  validUntil: LoadedNumber | null, meta: Record<string, unknown> | null, supersededBy: string | null, accessCount: LoadedNumber,
  lastAccessedAt: LoadedNumber | null, updatedAt: LoadedNumber | null, quality: LoadedNumber | null, core: 1 | null,
  stability: LoadedNumber | null, sessions: string[] | null,
];

// Vectors load a chunk per call too, in rowid order (one pass over the table): ids as one JSON array, rows as one
// concatenated blob (group_concat copies blob bytes as they are), instead of a step and two column reads per memory.
export const LOAD_VECTORS = `
  SELECT count(*), max(rowid), json_group_array(memory_id), CAST(group_concat(data, '') AS BLOB)
  FROM (SELECT rowid, memory_id, data FROM vectors
        WHERE rowid > ?3 AND embedder_id = ?1 AND dim = ?2 AND length(data) = ?4 ORDER BY rowid LIMIT ${LOAD_CHUNK})`;

/** A number field as stored: null when absent; NaN and ±Infinity are refused. */
function finiteOrNull(value: number | undefined, field: string, id: string): number | null {
  if (value === undefined) return null;
  if (!Number.isFinite(value)) throw invalidInput(`memory ${id}: ${field} must be a finite number, got ${value}`);
  return value;
}

/** A record as one row of the JSON array UPSERT_RECORDS expands (absent optional fields as null). */
export function toRow(record: MemoryRecord): Row {
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
    finiteOrNull(record.quality, 'quality', id),
    record.core ? 1 : null,
    finiteOrNull(record.stability, 'stability', id),
    record.sessions ?? null,
  ];
}

/** A loaded number column as a number (Number reads the 17-digit text back to the very double stored). */
export function loadedNumber(value: LoadedNumber): number {
  return typeof value === 'number' ? value : Number(value);
}

/** The fields a chunk loads only where they differ from a new record's defaults. */
export function setOptionalFields(record: MemoryRecord, row: OptionalRow): void {
  const [, priority, pinned, project, scope, kind, validUntil, meta, supersededBy, accessCount, lastAccessedAt, updatedAt, quality, core, stability, sessions] = row;
  record.priority = loadedNumber(priority);
  record.pinned = pinned === 1;
  record.accessCount = loadedNumber(accessCount);
  // Optional fields are absent rather than undefined, as they were when stored.
  if (project !== null) record.project = project;
  if (scope !== null) record.scope = scope;
  if (kind !== null) record.kind = kind;
  if (validUntil !== null) record.validUntil = loadedNumber(validUntil);
  if (meta !== null) record.meta = meta;
  if (supersededBy !== null) record.supersededBy = supersededBy;
  if (lastAccessedAt !== null) record.lastAccessedAt = loadedNumber(lastAccessedAt);
  if (updatedAt !== null) record.updatedAt = loadedNumber(updatedAt);
  if (quality !== null) record.quality = loadedNumber(quality);
  if (core !== null) record.core = true;
  if (stability !== null) record.stability = loadedNumber(stability);
  if (sessions !== null) record.sessions = sessions;
}

/** A vectors block as the bindings of UPSERT_VECTORS, or null when it has no rows. Refuses a malformed block. */
export function encodeVectors(vectors: PackedVectors): [string, string, number, Uint8Array, number] | null {
  checkPackedVectors(vectors);
  if (vectors.ids.length === 0) return null;
  const { ids, dim, data, vectorSpace } = vectors;
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return [JSON.stringify(ids), vectorSpace, dim, bytes, dim * 4];
}

// Associations and links bind as one JSON array per write, like records.
export const UPSERT_ASSOCIATIONS = `
  INSERT INTO associations (a, b, weight, last_at)
  SELECT value->>0, value->>1, value->>2, value->>3 FROM json_each(?1) WHERE true
  ON CONFLICT (a, b) DO UPDATE SET weight = excluded.weight, last_at = excluded.last_at`;
export const DELETE_ASSOCIATIONS = `
  DELETE FROM associations WHERE (a, b) IN (SELECT value->>0, value->>1 FROM json_each(?1))`;
export const UPSERT_LINKS = `
  INSERT INTO links (from_id, to_id, kind, confidence, created_at)
  SELECT value->>0, value->>1, value->>2, value->>3, value->>4 FROM json_each(?1) WHERE true
  ON CONFLICT (from_id, to_id, kind) DO UPDATE SET confidence = excluded.confidence, created_at = excluded.created_at`;
export const DELETE_LINKS = `
  DELETE FROM links WHERE (from_id, to_id, kind) IN (SELECT value->>0, value->>1, value->>2 FROM json_each(?1))`;
// Everything of the removed memories (bound as one JSON array of ids): each table's own index finds the rows.
export const DELETE_GRAPH_OF = [
  'DELETE FROM associations WHERE a IN (SELECT value FROM json_each(?1))',
  'DELETE FROM associations WHERE b IN (SELECT value FROM json_each(?1))',
  'DELETE FROM links WHERE from_id IN (SELECT value FROM json_each(?1))',
  'DELETE FROM links WHERE to_id IN (SELECT value FROM json_each(?1))',
];
// Both load LOAD_CHUNK rows per call, after the key of the last row read (bound as ?1, ?2[, ?3]; the empty string
// sorts before every id), walking each table's primary key: one JSON string per chunk, never one of the whole table.
export const LOAD_ASSOCIATIONS = `
  SELECT json_group_array(json_array(a, b, ${exactNumber('weight')}, ${exactNumber('last_at')}))
  FROM (SELECT * FROM associations WHERE (a, b) > (?1, ?2) ORDER BY a, b LIMIT ${LOAD_CHUNK})`;
export const LOAD_LINKS = `
  SELECT json_group_array(json_array(from_id, to_id, kind, ${exactNumber('confidence')}, ${exactNumber('created_at')}))
  FROM (SELECT * FROM links WHERE (from_id, to_id, kind) > (?1, ?2, ?3) ORDER BY from_id, to_id, kind LIMIT ${LOAD_CHUNK})`;
