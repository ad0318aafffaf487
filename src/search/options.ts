import type { MemoryRecord } from '../types.js';
import { invalidInput } from '../errors.js';
import type { FusionMethod } from './fuse.js';
import type { StabilityDecay } from './retention.js';
import { MAX_FEEDBACK_DOCS, MAX_FEEDBACK_TERMS, type FeedbackOptions } from './feedback.js';
import { NEIGHBOURS_BY_TIME, NEIGHBOURS_TIME_GAP_MS, type NeighbourOptions } from './neighbours.js';

/** Hard constraints. A memory that fails one is never a candidate. */
export interface SearchFilter {
  project?: string | string[];
  /**
   * `'personal'` (also matches memories with no scope), `'shared'`, `'both'` (either), or any label of your own
   * (matched exactly); a list matches any of its entries.
   */
  scope?: 'personal' | 'shared' | 'both' | (string & {}) | string[];
  /** Memory must carry every one of these tags. */
  tags?: string[];
  kinds?: string[];
  /** Inclusive bounds on createdAt (epoch ms, ISO string or Date). */
  since?: number | string | Date;
  until?: number | string | Date;
  /** `true`: core memories only (MemoryRecord.core); `false`: none of them. */
  core?: boolean;
}

/**
 * Stage `associate` (search/associate.ts): each of the best `k` candidates brings in the memories associated with
 * it (weight after decay ≥ `floor`), its fused score fused(via) × calibrated cosine × weight (then recency, boosts
 * and penalties as any candidate); with `bridges`, a second hop from those, weight the product of both.
 */
export interface AssociationOptions {
  /** Associations weaker than this after decay are not followed. Default 0.3 (the seed's activation floor). */
  floor?: number;
  /** Follow a second hop (bridge memories). Default true. */
  bridges?: boolean;
  /** A bridge memory's cosine to the query must reach this. Default 0.3. */
  bridgeMinCosine?: number;
  /** Most associative memories added per search. Default: `k`. */
  limit?: number;
}

export type DecayOptions =
  | { kind: 'exponential'; tauMs: number }
  | { kind: 'hyperbolic'; halfLifeDays: number }
  | StabilityDecay;

/**
 * MMR over the best max(3k, k + 20) candidates. Similarity is cosine calibrated to the store (engine option
 * `calibrateSimilarity`, see similarity.ts), so the thresholds mean the same with any model.
 */
export interface DiversityOptions {
  /** MMR trade-off: 1 = pure relevance, 0 = pure novelty. */
  lambda: number;
  /**
   * A candidate that says the same thing as a picked hit (lexical/statement.ts: the same words after case,
   * punctuation, whitespace and stop words; numbers, identifiers and negations kept) is dropped as a duplicate.
   * With a threshold, so is one whose similarity to a picked hit is at or above it (the old near-duplicate drop:
   * two notes that differ in a flight number or a PIN embed alike). Default none: similarity orders, never hides.
   */
  duplicateThreshold?: number;
  /**
   * Redundancy of two memories is max(similarity, tagWeight × Jaccard of their tags) (Memsense): two memories
   * with the same tags count as related even when their texts differ. Default 0.35; 0 ignores tags.
   */
  tagWeight?: number;
}

/** Stage `currency` (search/currency.ts): the later of two versions of one fact placed first. */
export interface CurrencyOptions {
  /** The later version moves above the earlier one when its score is at least this share of the earlier one's: 0 to 1. */
  ratio: number;
}

/** Stage `rerank`: which re-ranker re-orders the best `inputLimit` candidates (search/rerank.ts). */
export interface RerankOptions {
  /** `'llm'`: the engine's language model; `'hook'`: the engine's `reranker`; `'rules'`: deterministic (search/rerank-rules.ts). */
  by: 'llm' | 'hook' | 'rules';
  /** Candidates re-ranked: an integer from 1 to 200. Default 40 (CEMS). */
  inputLimit: number;
  /** `'rules'` only: `s · (1 + coverage × c + proximity × p)` (search/rerank-rules.ts). Default `{ coverage: 0.25, proximity: 0 }`. */
  weights?: { coverage: number; proximity: number };
}

export interface ProjectBoost {
  same: number;
  other: number;
  none: number;
}

