import type { MemoryRecord } from '../types.js';
import { invalidInput } from '../errors.js';
import type { FusionMethod } from './fuse.js';
import type { NeighbourOptions } from './neighbours.js';

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

/**
 * MMR over the best max(3k, k + 20) candidates. Similarity is cosine calibrated to the store (engine option
 * `calibrateSimilarity`, see similarity.ts), so the thresholds mean the same with any model.
 */
export interface DiversityOptions {
  /** MMR trade-off: 1 = pure relevance, 0 = pure novelty. */
  lambda: number;
  /** Similarity at or above which a candidate counts as a near-duplicate of a picked hit and is dropped. */
  duplicateThreshold: number;
}

export interface ProjectBoost {
  same: number;
  other: number;
  none: number;
}

/** Every per-search knob. Defaults live in `defaultSearchOptions`, merged once by `resolveSearchOptions`. */
export interface SearchOptions {
  /** Which legs run (search/route.ts). Default 'auto': hybrid, or lexical for one identifier-like token. */
  mode: 'auto' | 'lexical' | 'vector' | 'hybrid';
  /** Hits returned: an integer from 1 to `MAX_K` (1,000). Default 5. */
  k: number;
  /** Candidates each leg contributes (at least `k`): an integer from 1 to `MAX_CANDIDATE_POOL` (10,000). Default 50. */
  candidatePool: number;
  /**
   * How the legs' lists become one score. `'convex'`: weighted sum of min-max normalised leg scores;
   * `'rrf'`: Reciprocal Rank Fusion with `rrfK`. Default 'convex' (docs/quality.md has the evaluation).
   */
  fusion: FusionMethod;
  /** RRF's k (only with `fusion: 'rrf'`). Default 60. */
  rrfK: number;
  /**
   * Leg weights. Convex fusion uses them as shares (w / Σw); RRF multiplies each leg's 1/(k + rank).
   * Default `{ lexical: 0.8, vector: 0.2 }`: the built-in model's vector leg alone is weaker than BM25 on
   * conversational memories, but a fifth of the weight still adds recall (docs/quality.md).
   */
  weights: { lexical: number; vector: number };
  /** CEMS bonus per leg: +0.05 for rank 1, +0.02 for ranks 2-3. Default false. */
  topRankBonus: boolean;
  /**
   * Thread-neighbour support (stage `neighbours`, after `fuse`): each of the best `lenders` candidates lends
   * `weight × its fused score / distance` to the memories up to `window` places before and after it in the
   * same thread (`meta.thread`); a memory keeps the largest offer. `false` turns it off.
   * Default `{ window: 2, weight: 0.5, lenders: 20 }`.
   */
  neighbours: NeighbourOptions | false;
  /** Hard constraints (search/filter.ts), applied inside the legs. Default `{}`. */
  filter: SearchFilter;
  /** Also return superseded memories, their score × `deepRecallPenalty`. Default false. */
  deepRecall: boolean;
  /** Default 0.5. */
  deepRecallPenalty: number;
  /** Hits need a final score ≥ this (not with `raw`). Default 0. */
  minScore: number;
  /** Skip `minScore`, duplicate drop and MMR: the top k by score (debugging). Default false. */
  raw: boolean;
  /** Recency curve R (see decay.ts). Default hyperbolic, half-life 60 days (CEMS). `false`: R = 1. */
  decay: DecayOptions | false;
  /** Age counts from creation, or from the last access (falling back to creation). Default 'created'. */
  decayFrom: 'created' | 'accessed';
  /**
   * The recency factor applied is R^α: α = 1 is the raw curve, smaller damps it. Default 0.1: a year-old
   * memory keeps 0.82 of its score, so recency breaks near-ties without burying old facts (docs/quality.md
   * has the evaluation of α).
   */
  decayAlpha: number;
  /** The caller's current project: drives the project boost. Default none. */
  project: string | undefined;
  /** Factors when `project` is set. Default `{ same: 1.3, other: 0.8, none: 0.9 }`. */
  projectBoost: ProjectBoost;
  /** Factor for pinned memories. Default 1.1. */
  pinnedBoost: number;
  /** Caller hook multiplied into the boost. In-process engines only (functions do not cross the worker). Default none. */
  boost: ((memory: MemoryRecord) => number) | undefined;
  /** MMR and duplicate drop; `false`: top k by score. Default `{ lambda: 0.78, duplicateThreshold: 0.94 }`. */
  diversity: DiversityOptions | false;
  /** Token budget of the assembled context. Default 2000. */
  tokenBudget: number;
  /** Count returned hits as accessed (bookkeeping written in the background). Default true. */
  touch: boolean;
  /** Overrides the engine clock for this search (epoch ms). Default: the engine clock. */
  now: number | undefined;
}

/** Largest `k`: more hits than a context or a page can use; each hit is copied out and assembled. */
export const MAX_K = 1_000;
/** Largest `candidatePool`: each leg keeps a heap of this size and fusion, filtering and adjusting walk it. */
export const MAX_CANDIDATE_POOL = 10_000;

export const defaultSearchOptions: Readonly<SearchOptions> = Object.freeze({
  mode: 'auto',
  k: 5,
  candidatePool: 50,
  fusion: 'convex',
  rrfK: 60,
  weights: Object.freeze({ lexical: 0.8, vector: 0.2 }),
  topRankBonus: false,
  neighbours: Object.freeze({ window: 2, weight: 0.5, lenders: 20 }),
  filter: Object.freeze({}),
  deepRecall: false,
  deepRecallPenalty: 0.5,
  minScore: 0,
  raw: false,
  decay: Object.freeze({ kind: 'hyperbolic', halfLifeDays: 60 }) as DecayOptions,
  decayFrom: 'created',
  decayAlpha: 0.1,
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
  const atMost = (name: string, v: number, max: number) => (positiveInt(name, v) <= max ? v : fail(name, `an integer from 1 to ${max}`, v));
  atMost('k', o.k, MAX_K);
  atMost('candidatePool', o.candidatePool, MAX_CANDIDATE_POOL);
  if (o.fusion !== 'convex' && o.fusion !== 'rrf') fail('fusion', "'convex' or 'rrf'", o.fusion);
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
  if (o.neighbours !== false) {
    if (typeof o.neighbours !== 'object' || o.neighbours === null) fail('neighbours', 'false or { window, weight, lenders }', o.neighbours);
    const { window, weight, lenders } = o.neighbours;
    if (!(Number.isInteger(window) && window >= 0)) fail('neighbours.window', 'an integer ≥ 0', window);
    nonNegative('neighbours.weight', weight);
    if (!(Number.isInteger(lenders) && lenders >= 0)) fail('neighbours.lenders', 'an integer ≥ 0', lenders);
  }
  nonNegative('tokenBudget', o.tokenBudget);
  if (o.now !== undefined && !Number.isFinite(o.now)) fail('now', 'epoch milliseconds', o.now);
  if (typeof o.filter !== 'object' || o.filter === null) fail('filter', 'an object', o.filter);
  return o;
}
