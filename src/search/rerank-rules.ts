/**
 * A deterministic re-ranker (no language model) for the best `inputLimit` candidates after the `adjust` stage.
 *
 * Each candidate's adjusted score s is multiplied by a factor of at least 1 that rewards how much of the query
 * the memory's own words cover:
 *
 *   s' = s · (1 + w_c · coverage + w_p · proximity)
 *
 *   coverage  = Σ_{t ∈ Q ∩ D} idf(t) / Σ_{t ∈ Q} idf(t)   Q = the query's distinct indexed terms, D = the memory's
 *               terms, both processed like indexed text (stop words, stemming), idf as the lexical leg computes it
 *   proximity = share of the query's ordered term pairs (q_i, q_{i+1}), consecutive after processing, that occur
 *               in the memory in the same order at most `window` terms apart (0 when the query has < 2 terms)
 *
 * Why multiplicative: the factor never lowers a score, so the re-ranked head stays above the candidates after it
 * (s' ≥ s ≥ every later score), boosts (priority, pin, project, recency) keep acting as factors, and a candidate
 * the legs gave 0 stays 0. Ties keep the input order.
 */

export interface QueryTerms {
  /** The query's terms in order, repeats kept, processed like indexed text (`LexicalIndex.textTerms(query)`). */
  sequence: readonly string[];
  /** idf of each query term the index holds (`LexicalIndex.scoreBound(query).idf`); other terms count for nothing. */
  idf: ReadonlyMap<string, number>;
}

interface RuleWeights {
  /** w_c. */
  coverage: number;
  /** w_p. */
  proximity: number;
  /** Largest gap (in processed terms) between the two terms of a pair. Default 2. */
  window?: number;
}

/** The weights picked leave-one-conversation-out on LoCoMo dev (docs/quality.md). */
export const DEFAULT_RULE_WEIGHTS: Readonly<RuleWeights> = Object.freeze({ coverage: 0.25, proximity: 0, window: 2 });

interface RuleCandidate {
  id: string;
  /** The memory's processed terms, in order (`LexicalIndex.textTerms(text + ' ' + tags)`). */
  terms: readonly string[];
  /** The adjusted score (≥ 0). */
  score: number;
}

interface RuleScore {
  id: string;
  score: number;
  coverage: number;
  proximity: number;
}

/** idf-weighted share of the query's indexed terms that `terms` contains (0 when the query has none). */
export function coverage(query: QueryTerms, terms: ReadonlySet<string>): number {
  let total = 0;
  let found = 0;
  for (const [term, idf] of query.idf) {
    total += idf;
    if (terms.has(term)) found += idf;
  }
  return total > 0 ? found / total : 0;
}

/** Share of the query's consecutive term pairs found in `terms` in the same order, at most `window` apart. */
export function proximity(query: QueryTerms, terms: readonly string[], window: number): number {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < query.sequence.length; i++) {
    const first = query.sequence[i] as string;
    const second = query.sequence[i + 1] as string;
    if (first !== second) pairs.push([first, second]);
  }
  if (pairs.length === 0) return 0;
  const positions = new Map<string, number[]>();
  terms.forEach((term, at) => {
    let list = positions.get(term);
    if (!list) positions.set(term, (list = []));
    list.push(at);
  });
  let found = 0;
  for (const [first, second] of pairs) {
    const before = positions.get(first);
    const after = positions.get(second);
    if (before && after && before.some((p) => after.some((q) => q > p && q - p <= window))) found++;
  }
  return found / pairs.length;
}

/** Re-scored candidates, best first (see the top of this file). */
export function rerankByRules(query: QueryTerms, candidates: readonly RuleCandidate[], weights: RuleWeights = DEFAULT_RULE_WEIGHTS): RuleScore[] {
  const window = weights.window ?? 2;
  const scored = candidates.map(({ id, terms, score }) => {
    const c = coverage(query, new Set(terms));
    const p = weights.proximity > 0 ? proximity(query, terms, window) : 0;
    return { id, score: score * (1 + weights.coverage * c + weights.proximity * p), coverage: c, proximity: p };
  });
  // Array.prototype.sort is stable: ties keep the input order.
  return scored.sort((a, b) => b.score - a.score);
}