/** Every per-search knob. Defaults live in `defaultSearchOptions`, merged once by `resolveSearchOptions`. */
export interface SearchOptions {
  /**
   * Which legs run (search/route.ts). Default 'auto': hybrid, or lexical for one identifier-like token.
   * `'vector'` is the fast path: no stage calls the language model.
   */
  mode: 'auto' | 'lexical' | 'vector' | 'hybrid';
  /** Stage `understand`: classify the query by cue words (`'rules'`), or ask the language model (`'llm'`, rules without one). Default 'rules'. */
  understand: 'rules' | 'llm';
  /**
   * Stage `synthesize`: more queries for the same question, each searched by both legs and fused with the
   * caller's by weighted RRF. `'llm'`: the language model writes 2–5 by query type; `'offline'`: built from the
   * store and the model (search/synthesize-offline.ts); `false`: off. Default false.
   */
  synthesis: false | 'offline' | 'llm';
  /**
   * Stage `feedback` (search/feedback.ts): pseudo-relevance feedback on the lexical leg. The best `docs` lexical
   * hits vote for their terms; the best `terms` join the query's own words, which keep the share `originalWeight`
   * of the weighted query, and the lexical leg searches again. Only the query's words count toward the
   * matched-terms factor. `false`: off. Default false; a partial object fills in `{ docs: 10, terms: 20, originalWeight: 0.5 }`.
   */
  feedback: FeedbackOptions | false;
  /** Weight of the caller's query list against 1 for each synthesized or HyDE list. Default 2 (CEMS). */
  originalQueryWeight: number;
  /**
   * How several query lists become one (search/fuse.ts `fuseLists`): `'scores'`, the weighted mean of each
   * query's fused score; `'rrf'`, CEMS's weighted RRF with `rrfK`. Default 'scores' (docs/quality.md: RRF's flat
   * scores cost the later stages 13 points of recall@10).
   */
  listFusion: 'scores' | 'rrf';
  /** Stage `hyde`: the language model writes a hypothetical answer, searched as one more vector list. Default false. */
  hyde: boolean;
  /** Stage `rerank`. Default false (off); a partial object fills in `{ by: 'rules', inputLimit: 40 }`. */
  rerank: RerankOptions | false;
  /**
   * Stage `currency` (search/currency.ts): of two candidates that are versions of one fact (the later holds every
   * query term the earlier holds and says something else), the later is placed just above the earlier, which names
   * it in `explain.newerVersion`. `false`: off. Default `CURRENCY_DEFAULT` (docs/quality.md).
   */
  currency: CurrencyOptions | false;
  /** Milliseconds a language-model call or the reranker hook may take before its stage is skipped. Default 20,000. */
  llmTimeoutMs: number;
  /** Hits returned: an integer from 1 to `MAX_K` (1,000). Default 5. */
  k: number;
  /** Candidates each leg contributes (at least `k`): an integer from 1 to `MAX_CANDIDATE_POOL` (10,000). Default 50. */
  candidatePool: number;
  /**
   * How the legs' lists become one score (search/fuse.ts). `'convex'`: weighted sum of min-max normalised leg
   * scores (the lexical leg's from half its weakest score); `'scaled'`: the same sum with each leg on an absolute scale (a match never scores 0, a weak top hit
   * never earns its leg's full weight); `'rrf'`: Reciprocal Rank Fusion with `rrfK`; `'blend'`: CEMS's
   * ½ normalised RRF + ½ cosine. Default 'convex' (docs/quality.md has the evaluation).
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
   * same thread (`meta.thread`), or, for memories without a thread, in time (`time`, within `timeGapMs` steps); a
   * memory keeps the largest offer. `false` turns it off.
   * Default `{ window: 2, weight: 0.5, lenders: 20, time: true, timeGapMs: 1_800_000 }` (30 minutes).
   */
  neighbours: NeighbourOptions | false;
  /** Hard constraints (search/filter.ts), applied inside the legs. Default `{}`. */
  filter: SearchFilter;
  /** Also return superseded memories, their score × `deepRecallPenalty`. Default false. */
  deepRecall: boolean;
  /** Also return expired memories of kind `plan` or `transient_state`, their score × `deepRecallPenalty`. Default false. */
  includeExpiredTransients: boolean;
  /** With `deepRecall`, also return every expired memory, its score × `deepRecallPenalty`. Default false. */
  includeExpiredInDeepRecall: boolean;
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
  /**
   * Which memories age-based decay (hyperbolic, exponential) applies to. `'sequences'` (default): memories in a
   * thread (`meta.thread`) or a sitting over time (three or more memories without a thread, each within
   * `neighbours.timeGapMs` of the next, as neighbour support reads them); a one-off note or an imported document
   * keeps its score whatever its date (the currency stage, not decay, puts the newer of two versions first).
   * `'all'`: every memory. Stability decay ignores it (it counts from use, not age).
   */
  decayScope: 'sequences' | 'all';
  /** The caller's current project: drives the project boost. Default none. */
  project: string | undefined;
  /** Factors when `project` is set. Default `{ same: 1.3, other: 0.8, none: 0.9 }`. */
  projectBoost: ProjectBoost;
  /** Factor for pinned memories. Default 1.1. */
  pinnedBoost: number;
  /**
   * Factor for memories written on a date the query names ("in June", "on 13 October 2023"; search/dates.ts,
   * `trace.understanding.dates`). 1: off. Default 4 (docs/quality.md).
   */
  dateBoost: number;
  /** Caller hook multiplied into the boost. In-process engines only (functions do not cross the worker). Default none. */
  boost: ((memory: MemoryRecord) => number) | undefined;
  /**
   * MMR and duplicate drop; `false`: top k by score. Default `{ lambda: 1, tagWeight: 0.35 }`: memories that say the
   * same thing dropped, no relevance traded for novelty (docs/quality.md).
   */
  diversity: DiversityOptions | false;
  /**
   * Which hits fill the k places (stage `diversify`) and in what order the context is filled (stage `assemble`):
   * `'greedy'`, the best by MMR, the context by score; `'diverse'` (CEMS), first the best of each thread
   * (`meta.thread`), then the best of the rest, for the hits and for the context (search/diverse-sessions.ts);
   * `'auto'`: diverse for aggregation questions (stage `understand`), greedy otherwise; `'cover'`, greedy, then
   * the hits reach every thread the lexical leg's first k reach (`explain.covers`), so never fewer sessions than
   * keyword search; `'hedge'`, greedy, then the same cover over the lexical leg's first 2, or its first k for an
   * aggregation question or when no thread holds 40% of the first 10 candidates (search/diversify.ts `hedgeDepth`).
   * Not with `raw` or `diversity: false`. Default 'hedge' (docs/quality.md).
   */
  assembly: 'greedy' | 'diverse' | 'auto' | 'cover' | 'hedge';
  /** Added to a memory's fused score per unit of its `quality` (0–1): `fused + qualityWeight × quality`. Default 0.1 (Memsense). */
  qualityWeight: number;
  /** Token budget of the assembled context. Default 2000. */
  tokenBudget: number;
  /** Count returned hits as accessed (bookkeeping written in the background). Default true. */
  touch: boolean;
  /**
   * Stage `reinforce` (search/reinforce.ts), with `touch`: hits gain stability and record the session, every two
   * direct hits strengthen their association, and well-used memories become core; written in the background.
   * Default true (docs/learning.md: it changes no ranking unless `associations` or `decay: { kind: 'stability' }`
   * reads it).
   */
  reinforce: boolean;
  /** Stage `associate`. Default false (docs/learning.md has the replay that decided it). */
  associations: AssociationOptions | false;
  /** The session a search belongs to (for core promotion). Default: one per engine, made when it opens. */
  session: string | undefined;
  /** Overrides the engine clock for this search (epoch ms). Default: the engine clock. */
  now: number | undefined;
}

