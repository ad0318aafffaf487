/**
 * `engram/advanced`: the extension points. What an app plugs into `createEngine` or `createMemory` (a vector scan, a
 * lexical snapshot, search defaults it resolves itself, a token counter) and the built-in model's settings, plus
 * errors as plain data for an app's own channels. The engine's own parts are in `engram/internals`.
 */
export { defaultSearchOptions, LONG_MEMORY_SEARCH, MAX_CANDIDATE_POOL, MAX_K, resolveSearchOptions } from './search/options.js';
export { LONG_MEMORY_TERMS } from './lexical/lexical-index.js';
export type { FusionMethod } from './search/fuse.js';
export type { NeighbourOptions } from './search/neighbours.js';
export type { FeedbackOptions } from './search/feedback.js';
export { estimateTokens } from './search/assemble.js';
export type { IndexSnapshot } from './lexical/snapshot.js';

export { exactScan } from './vector/exact-scan.js';
export { defaultQuantizedScanOptions, QuantizedScan, type QuantizedScanOptions } from './vector/quantized-scan.js';
export { defaultIvfScanOptions, IvfScan, type IvfScanOptions, type IvfStatus } from './vector/ivf.js';
export type { RowsAbove, ScoredRow, VectorRows, VectorScan } from './vector/scan.js';

export {
  BUILTIN_MODEL,
  EMBEDDER_DEFAULTS,
  type ActiveDevice,
  type DeviceChoice,
  type DeviceReason,
  type EmbedderDevice,
  type EmbedderDtype,
  type EmbedderPrompts,
  type EmbedRole,
  type LongText,
  type Pooling,
  type WasmPaths,
} from './embedder/options.js';

export { deserializeError, serializeError, type SerializedEngramError } from './errors.js';
