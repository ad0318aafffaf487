/** Engram: private, offline long-term memory. The public API. */
export { createEngine } from './engine/engine.js';
export type { AddOptions, Engine, EngineOptions } from './engine/engine.js';
export { memoryStore } from './store/memory-store.js';
export type { PackedVectors, Store, StoreWrite } from './store/store.js';
export { EngramError, ErrorCode, isEngramError, serializeError, deserializeError } from './errors.js';
export type { SerializedEngramError } from './errors.js';
export { defaultSearchOptions, resolveSearchOptions } from './search/options.js';
export type { DecayOptions, DiversityOptions, ProjectBoost, SearchFilter, SearchOptions } from './search/options.js';
export type { LexicalOptions } from './lexical/lexical-index.js';
export { ENGLISH_STOP_WORDS } from './lexical/stopwords.js';
export { stemEnglish } from './lexical/stem.js';
export type { NeighbourOptions } from './search/neighbours.js';
export type { FusionMethod } from './search/fuse.js';
export { estimateTokens } from './search/assemble.js';
export { exactScan } from './vector/vector-index.js';
export { defaultQuantizedScanOptions, QuantizedScan, type QuantizedScanOptions } from './vector/quantized-scan.js';
export type { IndexSnapshot } from './lexical/snapshot.js';
export type { ScoredRow, VectorIndex, VectorScan } from './vector/vector-index.js';
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
export { createMemory } from './client/create-memory.js';
export type { Memory, MemoryOptions, MemoryStatus, RemoteSearchOptions, StorageKind } from './client/create-memory.js';
