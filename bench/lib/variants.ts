/**
 * Ablations: Engram with one technique changed at a time, first row the defaults. `touch: false` everywhere
 * so every variant sees the same memories (touching does not change ranking while decay counts from creation).
 */
import type { SearchOptions } from '../../src/index.js';
import { engineRanker, type EngineVariant } from './rankers.js';
import type { Ranker } from './run.js';

const DAY_MS = 86_400_000;

function variant(name: string, change: EngineVariant = {}): Ranker {
  return engineRanker(name, { ...change, search: { touch: false, ...change.search } });
}

const search = (name: string, options: Partial<SearchOptions>) => variant(name, { search: options });

export const ablations: Ranker[] = [
  variant('defaults'),
  // lexical
  variant('no stemming (lexical.stem: false)', { engine: { lexical: { stem: false } } }),
  variant('BM25 k1 1.6, b 0.9', { engine: { lexical: { bm25: { k: 1.6, b: 0.9, d: 0.5 } } } }),
  variant('BM25 k1 0.9, b 0.4', { engine: { lexical: { bm25: { k: 0.9, b: 0.4, d: 0.5 } } } }),
  // legs and fusion
  search('lexical leg only (mode: lexical)', { mode: 'lexical' }),
  search('vector leg only (mode: vector)', { mode: 'vector' }),
  search('convex weights 0.6 / 0.4', { weights: { lexical: 0.6, vector: 0.4 } }),
  search('convex weights 0.9 / 0.1', { weights: { lexical: 0.9, vector: 0.1 } }),
  search('RRF k=60, weights 1 / 1 (engine-core default)', { fusion: 'rrf', rrfK: 60, weights: { lexical: 1, vector: 1 } }),
  search('RRF k=15, weights 1 / 1', { fusion: 'rrf', rrfK: 15, weights: { lexical: 1, vector: 1 } }),
  search('RRF k=15, weights 0.8 / 0.2', { fusion: 'rrf', rrfK: 15 }),
  search('top-rank bonus on', { topRankBonus: true }),
  search("'scaled' fusion (absolute scale per leg)", { fusion: 'scaled' }),
  search("'blend' fusion (CEMS: ½ RRF + ½ cosine)", { fusion: 'blend' }),
  // stages of issue 15 that need no language model
  search('rules re-ranker (rerank: rules, top 40)', { rerank: { by: 'rules', inputLimit: 40 } }),
  search('offline synthesis (feedback), lists by score, caller ×2', { synthesis: 'offline' }),
  search('offline synthesis (feedback), lists by score, caller ×4', { synthesis: 'offline', originalQueryWeight: 4 }),
  search('offline synthesis (feedback), lists by RRF (CEMS), caller ×2', { synthesis: 'offline', listFusion: 'rrf' }),
  search('greedy assembly (no hedging across threads)', { assembly: 'greedy' }),
  search("cover assembly for every query (assembly: 'cover')", { assembly: 'cover' }),
  search('diverse assembly for every query', { assembly: 'diverse' }),
  search('diverse assembly for aggregation questions (auto)', { assembly: 'auto' }),
  variant('no threads, offline synthesis, caller ×4', { noThreads: true, search: { synthesis: 'offline', originalQueryWeight: 4 } }),
  // neighbour support
  search('no neighbour support (neighbours: false)', { neighbours: false }),
  search('neighbours window 1', { neighbours: { window: 1, weight: 0.5, lenders: 20 } }),
  search('neighbours window 3', { neighbours: { window: 3, weight: 0.5, lenders: 20 } }),
  search('neighbours weight 0.3', { neighbours: { window: 2, weight: 0.3, lenders: 20 } }),
  search('neighbours weight 0.7', { neighbours: { window: 2, weight: 0.7, lenders: 20 } }),
  search('neighbours from the best 50', { neighbours: { window: 2, weight: 0.5, lenders: 50 } }),
  variant('no threads (meta.thread dropped)', { noThreads: true }),
  variant('no threads, no support over time (neighbours.time: false)', { noThreads: true, search: { neighbours: { time: false } as never } }),
  // time
  search('no date boost (dateBoost: 1)', { dateBoost: 1 }),
  search('date boost ×2', { dateBoost: 2 }),
  search('no decay (decay: false)', { decay: false }),
  search('hyperbolic 60 d, α 0.3 (engine-core default)', { decayAlpha: 0.3 }),
  search('hyperbolic 60 d, α 1 (undamped)', { decayAlpha: 1 }),
  search('exponential τ 30 d, α 1', { decay: { kind: 'exponential', tauMs: 30 * DAY_MS }, decayAlpha: 1 }),
  // diversity, similarity
  search('no diversity (diversity: false)', { diversity: false }),
  search('MMR λ 0.9', { diversity: { lambda: 0.9, duplicateThreshold: 0.94 } }),
  variant('raw cosine for supersede and MMR (calibrateSimilarity: false)', { engine: { calibrateSimilarity: false } }),
  variant('raw cosine, supersede off', { engine: { calibrateSimilarity: false, supersedeThreshold: false } }),
  variant('supersede off (supersedeThreshold: false)', { engine: { supersedeThreshold: false } }),
];