/** Largest `k`: more hits than a context or a page can use; each hit is copied out and assembled. */
export const MAX_K = 1_000;
/** Largest `rerank.inputLimit`: every candidate is shown to the re-ranker (a prompt grows with each). */
const MAX_RERANK_INPUT = 200;
/** Largest `candidatePool`: each leg keeps a heap of this size and fusion, filtering and adjusting walk it. */
export const MAX_CANDIDATE_POOL = 10_000;
/** Largest `neighbours.window`: support a hit lends reaches this many memories either side, no further. */
export const MAX_NEIGHBOUR_WINDOW = 50;

/** The currency stage's ratio: a later version moves up when it scores at least this share of the earlier (docs/quality.md). */
export const CURRENCY_RATIO = 0.25;

export const defaultSearchOptions: Readonly<SearchOptions> = Object.freeze({
  mode: 'auto',
  understand: 'rules',
  synthesis: false,
  feedback: false,
  originalQueryWeight: 2,
  listFusion: 'scores',
  hyde: false,
  rerank: false,
  currency: Object.freeze({ ratio: CURRENCY_RATIO }),
  llmTimeoutMs: 20_000,
  k: 5,
  candidatePool: 50,
  fusion: 'convex',
  rrfK: 60,
  weights: Object.freeze({ lexical: 0.8, vector: 0.2 }),
  topRankBonus: false,
  neighbours: Object.freeze({ window: 2, weight: 0.5, lenders: 20, time: NEIGHBOURS_BY_TIME, timeGapMs: NEIGHBOURS_TIME_GAP_MS }),
  filter: Object.freeze({}),
  deepRecall: false,
  includeExpiredTransients: false,
  includeExpiredInDeepRecall: false,
  deepRecallPenalty: 0.5,
  minScore: 0,
  raw: false,
  decay: Object.freeze({ kind: 'hyperbolic', halfLifeDays: 60 }) as DecayOptions,
  decayFrom: 'created',
  decayAlpha: 0.1,
  decayScope: 'sequences',
  project: undefined,
  projectBoost: Object.freeze({ same: 1.3, other: 0.8, none: 0.9 }),
  pinnedBoost: 1.1,
  dateBoost: 4,
  boost: undefined,
  diversity: Object.freeze({ lambda: 1, tagWeight: 0.35 }),
  assembly: 'hedge',
  qualityWeight: 0.1,
  tokenBudget: 2000,
  touch: true,
  reinforce: true,
  associations: false,
  session: undefined,
  now: undefined,
}) as Readonly<SearchOptions>;

