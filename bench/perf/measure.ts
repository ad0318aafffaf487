/** Timing loops and the shapes of results; shared by the Node and browser sections. */
import { recallAt } from '../lib/metrics.js';
import { WORST_CASE_KINDS, type BenchQuery, type QuerySetName } from './data.js';

export interface Latency {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
  samples: number;
  /** p50 over the worst-case queries only (many very common terms, the pasted paragraph). */
  worstCaseP50: number;
  /** The slowest query by median, and its median. */
  slowest: { query: string; p50: number };
}

/** One latency distribution: which section, data, system and operation it belongs to. */
export interface LatencyRow extends Latency {
  section: 'node' | 'browser';
  dim: number;
  n: number;
  system: string;
  op: string;
  /** The query set timed; absent (results of older runs) = 'standard'. */
  set?: QuerySetName;
}

/** One scalar figure (build time, ingest rate, recall, heap, disk, cold open...). */
export interface FigureRow {
  section: 'node' | 'browser';
  dim: number;
  n: number;
  system: string;
  metric: string;
  value: number;
  unit: string;
}

export interface StageRow {
  section: 'node' | 'browser';
  dim: number;
  n: number;
  system: string;
  stage: string;
  p50: number;
  p99: number;
  /** Absent in results of older runs. */
  mean?: number;
  set?: QuerySetName;
}

/** One row's query set, older rows included. */
export const setOf = (row: { set?: QuerySetName }): QuerySetName => row.set ?? 'standard';

export interface SectionResult {
  latency: LatencyRow[];
  figures: FigureRow[];
  stages: StageRow[];
  notes: string[];
  env: Record<string, unknown>;
}

export interface LoopOptions {
  /** Passes over the whole query set, after one warm-up pass. */
  rounds: number;
  /** Stop adding rounds once this much time went by (at least one measured round always runs). */
  budgetMs: number;
}

export const defaultLoop: LoopOptions = { rounds: 10, budgetMs: 20_000 };

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarise(perQuery: ReadonlyMap<BenchQuery, number[]>): Latency {
  const all: number[] = [];
  const worst: number[] = [];
  let slowest = { query: '', p50: -Infinity };
  for (const [query, times] of perQuery) {
    all.push(...times);
    if (WORST_CASE_KINDS.includes(query.kind)) worst.push(...times);
    const median = percentile([...times].sort((a, b) => a - b), 50);
    if (median > slowest.p50) slowest = { query: query.name, p50: median };
  }
  all.sort((a, b) => a - b);
  worst.sort((a, b) => a - b);
  return {
    p50: percentile(all, 50),
    p95: percentile(all, 95),
    p99: percentile(all, 99),
    mean: all.reduce((s, t) => s + t, 0) / Math.max(1, all.length),
    max: all.at(-1) ?? NaN,
    samples: all.length,
    worstCaseP50: percentile(worst, 50),
    slowest,
  };
}

/**
 * Runs every query once to warm up (returning those answers), then whole rounds over the query set, timing
 * each call on its own. Interleaving queries inside a round spreads GC pauses fairly over all of them. When the
 * warm-up pass alone takes longer than the budget, its own timings are the result (one pass).
 */
export async function timeQueries<T>(
  queries: readonly BenchQuery[],
  run: (query: BenchQuery) => T | Promise<T>,
  loop: LoopOptions = defaultLoop,
): Promise<{ latency: Latency; answers: Map<BenchQuery, T> }> {
  const answers = new Map<BenchQuery, T>();
  const warmUp = new Map<BenchQuery, number[]>();
  const warmStart = performance.now();
  for (const query of queries) {
    const t0 = performance.now();
    answers.set(query, await run(query));
    warmUp.set(query, [performance.now() - t0]);
  }
  // A system whose warm-up pass alone outlasts the budget (a peer taking seconds per query) is measured on that pass:
  // JIT warm-up is noise at that scale, and a second pass would double the slowest part of the bench.
  if (performance.now() - warmStart > loop.budgetMs) return { latency: summarise(warmUp), answers };
  const perQuery = new Map<BenchQuery, number[]>(queries.map((q) => [q, []]));
  const start = performance.now();
  for (let round = 0; round < loop.rounds; round++) {
    if (round > 0 && performance.now() - start > loop.budgetMs) break;
    for (const query of queries) {
      const t0 = performance.now();
      await run(query);
      perQuery.get(query)!.push(performance.now() - t0);
    }
  }
  return { latency: summarise(perQuery), answers };
}

/** Mean recall@k of approximate answers against the exact top k (ids). */
export function meanRecall(approx: ReadonlyMap<BenchQuery, readonly string[]>, exact: ReadonlyMap<BenchQuery, readonly string[]>, k: number): number {
  const recalls = [...exact].map(([query, truth]) => recallAt(approx.get(query) ?? [], truth.slice(0, k), k));
  return recalls.reduce((s, r) => s + r, 0) / Math.max(1, recalls.length);
}
