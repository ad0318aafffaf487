/**
 * The names of every search option and of the fields of each object-valued one, apart from options.ts so that the
 * page (createMemory) can refuse a misspelt default without loading the search code.
 */
import { checkKnownKeys, keysOf, type KeySet } from '../util/keys.js';
import type { AssociationOptions, CurrencyOptions, DecayOptions, DiversityOptions, ProjectBoost, RerankOptions, SearchFilter, SearchOptions } from './options.js';
import type { FeedbackOptions } from './feedback.js';
import type { NeighbourOptions } from './neighbours.js';
import type { StabilityDecay } from './retention.js';

/** Every search option, checked against `SearchOptions` at compile time; a search refuses any other name. */
export const SEARCH_OPTION_KEYS = keysOf<SearchOptions>({
  mode: true,
  understand: true,
  synthesis: true,
  feedback: true,
  originalQueryWeight: true,
  listFusion: true,
  hyde: true,
  rerank: true,
  currency: true,
  llmTimeoutMs: true,
  k: true,
  candidatePool: true,
  fusion: true,
  rrfK: true,
  weights: true,
  topRankBonus: true,
  neighbours: true,
  filter: true,
  deepRecall: true,
  includeExpiredTransients: true,
  includeExpiredInDeepRecall: true,
  deepRecallPenalty: true,
  minScore: true,
  raw: true,
  decay: true,
  decayFrom: true,
  decayAlpha: true,
  decayScope: true,
  project: true,
  projectBoost: true,
  pinnedBoost: true,
  dateBoost: true,
  boost: true,
  diversity: true,
  assembly: true,
  qualityWeight: true,
  tokenBudget: true,
  touch: true,
  reinforce: true,
  associations: true,
  session: true,
  now: true,
} satisfies KeySet<SearchOptions>);

/** The keys of each object-valued search option (of each `decay` kind), checked like the options themselves. */
const NESTED_KEYS = {
  filter: keysOf<SearchFilter>({ project: true, scope: true, tags: true, kinds: true, since: true, until: true, core: true } satisfies KeySet<SearchFilter>),
  weights: keysOf<SearchOptions['weights']>({ lexical: true, vector: true } satisfies KeySet<SearchOptions['weights']>),
  projectBoost: keysOf<ProjectBoost>({ same: true, other: true, none: true } satisfies KeySet<ProjectBoost>),
  diversity: keysOf<DiversityOptions>({ lambda: true, duplicateThreshold: true, tagWeight: true } satisfies KeySet<DiversityOptions>),
  rerank: keysOf<RerankOptions>({ by: true, inputLimit: true, weights: true } satisfies KeySet<RerankOptions>),
  currency: keysOf<CurrencyOptions>({ ratio: true } satisfies KeySet<CurrencyOptions>),
  'rerank.weights': keysOf<NonNullable<RerankOptions['weights']>>({ coverage: true, proximity: true } satisfies KeySet<NonNullable<RerankOptions['weights']>>),
  feedback: keysOf<FeedbackOptions>({ docs: true, terms: true, originalWeight: true } satisfies KeySet<FeedbackOptions>),
  neighbours: keysOf<NeighbourOptions>({ window: true, weight: true, lenders: true, time: true, timeGapMs: true } satisfies KeySet<NeighbourOptions>),
  associations: keysOf<AssociationOptions>({ floor: true, bridges: true, bridgeMinCosine: true, limit: true } satisfies KeySet<AssociationOptions>),
  'decay.exponential': keysOf<Extract<DecayOptions, { kind: 'exponential' }>>({ kind: true, tauMs: true } satisfies KeySet<Extract<DecayOptions, { kind: 'exponential' }>>),
  'decay.hyperbolic': keysOf<Extract<DecayOptions, { kind: 'hyperbolic' }>>({ kind: true, halfLifeDays: true } satisfies KeySet<Extract<DecayOptions, { kind: 'hyperbolic' }>>),
  'decay.stability': keysOf<StabilityDecay>({ kind: true, betaDays: true, floor: true, coreFloor: true } satisfies KeySet<StabilityDecay>),
} as const;

/** Names reached for from other search libraries. */
const SEARCH_ALIASES = { limit: 'k', topk: 'k', top_k: 'k', n: 'k', count: 'k', size: 'k', budget: 'tokenBudget', maxtokens: 'tokenBudget', filters: 'filter', where: 'filter' };
const WEIGHT_ALIASES = { bm25: 'lexical', keyword: 'lexical', text: 'lexical', semantic: 'vector', dense: 'vector', embedding: 'vector', cosine: 'vector' };

/**
 * INVALID_INPUT for a search option, or a field of an object-valued one, that is not declared: `{ limit: 1 }`,
 * `{ filter: { projects } }` and `{ weights: { bm25 } }` would otherwise do nothing.
 */
export function checkSearchOptionKeys(options: unknown): void {
  const rule = { noun: 'search option' } as const;
  checkKnownKeys(options, SEARCH_OPTION_KEYS, { ...rule, aliases: SEARCH_ALIASES });
  if (typeof options !== 'object' || options === null) return;
  const o = options as Record<string, unknown>;
  for (const key of ['filter', 'weights', 'projectBoost', 'diversity', 'rerank', 'feedback', 'neighbours', 'associations'] as const) {
    checkKnownKeys(o[key], NESTED_KEYS[key], { ...rule, prefix: `${key}.`, ...(key === 'weights' ? { aliases: WEIGHT_ALIASES } : key === 'filter' ? { aliases: { tag: 'tags', kind: 'kinds', from: 'since', after: 'since', to: 'until', before: 'until' } } : {}) });
  }
  checkKnownKeys((o.rerank as { weights?: unknown } | undefined)?.weights, NESTED_KEYS['rerank.weights'], { ...rule, prefix: 'rerank.weights.' });
  const decay = o.decay as { kind?: unknown } | undefined;
  const kind = typeof decay === 'object' && decay !== null ? `decay.${String(decay.kind)}` : '';
  if (Object.hasOwn(NESTED_KEYS, kind)) checkKnownKeys(decay, NESTED_KEYS[kind as keyof typeof NESTED_KEYS], { ...rule, prefix: 'decay.' });
}
