import type { MemoryRecord } from './types.js';

/** Hard constraints. A memory that fails one is never a candidate. */
export interface SearchFilter {
  project?: string | string[];
  scope?: string | string[];
  /** Memory must carry every one of these tags. */
  tags?: string[];
  kinds?: string[];
  /** Inclusive bounds on createdAt (epoch ms, ISO string or Date). */
  since?: number | string | Date;
  until?: number | string | Date;
}

export type DecayOptions =
  | { kind: 'exponential'; tauMs: number }
  | { kind: 'hyperbolic'; halfLifeDays: number };

export interface DiversityOptions {
  /** MMR trade-off: 1 = pure relevance, 0 = pure novelty. */
  lambda: number;
  /** Cosine at or above which a candidate counts as a near-duplicate of a picked hit and is dropped. */
  duplicateThreshold: number;
}

export interface ProjectBoost {
  same: number;
  other: number;
  none: number;
}

/** Every per-search knob. Defaults live in `defaultSearchOptions`, merged once by `resolveSearchOptions`. */
export interface SearchOptions {
  mode: 'auto' | 'lexical' | 'vector' | 'hybrid';
  k: number;
  candidatePool: number;
  rrfK: number;
  weights: { lexical: number; vector: number };
  /** CEMS bonus per leg: +0.05 for rank 1, +0.02 for ranks 2-3. */
  topRankBonus: boolean;
  filter: SearchFilter;
  deepRecall: boolean;
  deepRecallPenalty: number;
  minScore: number;
  raw: boolean;
  decay: DecayOptions | false;
  decayFrom: 'created' | 'accessed';
  decayAlpha: number;
  /** The caller's current project: drives the project boost. */
  project: string | undefined;
  projectBoost: ProjectBoost;
  pinnedBoost: number;
  /** Caller hook multiplied into the boost. In-process engines only (functions do not cross the worker). */
  boost: ((memory: MemoryRecord) => number) | undefined;
  diversity: DiversityOptions | false;
  tokenBudget: number;
  touch: boolean;
  /** Overrides the engine clock for this search (epoch ms). */
  now: number | undefined;
}

export const defaultSearchOptions: Readonly<SearchOptions> = Object.freeze({
  mode: 'auto',
  k: 5,
  candidatePool: 50,
  rrfK: 60,
  weights: Object.freeze({ lexical: 1, vector: 1 }),
  topRankBonus: false,
  filter: Object.freeze({}),
  deepRecall: false,
  deepRecallPenalty: 0.5,
  minScore: 0,
  raw: false,
  decay: Object.freeze({ kind: 'hyperbolic', halfLifeDays: 60 }) as DecayOptions,
  decayFrom: 'created',
  decayAlpha: 0.3,
  project: undefined,
  projectBoost: Object.freeze({ same: 1.3, other: 0.8, none: 0.9 }),
  pinnedBoost: 1.1,
  boost: undefined,
  diversity: Object.freeze({ lambda: 0.78, duplicateThreshold: 0.94 }),
  tokenBudget: 2000,
  touch: true,
  now: undefined,
}) as Readonly<SearchOptions>;

/** Merges defaults, then engine defaults, then per-call options. Nested objects merge one level deep. */
export function resolveSearchOptions(...layers: (Partial<SearchOptions> | undefined)[]): SearchOptions {
  const out: SearchOptions = { ...defaultSearchOptions };
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of Object.keys(layer) as (keyof SearchOptions)[]) {
      const value = layer[key];
      if (value === undefined) continue;
      const current = out[key];
      const mergeable = isPlainObject(value) && isPlainObject(current) && key !== 'decay';
      (out as unknown as Record<string, unknown>)[key] = mergeable ? { ...current, ...value } : value;
    }
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
