/** Binary-relevance retrieval metrics over ranked ids. */

export function recallAt(ranked: readonly string[], relevant: readonly string[], k: number): number {
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  let found = 0;
  for (const id of relevant) if (top.has(id)) found++;
  return found / relevant.length;
}

export function ndcgAt(ranked: readonly string[], relevant: readonly string[], k: number): number {
  if (relevant.length === 0) return 0;
  const wanted = new Set(relevant);
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    if (wanted.has(id)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(k, relevant.length); i++) ideal += 1 / Math.log2(i + 2);
  return dcg / ideal;
}

/** LoCoMo's turn ids are `D<session>:<turn>` (after any prefix): the session is everything before the last colon. */
export function sessionOf(id: string): string {
  return id.slice(0, id.lastIndexOf(':'));
}

/** Share of the sessions holding evidence that the top k reach with at least one turn (any turn of the session). */
export function sessionRecallAt(ranked: readonly string[], relevant: readonly string[], k: number): number {
  const wanted = new Set(relevant.map(sessionOf));
  if (wanted.size === 0) return 0;
  const reached = new Set(ranked.slice(0, k).map(sessionOf));
  let found = 0;
  for (const session of wanted) if (reached.has(session)) found++;
  return found / wanted.size;
}

export interface MetricRow {
  n: number;
  r5: number;
  r10: number;
  r20: number;
  ndcg10: number;
  /** Session-level recall@10 (`sessionRecallAt`). */
  s10: number;
}

/** Running mean of the metrics. */
export class MetricAccumulator {
  private sums = { r5: 0, r10: 0, r20: 0, ndcg10: 0, s10: 0 };
  private n = 0;

  /** One ranked list for every cutoff. */
  add(ranked: readonly string[], relevant: readonly string[]): void {
    this.addAtCutoffs({ 5: ranked, 10: ranked, 20: ranked }, relevant);
  }

  /**
   * The list asked for at each cutoff (`k` = 5, 10, 20): an engine's k hits are not the first k of a longer list
   * (MMR and `assembly: 'cover'` choose among the k places), so each metric reads what a caller asking for k gets.
   */
  addAtCutoffs(ranked: Readonly<Record<5 | 10 | 20, readonly string[]>>, relevant: readonly string[]): void {
    this.n++;
    this.sums.r5 += recallAt(ranked[5], relevant, 5);
    this.sums.r10 += recallAt(ranked[10], relevant, 10);
    this.sums.r20 += recallAt(ranked[20], relevant, 20);
    this.sums.ndcg10 += ndcgAt(ranked[10], relevant, 10);
    this.sums.s10 += sessionRecallAt(ranked[10], relevant, 10);
  }

  row(): MetricRow {
    const d = Math.max(1, this.n);
    return { n: this.n, r5: this.sums.r5 / d, r10: this.sums.r10 / d, r20: this.sums.r20 / d, ndcg10: this.sums.ndcg10 / d, s10: this.sums.s10 / d };
  }
}