/** What `associations: {}` turns on. */
export const DEFAULT_ASSOCIATIONS: Readonly<Required<Omit<AssociationOptions, 'limit'>>> = Object.freeze({ floor: 0.3, bridges: true, bridgeMinCosine: 0.3 });

/** What `feedback: {}` turns on. */
export const DEFAULT_FEEDBACK: Readonly<FeedbackOptions> = Object.freeze({ docs: 10, terms: 20, originalWeight: 0.5 });

/** What a partial object option merges over when the option is off by default. */
const WHEN_TURNED_ON: Partial<Record<keyof SearchOptions, object>> = {
  feedback: DEFAULT_FEEDBACK,
  rerank: Object.freeze({ by: 'rules', inputLimit: 40 }),
  associations: DEFAULT_ASSOCIATIONS,
  currency: Object.freeze({ ratio: CURRENCY_RATIO }),
};

/**
 * The defaults' changes on a collection of long documents (`LexicalIndex.longMemories`: articles, papers, imported
 * files rather than chat turns or notes), under any engine or call options. With the matched-terms factor off
 * (LexicalIndex, 'auto') they lift BEIR NFCorpus from nDCG@10 0.269 to 0.305 on the dev queries they were chosen on
 * and from 0.303 to 0.333 on test; on chat they would cost 0.041 of R@10 (docs/quality.md).
 */
export const LONG_MEMORY_SEARCH: Readonly<Partial<SearchOptions>> = Object.freeze({
  feedback: DEFAULT_FEEDBACK,
  fusion: 'scaled',
  weights: Object.freeze({ lexical: 0.9, vector: 0.1 }),
});

/** Merges defaults, then engine defaults, then per-call options. Nested objects merge one level deep. */
export function resolveSearchOptions(...layers: (Partial<SearchOptions> | undefined)[]): SearchOptions {
  return mergeSearchOptions(defaultSearchOptions, ...layers) as SearchOptions;
}

