/** Public data types shared by the engine, the stores, the worker and the client. */

/**
 * What a caller hands to `add`. Every string must be well-formed UTF-16 (no lone surrogate: the SQLite store keeps
 * UTF-8, where one cannot be written); sizes are bounded by the engine option `limits` (RecordLimits).
 */
export interface MemoryInput {
  /** Non-empty, at most 512 characters, well-formed UTF-16. Default: a new UUID v7. */
  id?: string;
  /** Non-blank, well-formed UTF-16 (lone surrogates are refused, not replaced), at most `limits.maxTextLength`. */
  text: string;
  /**
   * Epoch ms (finite, within ±8.64e15), a valid Date, or an ISO-8601 string: YYYY-MM-DD, optionally
   * THH:MM[:SS[.fraction]] and Z or ±HH:MM, a real calendar date. Defaults to the engine clock's "now".
   */
  createdAt?: number | string | Date;
  /** Score multiplier from 1 to 2. Default 1. */
  priority?: number;
  pinned?: boolean;
  /** At most `limits.maxLabelLength` characters, like `scope` and `kind`. */
  project?: string;
  scope?: string;
  /** At most `limits.maxTags` tags of at most `limits.maxTagLength` characters. */
  tags?: string[];
  kind?: string;
  /** After this the memory is never returned: a date as for `createdAt`. */
  validUntil?: number;
  /**
   * JSON data only: plain objects, arrays, strings, finite numbers, booleans, null (no Date, Map, Set, BigInt,
   * function, class instance or cycle), at most `limits.maxMetaDepth` deep and `limits.maxMetaBytes` as JSON.
   * Stored as its JSON round trip (-0 reads back as 0).
   */
  meta?: Record<string, unknown>;
}

/** A stored memory: the input, normalised, plus bookkeeping. Plain data (structured-clone safe). */
export interface MemoryRecord {
  id: string;
  text: string;
  createdAt: number;
  priority: number;
  pinned: boolean;
  project?: string;
  scope?: string;
  tags: string[];
  kind?: string;
  validUntil?: number;
  meta?: Record<string, unknown>;
  /** Id of the newer memory that superseded this one. */
  supersededBy?: string;
  accessCount: number;
  lastAccessedAt?: number;
  updatedAt?: number;
}

/** Fields `update` may change. `null` clears an optional field. */
export type MemoryPatch = {
  [K in Exclude<keyof MemoryInput, 'id'>]?: MemoryInput[K] | null;
};

export interface Embedder {
  /** Names model, dtype and device, e.g. `engram-glove-100d@q8/wasm`. Vectors are stored per id. */
  id: string;
  /**
   * Embedders with the same vector space produce interchangeable vectors (same model and dtype on another
   * device), so stored vectors are keyed by it and a device change never forces a re-embed. Default: `id`.
   */
  vectorSpace?: string;
  dim: number;
  embed(texts: string[]): Promise<Float32Array[]>;
  countTokens?(text: string): number;
  dispose?(): Promise<void>;
}

export interface Hit {
  id: string;
  text: string;
  score: number;
  memory: MemoryRecord;
  explain: {
    bm25Rank: number | null;
    vecRank: number | null;
    bm25: number | null;
    cosine: number | null;
    /** The fused score (convex combination or RRF, per `fusion`), including any neighbour support. */
    fused: number;
    /** With `fusion: 'rrf'`, for a memory a leg returned: the legs' reciprocal-rank sum, before neighbour support. */
    rrf?: number;
    recency: number;
    boost: number;
    superseded?: boolean;
    mmr?: number;
    /** Thread-neighbour support included in `fused`: the hit it came from and the bonus (stage `neighbours`). */
    neighbour?: { from: string; bonus: number };
  };
}

export interface TraceStage {
  name: string;
  in: number;
  out: number;
  ms: number;
  /** Free-form note, e.g. why a leg was skipped. */
  note?: string;
}

export interface Trace {
  mode: 'lexical' | 'vector' | 'hybrid';
  stages: TraceStage[];
  totalMs: number;
  embedder: string | null;
}

export interface AssembledContext {
  text: string;
  tokens: number;
  budget: number;
  ids: string[];
}

export interface SearchResult {
  hits: Hit[];
  context: AssembledContext;
  trace: Trace;
}

export interface Progress {
  done: number;
  total: number;
}
