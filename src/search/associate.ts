/**
 * The `associate` stage (the cognitive-memory seed): after `adjust`, each of the best `k` candidates brings in the
 * memories associated with it (engine/associations.ts), weight after decay ≥ `floor`. The seed scores an
 * associated memory `sim · R^α · w`, its direct hits `sim · R^α`. Engram's direct hits carry a fused score instead
 * (mostly BM25), on another scale, so an associated memory's fused score is
 *   fused(the hit it came through) × calibrated cosine(query, memory) × w,
 * the cosine calibrated to the query's mean cosine to the store ((cos − b) / (1 − b), vector/similarity.ts, negatives as 0), then recency,
 * boosts and penalties as for any candidate: it never outranks the hit it came through on relevance alone. The
 * seed's own scale lost 0.21 recall@10 on the replay (docs/learning.md). With `bridges`, each of those brings in its
 * own associations in turn (a second hop, weight w₁ · w₂), kept when their raw cosine reaches `bridgeMinCosine`:
 * the memories that join otherwise separate clusters. A memory the legs also found below the top k takes the better
 * of its two scores; the top k themselves keep theirs.
 */
import { adjust, type ScoredCandidate } from './adjust.js';
import { penaltyFactor, type Eligibility } from './filter.js';
import type { FusedCandidate } from './fuse.js';
import { DEFAULT_ASSOCIATIONS, type AssociationOptions, type SearchOptions } from './options.js';
import type { AssociationReader } from './state.js';
import type { RecordSummary } from '../store/store.js';
import type { MemoryRecord } from '../types.js';
import { calibratedCosine, dot } from '../vector/similarity.js';

interface AssociateContext {
  graph: AssociationReader;
  /** The caller's query, embedded and normalised. */
  query: Float32Array;
  summary(id: string): RecordSummary | undefined;
  /** Reads the records of `ids` (the engine's table: a promise only when some are not in memory). */
  readRecords(ids: string[]): Promise<void> | undefined;
  record(id: string): MemoryRecord | undefined;
  /** Exact stored vectors of `ids`. */
  vectors(ids: string[]): Promise<Map<string, Float32Array>>;
  eligible: Eligibility | null;
  now: number;
  /** Whether a memory is in a thread or a sitting (ThreadIndex.inSequence), for `decayScope`. */
  inSequence(id: string): boolean;
  /** The query's mean cosine to the stored memories (VectorIndex.meanCosineTo). */
  baseline: number;
}

interface Reached {
  via: string;
  bridge?: string;
  weight: number;
}

interface Associated {
  /** The candidates with the associative ones merged in, best first. */
  scored: ScoredCandidate[];
  added: number;
  bridges: number;
}

export async function associate(adjusted: ScoredCandidate[], options: SearchOptions & { associations: AssociationOptions }, ctx: AssociateContext): Promise<Associated> {
  const { floor, bridges: secondHop, bridgeMinCosine } = { ...DEFAULT_ASSOCIATIONS, ...options.associations };
  const limit = options.associations.limit ?? options.k;
  const top = adjusted.slice(0, options.k);
  const direct = new Set(top.map((s) => s.candidate.id));
  const allowed = (id: string) => {
    if (direct.has(id)) return false;
    const summary = ctx.summary(id);
    return summary !== undefined && (ctx.eligible === null || ctx.eligible(summary));
  };
  // Keep each memory's strongest path: its cosine is the same whichever way it was reached.
  const reached = new Map<string, Reached>();
  const offer = (id: string, path: Reached) => {
    const best = reached.get(id);
    if (!best || path.weight > best.weight) reached.set(id, path);
  };
  for (const { candidate } of top) {
    for (const { id, weight } of ctx.graph.around(candidate.id, ctx.now, floor)) if (allowed(id)) offer(id, { via: candidate.id, weight });
  }
  const firstHop = [...reached.entries()];
  if (secondHop) {
    for (const [middle, path] of firstHop) {
      for (const { id, weight } of ctx.graph.around(middle, ctx.now, floor)) {
        const onFirstHop = reached.get(id);
        if (allowed(id) && (!onFirstHop || onFirstHop.bridge !== undefined)) offer(id, { via: path.via, bridge: middle, weight: path.weight * weight });
      }
    }
  }
  if (reached.size === 0) return { scored: adjusted, added: 0, bridges: 0 };

  const candidateOf = new Map(adjusted.map((s) => [s.candidate.id, s]));
  const ids = [...reached.keys()];
  const reading = ctx.readRecords(ids);
  if (reading) await reading;
  const vectors = await ctx.vectors(ids);
  const eligible = ids.flatMap((id) => {
    const record = ctx.record(id);
    const vector = vectors.get(id);
    const path = reached.get(id)!;
    if (!record || !vector) return [];
    const cosine = dot(ctx.query, vector);
    if (path.bridge !== undefined && cosine < bridgeMinCosine) return [];
    // A candidate below the top k keeps what its legs said of it.
    const asCandidate = candidateOf.get(id)?.candidate;
    const viaFused = candidateOf.get(path.via)?.candidate.fused ?? 0;
    const similarity = Math.max(0, calibratedCosine(cosine, ctx.baseline));
    const candidate: FusedCandidate = {
      id,
      fused: viaFused * similarity * path.weight,
      rank: asCandidate ? { ...asCandidate.rank } : { lexical: null, vector: null },
      legScore: { lexical: asCandidate?.legScore.lexical ?? null, vector: cosine },
      associative: { ...path, viaFused, similarity },
    };
    return [{ candidate, record, penalty: penaltyFactor(record, options.deepRecallPenalty, ctx.now) }];
  });
  // A memory that is already a candidate (below the top k) takes the better of its two scores.
  // An associated memory's relevance is the association's: its quality would lift one with almost none.
  const added = adjust(eligible, { ...options, qualityWeight: 0 }, ctx.now, ctx.inSequence)
    .filter((s) => s.score > (candidateOf.get(s.candidate.id)?.score ?? -Infinity))
    .slice(0, limit);
  if (added.length === 0) return { scored: adjusted, added: 0, bridges: 0 };
  const replaced = new Set(added.map((s) => s.candidate.id));
  const scored = [...adjusted.filter((s) => !replaced.has(s.candidate.id)), ...added].sort((a, b) => b.score - a.score);
  return { scored, added: added.length, bridges: added.filter((s) => s.candidate.associative?.bridge !== undefined).length };
}
