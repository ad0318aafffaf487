/**
 * Fusion of the legs' candidate lists into one score per memory (`FusedCandidate.fused`, whichever the method).
 *
 * - `'convex'`: a convex combination of min-max normalised leg scores,
 *     fused(d) = Σ_l ŵ_l · (s_l(d) − f_l) / (max_l − f_l),  ŵ_l = w_l / Σ w,
 *   f_l the leg's floor: min_l for the vector leg, min_l / 2 for the lexical one (`LEXICAL_FLOOR_SHARE`), so a
 *   lexical match never scores 0 (plain min-max gave the weaker of two matches nothing, below memories no word
 *   matched). A leg that did not return d adds 0 (a one-item leg normalises to 1). Score-aware: it keeps how far
 *   ahead a leg's best hit is, which rank fusion throws away (Bruch et al. 2022, "An Analysis of Fusion
 *   Functions for Hybrid Retrieval"). The vector leg's best still takes its full weight, however weak.
 * - `'scaled'`: the same convex combination with each leg on an absolute scale:
 *     n_lexical(s) = s / max(B / 4, max_lexical)    B = the query's reference BM25 (`LexicalIndex.scoreBound`):
 *                                                   each of its indexed terms matched once at average length;
 *                                                   BM25's matched-term factor puts a memory matching half the
 *                                                   query near B / 4
 *     n_vector(c)  = clamp01((c − q) / (1 − q))      q = the query's mean cosine to the stored memories
 *                                                   (`VectorIndex.meanCosineTo`): a typical memory scores 0
 *   A lexical match always earns more than 0, so boosts act on it; a leg's top earns its full weight only as far
 *   as its own score deserves. Without anchors it divides lexical scores by their max and takes cosine as is.
 * - `'rrf'`: Reciprocal Rank Fusion, rrf(d) = Σ_l w_l / (rrfK + rank_l(d)), summed over the legs that
 *   returned d, ranks 1-based.
 * - `'blend'` (CEMS score blending): fused(d) = ½ · rrf(d) / max rrf + ½ · clamp01(cosine(d)), 0 for the
 *   cosine when the vector leg did not return d.
 * With `topRankBonus` (CEMS), each leg with a positive weight adds +0.05 for its rank 1 and +0.02 for
 * ranks 2–3, under any method. docs/quality.md compares them.
 */
import { calibratedCosine } from '../vector/similarity.js';

type LegName = 'lexical' | 'vector';

export interface LegResult {
  leg: LegName;
  weight: number;
  /** Best first. */
  items: { id: string; score: number }[];
}

export interface FusedCandidate {
  id: string;
  /** The fused score, whichever the method; the `neighbours` stage adds its support to it. */
  fused: number;
  /** With RRF only: the reciprocal-rank sum the legs gave (neighbour support not included). */
  rrf?: number;
  rank: Record<LegName, number | null>;
  legScore: Record<LegName, number | null>;
  /** Support lent by a thread neighbour (the `neighbours` stage), already included in `fused`. */
  neighbour?: { from: string; bonus: number };
  /** With several query lists (`fuseLists`): the rank in each list, and with `'rrf'` the weighted reciprocal-rank sum. */
  lists?: { ranks: (number | null)[]; rrf?: number };
  /** The stage `feedback` changed its lexical rank: the rank before (1-based; null, the first pass did not return it). */
  feedback?: { before: number | null };
  /** Brought in by the `associate` stage rather than a leg (see Hit.explain.associative). */
  associative?: { via: string; bridge?: string; weight: number; viaFused: number; similarity: number };
}

interface FuseOptions {
  rrfK: number;
  topRankBonus: boolean;
}

export type FusionMethod = 'convex' | 'scaled' | 'rrf' | 'blend';

/** What `'scaled'` fusion reads from the indexes for one query (see the top of this file). */
export interface LegAnchors {
  /** The query's reference BM25 (`LexicalIndex.scoreBound(query)`); null: the lexical list's max alone. */
  lexicalBound: number | null;
  /** The query's mean cosine to the stored memories (`VectorIndex.meanCosineTo(query)`); 0: raw cosine. */
  queryBaseline: number;
}

