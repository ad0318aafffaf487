/**
 * One size of one corpus, every system, the same way in Node and in the page: the naive reference (exact
 * answers), Engram variants (ingest, each measured search, stage breakdown, recall@10), MiniSearch, Orama.
 */
import { prefix, QUERY_SETS, querySet, type BenchQuery, type Corpus, type QuerySetName } from './data.js';
import { ENGRAM_OPS, INGEST_BATCH, memoryInputs, RECALL_OPTIONS, StageTimes, type EngramOp, type PrecomputedEmbedder } from './engram.js';
import { meanRecall, timeQueries, type FigureRow, type Latency, type LoopOptions, type SectionResult } from './measure.js';
import { buildMiniSearch, buildOrama, K, NaiveVectors, oramaThresholds, type System } from './peers.js';
import type { Engine } from '../../src/index.js';

/** What Engram offers the bench: the engine in process, or the worker client (same methods). */
export type EngineLike = Pick<Engine, 'add' | 'import' | 'remove' | 'search' | 'close'>;

/**
 * Memories added one batch at a time on top of N, to measure `add` at that size. Every add compares each new
 * memory with all stored ones (supersede), so adding N memories costs O(N²): the store itself is filled with
 * `import` (same storage and indexing, no supersede pass) and `add` is timed at the size reached.
 */
export const ADD_PROBE = 200;

export interface EngramVariant {
  system: string;
  /** A fresh, empty instance fed by `embedder` (or, for the worker, by an embedder built from the same data). */
  open(): Promise<EngineLike>;
  /** Extra figures once the corpus is in (cold open, disk, heap of a worker...). Runs before `close`. */
  after?(engine: EngineLike, figure: (metric: string, value: number, unit: string) => void): Promise<void>;
  /** True when the variant reports its own heap (a worker): the page's heap growth says nothing about it. */
  ownHeap?: boolean;
  /** The precomputed embedder, when its `useLive` switch can route queries to the real model. */
  switchable?: PrecomputedEmbedder;
}

export interface SizeContext {
  section: 'node' | 'browser';
  /** The first N memories are the store; the next ADD_PROBE are the add probe. */
  corpus: Corpus;
  n: number;
  /** Every query set, flat (each query names its set): every system is timed on each set in turn. */
  queries: BenchQuery[];
  loop: LoopOptions;
  engram: EngramVariant[];
  /** Bytes in use by this realm (after a GC when possible); `null` when it cannot be measured. */
  heapBytes(): Promise<number | null>;
  log(message: string): void;
}

