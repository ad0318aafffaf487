/**
 * `engram/advanced`: what only some apps need. Vector scans to plug into `createEngine({ vectorScan })`, the
 * lexical building blocks (the index's `queryTerms` shows what a query searches for), the search-option resolver and
 * the pieces of the score an app may redraw (`topRankBonus`, `DAY_MS`), the built-in model's settings, and errors
 * as plain data for an app's own channels.
 */
export { defaultSearchOptions, MAX_CANDIDATE_POOL, MAX_K, resolveSearchOptions } from './search/options.js';
export { topRankBonus, type FusionMethod } from './search/fuse.js';
export { DAY_MS } from './search/decay.js';
export { COLD_AFTER_DAYS, DEFAULT_STABILITY_DECAY, INITIAL_STABILITY, isCold, stabilityRetention } from './search/retention.js';
export { qualifiesForCore, reinforced, spacingFactor } from './search/reinforce.js';
export { AssociationGraph, decayedWeight, type AssociationReader, type AssociationRules } from './engine/associations.js';
export type { NeighbourOptions } from './search/neighbours.js';
export { estimateTokens } from './search/assemble.js';

export { LexicalIndex } from './lexical/lexical-index.js';
export { ENGLISH_STOP_WORDS } from './lexical/stopwords.js';
export { stemEnglish } from './lexical/stem.js';
export type { IndexSnapshot } from './lexical/snapshot.js';

export { exactScan } from './vector/exact-scan.js';
export { defaultQuantizedScanOptions, QuantizedScan, type QuantizedScanOptions } from './vector/quantized-scan.js';
export type { RowsAbove, ScoredRow, VectorRows, VectorScan } from './vector/scan.js';

export {
  BUILTIN_MODEL,
  EMBEDDER_DEFAULTS,
  type ActiveDevice,
  type DeviceChoice,
  type DeviceReason,
  type EmbedderDevice,
  type EmbedderDtype,
  type Pooling,
  type WasmPaths,
} from './embedder/options.js';

export { deserializeError, serializeError, type SerializedEngramError } from './errors.js';
