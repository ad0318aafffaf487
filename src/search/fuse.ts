/**
 * Fusion of the legs' candidate lists into one score per memory (`FusedCandidate.fused`, whichever the method).
 *
 * - `'convex'` (default): a convex combination of min-max normalised leg scores,
 *     fused(d) = Σ_l ŵ_l · (s_l(d) − min_l) / (max_l − min_l),  ŵ_l = w_l / Σ w,
 *   a leg that did not return d adds 0 (a one-item leg normalises to 1). Score-aware: it keeps how far
 *   ahead a leg's best hit is, which rank fusion throws away (Bruch et al. 2022, "An Analysis of Fusion
 *   Functions for Hybrid Retrieval"). On LoCoMo dev it beat RRF at every k (docs/quality.md).
 * - `'rrf'`: Reciprocal Rank Fusion, rrf(d) = Σ_l w_l / (rrfK + rank_l(d)), summed over the legs that
 *   returned d, ranks 1-based.
 * With `topRankBonus` (CEMS), each leg with a positive weight adds +0.05 for its rank 1 and +0.02 for
 * ranks 2–3, under either method.
 */
export type LegName = 'lexical' | 'vector';

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
}

export interface FuseOptions {
  rrfK: number;
  topRankBonus: boolean;
}

export type FusionMethod = 'convex' | 'rrf';

/** Fuses with the chosen method. */
export function fuse(legs: readonly LegResult[], options: FuseOptions & { fusion: FusionMethod }): FusedCandidate[] {
  return options.fusion === 'rrf' ? fuseRrf(legs, options) : fuseConvex(legs, options);
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

/** Convex combination of min-max normalised leg scores (see the top of this file). Same ordering rules. */
export function fuseConvex(legs: readonly LegResult[], options: Pick<FuseOptions, 'topRankBonus'>): FusedCandidate[] {
  const totalWeight = legs.reduce((sum, { weight, items }) => sum + (items.length > 0 ? weight : 0), 0);
  return accumulate(legs, options.topRankBonus, ({ weight, items }) => {
    let max = -Infinity;
    let min = Infinity;
    for (const { score } of items) {
      if (score > max) max = score;
      if (score < min) min = score;
    }
    const span = max - min;
    const share = totalWeight > 0 ? weight / totalWeight : 0;
    return (score) => share * (span > 0 ? (score - min) / span : 1);
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
