import type { MemoryRecord } from './types.js';
import { invalidInput } from './errors.js';

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
      // A partial object merges over the current value, or over the default when the current one is `false`.
      const current = isPlainObject(out[key]) ? out[key] : defaultSearchOptions[key];
      const mergeable = isPlainObject(value) && isPlainObject(current) && key !== 'decay';
      (out as unknown as Record<string, unknown>)[key] = mergeable ? { ...current, ...value } : value;
    }
  }
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Throws INVALID_INPUT naming the first option out of range. Called once per search on the merged options. */
export function validateSearchOptions(o: SearchOptions): SearchOptions {
  const fail = (name: string, rule: string, value: unknown): never => {
    throw invalidInput(`search option ${name} must be ${rule}, got ${JSON.stringify(value) ?? String(value)}`);
  };
  const positiveInt = (name: string, v: number) => (Number.isInteger(v) && v > 0 ? v : fail(name, 'a positive integer', v));
  const nonNegative = (name: string, v: number) => (typeof v === 'number' && v >= 0 && Number.isFinite(v) ? v : fail(name, 'a finite number ≥ 0', v));
  if (!['auto', 'lexical', 'vector', 'hybrid'].includes(o.mode)) fail('mode', "'auto', 'lexical', 'vector' or 'hybrid'", o.mode);
  positiveInt('k', o.k);
  positiveInt('candidatePool', o.candidatePool);
  nonNegative('rrfK', o.rrfK);
  nonNegative('weights.lexical', o.weights.lexical);
  nonNegative('weights.vector', o.weights.vector);
  nonNegative('deepRecallPenalty', o.deepRecallPenalty);
  if (typeof o.minScore !== 'number' || Number.isNaN(o.minScore)) fail('minScore', 'a number', o.minScore);
  if (o.decay !== false) {
    if (o.decay.kind === 'exponential') {
      if (!(o.decay.tauMs > 0)) fail('decay.tauMs', 'a positive number', o.decay.tauMs);
    } else if (o.decay.kind === 'hyperbolic') {
      if (!(o.decay.halfLifeDays > 0)) fail('decay.halfLifeDays', 'a positive number', o.decay.halfLifeDays);
    } else {
      fail('decay', "false, { kind: 'exponential', tauMs } or { kind: 'hyperbolic', halfLifeDays }", o.decay);
    }
  }
  if (o.decayFrom !== 'created' && o.decayFrom !== 'accessed') fail('decayFrom', "'created' or 'accessed'", o.decayFrom);
  nonNegative('decayAlpha', o.decayAlpha);
  if (o.project !== undefined && typeof o.project !== 'string') fail('project', 'a string', o.project);
  nonNegative('projectBoost.same', o.projectBoost.same);
  nonNegative('projectBoost.other', o.projectBoost.other);
  nonNegative('projectBoost.none', o.projectBoost.none);
  nonNegative('pinnedBoost', o.pinnedBoost);
  if (o.boost !== undefined && typeof o.boost !== 'function') fail('boost', 'a function', o.boost);
  if (o.diversity !== false) {
    const { lambda, duplicateThreshold } = o.diversity;
    if (!(lambda >= 0 && lambda <= 1)) fail('diversity.lambda', 'a number from 0 to 1', lambda);
    if (typeof duplicateThreshold !== 'number' || Number.isNaN(duplicateThreshold)) fail('diversity.duplicateThreshold', 'a number', duplicateThreshold);
  }
  nonNegative('tokenBudget', o.tokenBudget);
  if (o.now !== undefined && !Number.isFinite(o.now)) fail('now', 'epoch milliseconds', o.now);
  if (typeof o.filter !== 'object' || o.filter === null) fail('filter', 'an object', o.filter);
  return o;
}
