import type { MemoryRecord } from '../types.js';

/** Vectors of one vector space, packed row-major for fast bulk loading. */
export interface PackedVectors {
  /** The embedder's `vectorSpace` (its `id` when it has none): embedders that share it make interchangeable vectors. */
  vectorSpace: string;
  dim: number;
  ids: string[];
  /** ids.length × dim floats, L2-normalised. */
  data: Float32Array;
}

/** One atomic change: every part is applied, or none is. */
export interface StoreWrite {
  /** Upsert whole records. */
  put?: MemoryRecord[];
  /** Delete records by id; their vectors go with them. */
  remove?: string[];
  /** Upsert vectors of one vector space. */
  vectors?: PackedVectors;
  /** Delete the vectors of every other vector space (after a model change, once re-embedding is complete). */
  keepOnlyVectorSpace?: string;
  /** Small key/value metadata (snapshots, counters). `null` deletes the key. */
  meta?: Record<string, string | Uint8Array | null>;
}

/**
 * Durable storage. The engine keeps its indexes in memory and uses the store as the source of truth:
 * it loads everything on open and writes every change through `write`, which must be atomic.
 */
export interface Store {
  readonly kind: 'memory' | 'opfs' | 'idb';
  /** True when data survives a reload (OPFS/IDB), false for the in-memory store. */
  readonly persistent: boolean;
  loadRecords(): Promise<MemoryRecord[]>;
  /** Vectors stored for this vector space and dimension; vectors of other spaces are ignored. */
  loadVectors(vectorSpace: string, dim: number): Promise<PackedVectors>;
  write(change: StoreWrite): Promise<void>;
  readMeta(key: string): Promise<string | Uint8Array | null>;
  /**
   * Monotonic counter bumped by every write that adds or removes a memory or changes a memory's text or tags (what
   * the lexical index is built from): a snapshot made at an equal counter is current. Other writes (access
   * bookkeeping, pins, vectors, meta) may leave it as it is; bumping more often is always safe.
   */
  changeCounter(): Promise<number>;
  count(): Promise<number>;
  close(): Promise<void>;
}
