import type { Link, MemoryRecord } from '../types.js';

/** Vectors of one vector space, packed row-major for fast bulk loading. */
export interface PackedVectors {
  /** The embedder's `vectorSpace` (its `id` when it has none): embedders that share it make interchangeable vectors. */
  vectorSpace: string;
  dim: number;
  ids: string[];
  /** ids.length × dim floats, L2-normalised. */
  data: Float32Array;
}

/**
 * One association between two memories as stored: `a < b` (the pair is stored once), the weight when it last
 * formed, and when (epoch ms). Weights decay at read time (engine/associations.ts), so a stored row never ages.
 */
export interface AssociationEdge {
  a: string;
  b: string;
  weight: number;
  lastAt: number;
}

/** One atomic change: every part is applied, or none is. */
export interface StoreWrite {
  /** Upsert whole records. */
  put?: MemoryRecord[];
  /** Delete records by id; their vectors, associations and provenance links go with them. */
  remove?: string[];
  /** Upsert associations (`a < b`), and delete others by pair. */
  associations?: { put?: AssociationEdge[]; remove?: [a: string, b: string][] };
  /** Upsert provenance links (keyed by from, to and kind), and delete others by that key. */
  links?: { put?: Link[]; remove?: Pick<Link, 'from' | 'to' | 'kind'>[] };
  /** Upsert vectors of one vector space. */
  vectors?: PackedVectors;
  /** Delete the vectors of every other vector space (after a model change, once re-embedding is complete). */
  keepOnlyVectorSpace?: string;
  /** Small key/value metadata (snapshots, counters). `null` deletes the key. */
  meta?: Record<string, string | Uint8Array | null>;
}

/**
 * What the engine keeps of every memory without its text: the fields search eligibility (expiry, supersede, the
 * caller's filter) and the thread index read. The full record is fetched by id when a search or call needs it.
 */
export interface RecordSummary {
  id: string;
  createdAt: number;
  tags: string[];
  project?: string;
  scope?: string;
  kind?: string;
  validUntil?: number;
  supersededBy?: string;
  /** `meta.thread` when it is a string or a number. */
  thread?: string | number;
  core?: boolean;
}

/**
 * Durable storage. The engine keeps its indexes in memory and uses the store as the source of truth:
 * it loads everything on open and writes every change through `write`, which must be atomic.
 */
export interface Store {
  /** 'file': a database file in Node (engram/node's openNodeStore). */
  readonly kind: 'memory' | 'opfs' | 'idb' | 'file';
  /** True when data survives a reload (OPFS, IDB, a file), false for the in-memory store. */
  readonly persistent: boolean;
  loadRecords(): Promise<MemoryRecord[]>;
  /**
   * Every memory's summary, in the order `loadRecords` returns them. Optional: a store without it (and without
   * `loadRecordsByIds`) has every record loaded on open.
   */
  loadRecordSummaries?(): Promise<RecordSummary[]>;
  /** The stored records among `ids` (unknown ids are skipped), in any order, in one batched read. */
  loadRecordsByIds?(ids: readonly string[]): Promise<MemoryRecord[]>;
  /**
   * Every stored association. Optional, as is `loadLinks`: without them the engine starts with none (a store that
   * ignores the `associations` and `links` of a write forgets them on reopen).
   */
  loadAssociations?(): Promise<AssociationEdge[]>;
  /** Every stored provenance link. */
  loadLinks?(): Promise<Link[]>;
  /** Vectors stored for this vector space and dimension; vectors of other spaces are ignored. */
  loadVectors(vectorSpace: string, dim: number): Promise<PackedVectors>;
  /**
   * The stored vectors among `ids` of this vector space and dimension (unknown ids skipped), in any order, in one
   * batched read. Optional: compact vector memory (EngineOptions.vectorMemory) needs it; without it every vector
   * stays in memory as float32.
   */
  loadVectorsByIds?(vectorSpace: string, dim: number, ids: readonly string[]): Promise<PackedVectors>;
  /**
   * `loadVectors` a chunk of rows at a time, so a caller that keeps only codes never holds every float at once.
   * `onChunk` runs inside the read and must not call the store; its chunk is valid only during the call. Optional:
   * without it compact vector memory loads through `loadVectors`.
   */
  loadVectorChunks?(vectorSpace: string, dim: number, onChunk: (chunk: PackedVectors) => void): Promise<void>;
  write(change: StoreWrite): Promise<void>;
  readMeta(key: string): Promise<string | Uint8Array | null>;
  /**
   * Monotonic counter bumped by every write that adds or removes a memory or changes a memory's text or tags (what
   * the lexical index is built from): a snapshot made at an equal counter is current. Other writes (access
   * bookkeeping, pins, vectors, meta) may leave it as it is; bumping more often is always safe.
   */
  changeCounter(): Promise<number>;
  /**
   * Monotonic counter bumped by every write that changes the stored vectors (vectors put, memories removed,
   * `keepOnlyVectorSpace`). Optional: without it the engine never restores a saved vector index
   * (`Engine.saveVectorIndex`) and re-encodes every vector on open.
   */
  vectorCounter?(): Promise<number>;
  count(): Promise<number>;
  close(): Promise<void>;
}