export async function benchSize(out: SectionResult, ctx: SizeContext): Promise<void> {
  const { loop, section, n } = ctx;
  const corpus = prefix(ctx.corpus, n);
  const { dim } = corpus;
  const sets = QUERY_SETS.map((set) => ({ set, queries: querySet(ctx.queries, set) })).filter((s) => s.queries.length > 0);
  const figure = (system: string) => (metric: string, value: number, unit: string): void => {
    out.figures.push({ section, dim, n, system, metric, value, unit } satisfies FigureRow);
  };
  const latency = (system: string, op: string, set: QuerySetName, l: Latency): void => {
    out.latency.push({ section, dim, n, system, op, set, ...l });
  };
  const heapDelta = async (base: number | null, system: string): Promise<void> => {
    const now = await ctx.heapBytes();
    if (base !== null && now !== null) figure(system)('heap MB', (now - base) / 2 ** 20, 'MB');
  };

  ctx.log(`${dim}-d, ${n}: naive reference`);
  const naive = new NaiveVectors(corpus);
  const exact = new Map<BenchQuery, string[]>();
  for (const { set, queries } of sets) {
    const timed = await timeQueries(queries, (q) => naive.search(q), loop);
    latency(naive.name, 'vector top-10', set, timed.latency);
    for (const [q, ids] of timed.answers) exact.set(q, ids);
  }
  const thresholds = oramaThresholds(naive, ctx.queries);

  for (const variant of ctx.engram) {
    await guarded(out, `${variant.system} at ${dim}-d, N = ${n}`, ctx.log, () => benchVariant(variant));
  }

  async function benchVariant(variant: EngramVariant): Promise<void> {
    ctx.log(`${dim}-d, ${n}: ${variant.system} import`);
    const base = await ctx.heapBytes();
    const engine = await variant.open();
    const start = performance.now();
    for (let s = 0; s < n; s += INGEST_BATCH) await engine.import(memoryInputs(corpus, s, Math.min(n, s + INGEST_BATCH)));
    figure(variant.system)('import memories/s', n / ((performance.now() - start) / 1000), '/s');
    if (!variant.ownHeap) await heapDelta(base, variant.system);

    for (const { set, queries } of sets) {
      const stages = new StageTimes();
      for (const op of Object.keys(ENGRAM_OPS) as EngramOp[]) {
        ctx.log(`${dim}-d, ${n}: ${variant.system} ${op} (${set} set)`);
        const timed = await timeQueries(queries, async (q) => {
          const result = await engine.search(q.text, ENGRAM_OPS[op]);
          if (op === 'hybrid') stages.record(result);
          return result;
        }, loop);
        latency(variant.system, op, set, timed.latency);
      }
      out.stages.push(...stages.rows().map((row) => ({ section, dim, n, system: variant.system, set, ...row })));
      const approx = new Map<BenchQuery, string[]>();
      for (const q of queries) approx.set(q, (await engine.search(q.text, RECALL_OPTIONS)).hits.map((h) => h.id));
      figure(variant.system)(recallMetric(set), meanRecall(approx, new Map(queries.map((q) => [q, exact.get(q)!])), K), '');
    }
    ctx.log(`${dim}-d, ${n}: ${variant.system} add`);
    const probe = memoryInputs(ctx.corpus, n, n + ADD_PROBE);
    const addStart = performance.now();
    for (let s = 0; s < probe.length; s += 50) await engine.add(probe.slice(s, s + 50));
    figure(variant.system)(`add memories/s at N (batches of 50)`, probe.length / ((performance.now() - addStart) / 1000), '/s');
    await engine.remove(probe.map((m) => m.id!));
    if (variant.switchable) {
      variant.switchable.useLive = true;
      for (const { set, queries } of sets) {
        const timed = await timeQueries(queries, (q) => engine.search(q.text, ENGRAM_OPS.hybrid), loop);
        latency(variant.system, 'hybrid + query embedding', set, timed.latency);
      }
      variant.switchable.useLive = false;
    }
    await variant.after?.(engine, figure(variant.system));
    await engine.close();
  }

  const peers: [string, string, () => System | Promise<System>][] = [
    ['MiniSearch', 'lexical', () => buildMiniSearch(corpus)],
    ['Orama hybrid', 'hybrid', () => buildOrama(corpus, thresholds)],
  ];
  for (const [name, op, build] of peers) {
    await guarded(out, `${name} at ${dim}-d, N = ${n}`, ctx.log, async () => {
      ctx.log(`${dim}-d, ${n}: ${name}`);
      const base = await ctx.heapBytes();
      const start = performance.now();
      const system = await build();
      figure(name)('build memories/s', n / ((performance.now() - start) / 1000), '/s');
      await heapDelta(base, name);
      for (const { set, queries } of sets) {
        ctx.log(`${dim}-d, ${n}: ${name} (${set} set)`);
        latency(name, op, set, (await timeQueries(queries, (q) => system.search(q), loop)).latency);
      }
    });
  }
}

/** Recall on the fixed set keeps its old name, so older results still line up. */
export function recallMetric(set: QuerySetName): string {
  return set === 'standard' ? 'vector recall@10' : `vector recall@10 (${set} set)`;
}

/** A failure of one system is recorded in the results and the run goes on with the others. */
export async function guarded(out: SectionResult, what: string, log: (message: string) => void, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    const message = `${what} failed: ${error instanceof Error ? error.message : String(error)}`;
    log(message);
    out.notes.push(message);
  }
}
