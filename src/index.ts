/** Engram: private, offline long-term memory. The public API. */
export { createEngine } from './engine.js';
export type { AddOptions, Engine, EngineOptions } from './engine.js';
export { memoryStore } from './memory-store.js';
export type { PackedVectors, Store, StoreWrite } from './store.js';
export { EngramError, ErrorCode, isEngramError, serializeError, deserializeError } from './errors.js';
export type { SerializedEngramError } from './errors.js';
export { defaultSearchOptions, resolveSearchOptions } from './options.js';
export type { DecayOptions, DiversityOptions, ProjectBoost, SearchFilter, SearchOptions } from './options.js';
export type { LexicalOptions } from './lexical.js';
export { ENGLISH_STOP_WORDS } from './stopwords.js';
export { stemEnglish } from './stem.js';
export type { NeighbourOptions } from './neighbours.js';
export type { FusionMethod } from './fuse.js';
export { estimateTokens } from './assemble.js';
export { exactScan } from './vector.js';
export { defaultQuantizedScanOptions, QuantizedScan, type QuantizedScanOptions } from './quantized-scan.js';
export type { IndexSnapshot } from './snapshot.js';
export type { ScoredRow, VectorIndex, VectorScan } from './vector.js';
export type {
  AssembledContext,
  Embedder,
  Hit,
  MemoryInput,
  MemoryPatch,
  MemoryRecord,
  Progress,
  SearchResult,
  Trace,
  TraceStage,
} from './types.js';

// --- added by other parts (do not remove these markers) ---
export { createEmbedder } from './embedder/index.js';
// worker issue:
export { createMemory } from './client.js';
export type { Memory, MemoryOptions, MemoryStatus, RemoteSearchOptions, StorageKind } from './client.js';