/** `resolveSearchOptions` without the defaults: what the layers set, for a later resolve to put over its own. */
export function mergeSearchOptions(...layers: (Partial<SearchOptions> | undefined)[]): Partial<SearchOptions> {
  const out: Partial<SearchOptions> = {};
  for (const layer of layers) {
    if (!layer) continue;
    for (const key of Object.keys(layer) as (keyof SearchOptions)[]) {
      const value = layer[key];
      if (value === undefined) continue;
      // Unset so far (only without the defaults' layer): left partial, for the resolve that puts it over a default.
      if (!(key in out)) {
        (out as Record<string, unknown>)[key] = value;
        continue;
      }
      // A partial object merges over the current value, or over the default when the current one is `false`.
      const current = isPlainObject(out[key]) ? out[key] : (WHEN_TURNED_ON[key] ?? defaultSearchOptions[key]);
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
  if (!['convex', 'scaled', 'rrf', 'blend'].includes(o.fusion)) fail('fusion', "'convex', 'scaled', 'rrf' or 'blend'", o.fusion);
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
    } else if (o.decay.kind === 'stability') {
      const { betaDays, floor, coreFloor } = o.decay;
      if (betaDays !== undefined && !(betaDays > 0 && Number.isFinite(betaDays))) fail('decay.betaDays', 'a positive number', betaDays);
      if (floor !== undefined && !(floor >= 0 && floor <= 1)) fail('decay.floor', 'a number from 0 to 1', floor);
      if (coreFloor !== undefined && !(coreFloor >= 0 && coreFloor <= 1)) fail('decay.coreFloor', 'a number from 0 to 1', coreFloor);
    } else {
      fail('decay', "false, { kind: 'exponential', tauMs }, { kind: 'hyperbolic', halfLifeDays } or { kind: 'stability' }", o.decay);
    }
  }
  if (o.decayFrom !== 'created' && o.decayFrom !== 'accessed') fail('decayFrom', "'created' or 'accessed'", o.decayFrom);
  nonNegative('decayAlpha', o.decayAlpha);
  if (o.decayScope !== 'sequences' && o.decayScope !== 'all') fail('decayScope', "'sequences' or 'all'", o.decayScope);
  if (o.project !== undefined && typeof o.project !== 'string') fail('project', 'a string', o.project);
  nonNegative('projectBoost.same', o.projectBoost.same);
  nonNegative('projectBoost.other', o.projectBoost.other);
  nonNegative('projectBoost.none', o.projectBoost.none);
  nonNegative('pinnedBoost', o.pinnedBoost);
  nonNegative('dateBoost', o.dateBoost);
  if (o.boost !== undefined && typeof o.boost !== 'function') fail('boost', 'a function', o.boost);
  if (o.diversity !== false) {
    const { lambda, duplicateThreshold, tagWeight } = o.diversity;
    if (!(lambda >= 0 && lambda <= 1)) fail('diversity.lambda', 'a number from 0 to 1', lambda);
    if (duplicateThreshold !== undefined && (typeof duplicateThreshold !== 'number' || Number.isNaN(duplicateThreshold))) fail('diversity.duplicateThreshold', 'a number', duplicateThreshold);
    if (tagWeight !== undefined && !(tagWeight >= 0 && tagWeight <= 1)) fail('diversity.tagWeight', 'a number from 0 to 1', tagWeight);
  }
  if (o.understand !== 'rules' && o.understand !== 'llm') fail('understand', "'rules' or 'llm'", o.understand);
  if (o.synthesis !== false && o.synthesis !== 'offline' && o.synthesis !== 'llm') fail('synthesis', "false, 'offline' or 'llm'", o.synthesis);
  if (o.feedback !== false) {
    if (typeof o.feedback !== 'object' || o.feedback === null) fail('feedback', 'false or { docs, terms, originalWeight }', o.feedback);
    atMost('feedback.docs', o.feedback.docs, MAX_FEEDBACK_DOCS);
    atMost('feedback.terms', o.feedback.terms, MAX_FEEDBACK_TERMS);
    const w = o.feedback.originalWeight;
    if (!(typeof w === 'number' && w > 0 && w <= 1)) fail('feedback.originalWeight', 'a number above 0 and at most 1', w);
  }
  nonNegative('originalQueryWeight', o.originalQueryWeight);
  if (o.listFusion !== 'scores' && o.listFusion !== 'rrf') fail('listFusion', "'scores' or 'rrf'", o.listFusion);
  if (typeof o.hyde !== 'boolean') fail('hyde', 'true or false', o.hyde);
  if (o.currency !== false) {
    if (typeof o.currency !== 'object' || o.currency === null) fail('currency', 'false or { ratio }', o.currency);
    if (!(o.currency.ratio >= 0 && o.currency.ratio <= 1)) fail('currency.ratio', 'a number from 0 to 1', o.currency.ratio);
  }
  if (o.rerank !== false) {
    if (typeof o.rerank !== 'object' || o.rerank === null) fail('rerank', "false or { by: 'llm' | 'hook' | 'rules', inputLimit }", o.rerank);
    if (!['llm', 'hook', 'rules'].includes(o.rerank.by)) fail('rerank.by', "'llm', 'hook' or 'rules'", o.rerank.by);
    atMost('rerank.inputLimit', o.rerank.inputLimit, MAX_RERANK_INPUT);
    if (o.rerank.weights !== undefined) {
      nonNegative('rerank.weights.coverage', o.rerank.weights.coverage);
      nonNegative('rerank.weights.proximity', o.rerank.weights.proximity);
    }
  }
  if (!(o.llmTimeoutMs > 0 && o.llmTimeoutMs <= 2 ** 31 - 1)) fail('llmTimeoutMs', `a positive number of milliseconds up to ${2 ** 31 - 1}`, o.llmTimeoutMs);
  if (!['greedy', 'diverse', 'auto', 'cover', 'hedge'].includes(o.assembly)) fail('assembly', "'greedy', 'diverse', 'auto', 'cover' or 'hedge'", o.assembly);
  nonNegative('qualityWeight', o.qualityWeight);
  if (o.neighbours !== false) {
    if (typeof o.neighbours !== 'object' || o.neighbours === null) fail('neighbours', 'false or { window, weight, lenders }', o.neighbours);
    const { window, weight, lenders } = o.neighbours;
    if (!(Number.isInteger(window) && window >= 0 && window <= MAX_NEIGHBOUR_WINDOW)) fail('neighbours.window', `an integer from 0 to ${MAX_NEIGHBOUR_WINDOW}`, window);
    nonNegative('neighbours.weight', weight);
    if (!(Number.isInteger(lenders) && lenders >= 0 && lenders <= MAX_CANDIDATE_POOL)) fail('neighbours.lenders', `an integer from 0 to ${MAX_CANDIDATE_POOL}`, lenders);
    const { time, timeGapMs } = o.neighbours;
    if (time !== undefined && typeof time !== 'boolean') fail('neighbours.time', 'true or false', time);
    if (timeGapMs !== undefined && !(typeof timeGapMs === 'number' && timeGapMs >= 0)) fail('neighbours.timeGapMs', 'a number of milliseconds ≥ 0 (Infinity: no limit)', timeGapMs);
  }
  nonNegative('tokenBudget', o.tokenBudget);
  for (const flag of ['touch', 'reinforce', 'deepRecall', 'includeExpiredTransients', 'includeExpiredInDeepRecall'] as const) {
    if (typeof o[flag] !== 'boolean') fail(flag, 'true or false', o[flag]);
  }
  if (o.associations !== false) {
    if (typeof o.associations !== 'object' || o.associations === null) fail('associations', 'false or { floor, bridges, bridgeMinCosine, limit? }', o.associations);
    const { floor, bridges, bridgeMinCosine, limit } = { ...DEFAULT_ASSOCIATIONS, ...o.associations };
    if (!(floor >= 0 && floor <= 1)) fail('associations.floor', 'a number from 0 to 1', floor);
    if (typeof bridges !== 'boolean') fail('associations.bridges', 'true or false', bridges);
    if (!(bridgeMinCosine >= -1 && bridgeMinCosine <= 1)) fail('associations.bridgeMinCosine', 'a number from -1 to 1', bridgeMinCosine);
    if (limit !== undefined) atMost('associations.limit', limit, MAX_K);
  }
  if (o.session !== undefined && (typeof o.session !== 'string' || o.session === '' || o.session.length > 512)) fail('session', 'a non-empty string of at most 512 characters', o.session);
  if (o.now !== undefined && !Number.isFinite(o.now)) fail('now', 'epoch milliseconds', o.now);
  if (typeof o.filter !== 'object' || o.filter === null) fail('filter', 'an object', o.filter);
  return o;
}