/** Share of the reference BM25 at which a lexical match earns the leg's full weight under `'scaled'`. */
export const LEXICAL_BOUND_SHARE = 0.25;

const NO_ANCHORS: LegAnchors = { lexicalBound: null, queryBaseline: 0 };

/** Fuses with the chosen method; `anchors` matter to `'scaled'` only. */
export function fuse(legs: readonly LegResult[], options: FuseOptions & { fusion: FusionMethod }, anchors: LegAnchors = NO_ANCHORS): FusedCandidate[] {
  switch (options.fusion) {
    case 'rrf':
      return fuseRrf(legs, options);
    case 'blend':
      return fuseBlend(legs, options);
    case 'scaled':
      return fuseScaled(legs, options, anchors);
    default:
      return fuseConvex(legs, options);
  }
}

export function topRankBonus(rank: number): number {
  return rank === 1 ? 0.05 : rank <= 3 ? 0.02 : 0;
}

/** RRF. Fused candidates, best first; ties keep first-appearance order (legs in the order given). */
export function fuseRrf(legs: readonly LegResult[], options: FuseOptions): FusedCandidate[] {
  const fused = accumulate(legs, options.topRankBonus, ({ weight }) => (_score, rank) => weight / (options.rrfK + rank));
  for (const candidate of fused) candidate.rrf = candidate.fused;
  return fused;
}

/**
 * The lexical leg's floor under `'convex'`, as a share of its weakest candidate's score. Measured on chat, notes and
 * documents together (docs/quality.md): 1 (plain min-max) and 0 (divide by the max) each lost on one of them.
 */
export const LEXICAL_FLOOR_SHARE = 0.5;

/** Convex combination of min-max normalised leg scores (see the top of this file). Same ordering rules. */
export function fuseConvex(legs: readonly LegResult[], options: Pick<FuseOptions, 'topRankBonus'>): FusedCandidate[] {
  return convex(legs, options, (leg, { min, max }) => {
    const floor = leg === 'lexical' ? Math.min(min, LEXICAL_FLOOR_SHARE * min) : min;
    const span = max - floor;
    return (score) => (span > 0 ? (score - floor) / span : 1);
  });
}

/** Convex combination on absolute scales (`'scaled'`, see the top of this file). Same ordering rules. */
export function fuseScaled(legs: readonly LegResult[], options: Pick<FuseOptions, 'topRankBonus'>, anchors: LegAnchors): FusedCandidate[] {
  return convex(legs, options, (leg, { max }) => {
    if (leg === 'vector') return (cosine) => clamp01(calibratedCosine(cosine, anchors.queryBaseline));
    // Dividing by the larger of the two keeps the scale ≤ 1 when a memory out-scores the bound (repeats, short text).
    const divisor = Math.max((anchors.lexicalBound ?? 0) * LEXICAL_BOUND_SHARE, max);
    return (score) => (divisor > 0 ? Math.max(0, score) / divisor : 0);
  });
}

/** CEMS score blending (`'blend'`, see the top of this file); `rrf` keeps the reciprocal-rank sum, as with `'rrf'`. */
export function fuseBlend(legs: readonly LegResult[], options: FuseOptions): FusedCandidate[] {
  const fused = fuseRrf(legs, options);
  const maxRrf = fused.reduce((max, candidate) => Math.max(max, candidate.fused), 0);
  for (const candidate of fused) {
    const cosine = candidate.legScore.vector;
    candidate.fused = 0.5 * (maxRrf > 0 ? candidate.fused / maxRrf : 0) + 0.5 * (cosine === null ? 0 : clamp01(cosine));
  }
  return fused.sort((a, b) => b.fused - a.fused);
}

function clamp01(x: number): number {
  return Math.max(0, Math.min(1, x));
}

/** Σ_l ŵ_l · normalise_l(s_l(d)), ŵ_l = w_l / Σ w over the legs that returned something. */
function convex(
  legs: readonly LegResult[],
  options: Pick<FuseOptions, 'topRankBonus'>,
  normaliser: (leg: LegName, range: { min: number; max: number }) => (score: number) => number,
): FusedCandidate[] {
  const totalWeight = legs.reduce((sum, { weight, items }) => sum + (items.length > 0 ? weight : 0), 0);
  return accumulate(legs, options.topRankBonus, ({ leg, weight, items }) => {
    let max = -Infinity;
    let min = Infinity;
    for (const { score } of items) {
      if (score > max) max = score;
      if (score < min) min = score;
    }
    const share = totalWeight > 0 ? weight / totalWeight : 0;
    const normalise = normaliser(leg, { min, max });
    return (score) => share * normalise(score);
  });
}

