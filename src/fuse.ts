/**
 * Reciprocal Rank Fusion: rrf(d) = Σ_l w_l / (rrfK + rank_l(d)), summed over the legs that returned d,
 * ranks 1-based. With `topRankBonus` (CEMS), each leg with a positive weight adds +0.05 for its rank 1 and
 * +0.02 for ranks 2–3.
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
  rrf: number;
  rank: Record<LegName, number | null>;
  legScore: Record<LegName, number | null>;
}

export interface FuseOptions {
  rrfK: number;
  topRankBonus: boolean;
}

export function topRankBonus(rank: number): number {
  return rank === 1 ? 0.05 : rank <= 3 ? 0.02 : 0;
}

/** Fused candidates, best first; ties keep first-appearance order (legs in the order given). */
export function fuseRrf(legs: readonly LegResult[], options: FuseOptions): FusedCandidate[] {
  const byId = new Map<string, FusedCandidate>();
  for (const { leg, weight, items } of legs) {
    items.forEach(({ id, score }, position) => {
      const rank = position + 1;
      let candidate = byId.get(id);
      if (!candidate) {
        candidate = { id, rrf: 0, rank: { lexical: null, vector: null }, legScore: { lexical: null, vector: null } };
        byId.set(id, candidate);
      }
      if (candidate.rank[leg] !== null) return; // a leg lists each id once; ignore repeats
      candidate.rank[leg] = rank;
      candidate.legScore[leg] = score;
      candidate.rrf += weight / (options.rrfK + rank);
      if (options.topRankBonus && weight > 0) candidate.rrf += topRankBonus(rank);
    });
  }
  // Array.prototype.sort is stable, so equal scores keep insertion (first-appearance) order.
  return [...byId.values()].sort((a, b) => b.rrf - a.rrf);
}
