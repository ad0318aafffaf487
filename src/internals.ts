/**
 * `engram/internals`: the engine's own parts, for apps that redraw or study the score (the demo's explanations,
 * benchmarks, experiments). No stability promise: names and shapes follow the engine from one version to the next.
 */
export { topRankBonus } from './search/fuse.js';
export { DAY_MS } from './util/time.js';
export { COLD_AFTER_DAYS, DEFAULT_STABILITY_DECAY, INITIAL_STABILITY, isCold, stabilityRetention } from './search/retention.js';
export { qualifiesForCore, reinforced, spacingFactor } from './search/reinforce.js';
export { AssociationGraph, decayedWeight, type AssociationRules } from './engine/associations.js';
export type { AssociationReader } from './search/state.js';

export { LexicalIndex } from './lexical/lexical-index.js';
export { ENGLISH_STOP_WORDS } from './lexical/stopwords.js';
export { stemEnglish } from './lexical/stem.js';