/** Sums each leg's contribution per memory (plus the optional top-rank bonus), best first. */
function accumulate(
  legs: readonly LegResult[],
  bonus: boolean,
  contribution: (leg: LegResult) => (score: number, rank: number) => number,
): FusedCandidate[] {
  const byId = new Map<string, FusedCandidate>();
  for (const legResult of legs) {
    const { leg, weight, items } = legResult;
    if (items.length === 0) continue;
    const contributionOf = contribution(legResult);
    items.forEach(({ id, score }, position) => {
      const rank = position + 1;
      let candidate = byId.get(id);
      if (!candidate) {
        candidate = { id, fused: 0, rank: { lexical: null, vector: null }, legScore: { lexical: null, vector: null } };
        byId.set(id, candidate);
      }
      if (candidate.rank[leg] !== null) return; // a leg lists each id once; ignore repeats
      candidate.rank[leg] = rank;
      candidate.legScore[leg] = score;
      candidate.fused += contributionOf(score, rank);
      if (bonus && weight > 0) candidate.fused += topRankBonus(rank);
    });
  }
  // Array.prototype.sort is stable, so equal scores keep insertion (first-appearance) order.
  return [...byId.values()].sort((a, b) => b.fused - a.fused);
}

/** One query's fused candidates, best first, and its weight in the list fusion. */
export interface QueryList {
  weight: number;
  candidates: readonly FusedCandidate[];
}

type ListFusion = 'scores' | 'rrf';

/**
 * Fuses the lists of several queries (the caller's, synthesized ones, HyDE) into one, best first; ties keep
 * first-appearance order. A candidate keeps the leg ranks and scores of the first list that holds it (the caller's
 * query comes first), and `lists.ranks` its rank in each list.
 * - `'scores'`: fused(d) = Σ_q w_q · f_q(d) / Σ_q w_q, the weighted mean of each query's fused score (0 where a
 *   list lacks d), on the same 0–1 scale as one query's.
 * - `'rrf'` (CEMS): rrf(d) = Σ_q w_q / (rrfK + rank_q(d)), ranks 1-based, kept in `lists.rrf`; `fused` is rrf(d)
 *   over its largest possible value Σ_q w_q / (rrfK + 1). Ranks flatten the scores (first ≈ 0.033, tenth ≈ 0.029
 *   at k = 60), which the later stages (neighbour support, MMR) then read: docs/quality.md measures the cost.
 */
export function fuseLists(lists: readonly QueryList[], method: ListFusion, rrfK: number): FusedCandidate[] {
  const weights = lists.reduce((sum, { weight }) => sum + weight, 0);
  const best = lists.reduce((sum, { weight }) => sum + weight / (rrfK + 1), 0);
  const byId = new Map<string, FusedCandidate & { lists: { ranks: (number | null)[]; rrf?: number } }>();
  lists.forEach(({ weight, candidates }, listIndex) => {
    candidates.forEach((candidate, position) => {
      let fused = byId.get(candidate.id);
      if (!fused) {
        fused = { ...candidate, fused: 0, lists: { ranks: lists.map(() => null) } };
        if (method === 'rrf') fused.lists.rrf = 0;
        delete fused.rrf;
        byId.set(candidate.id, fused);
      }
      if (fused.lists.ranks[listIndex] !== null) return;
      fused.lists.ranks[listIndex] = position + 1;
      if (method === 'rrf') fused.lists.rrf = (fused.lists.rrf ?? 0) + weight / (rrfK + position + 1);
      else fused.fused += weights > 0 ? (weight * candidate.fused) / weights : 0;
    });
  });
  if (method === 'rrf') for (const candidate of byId.values()) candidate.fused = best > 0 ? (candidate.lists.rrf ?? 0) / best : 0;
  return [...byId.values()].sort((a, b) => b.fused - a.fused);
}
