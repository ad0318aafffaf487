/**
 * Node section: the pure pipeline (createEngine, in-memory store) next to its peers on the same corpus and
 * queries, for every size and vector kind; plus the built-in model's query embedding and end-to-end ingest.
 * Run as its own process (`--expose-gc`) by bench/perf/run.ts; writes bench/results/node.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from './args.js';
import { BENCH_NOW, prefix, World, type BenchQuery, type Corpus } from './data.js';
import { INGEST_BATCH, memoryInputs, PrecomputedEmbedder } from './engram.js';
import { timeQueries, type LoopOptions, type SectionResult } from './measure.js';
import { loadBuiltInModel, modelVectors } from './model.js';
import { benchQueries, benchWords, corpusStem, loadCorpus } from './node-data.js';
import { resultsDir } from './paths.js';
import { ADD_PROBE, benchSize, guarded } from './suite.js';
import { createEngine, type Embedder } from '../../src/index.js';

const gc = (globalThis as { gc?: () => void }).gc;

function log(message: string): void {
  console.log(`[bench node ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

async function heapBytes(): Promise<number | null> {
  if (!gc) return null;
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const out: SectionResult = {
    latency: [],
    figures: [],
    stages: [],
    notes: [],
    env: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown' },
  };
  const loop: LoopOptions = { rounds: args.rounds, budgetMs: args.budgetMs };
  const world = new World(benchWords());
  const queries = benchQueries(world);
  const largest = Math.max(...args.sizes) + ADD_PROBE;
  log(`corpus of ${largest} memories`);
  const full = loadCorpus(world, largest);

  const model = args.dims.includes(100) ? await loadBuiltInModel() : null;
  if (model && 'reason' in model) out.notes.push(`Node 100-d (built-in model) runs skipped: ${model.reason}.`);

  for (const dim of args.dims) {
    if (dim !== 384 && dim !== 100) throw new Error(`bench: --dims takes 384 (synthetic) and/or 100 (built-in model), got ${dim}`);
    let corpus: Corpus = full;
    let dimQueries: BenchQuery[] = queries;
    let live: Embedder | null = null;
    if (dim === 100) {
      if (!model || 'reason' in model) continue;
      live = model.embedder;
      log('built-in model vectors for the corpus');
      const { vectors, textsPerSecond } = await modelVectors(model, full, corpusStem(largest, world.seed));
      const figure = (metric: string, value: number, unit: string) => out.figures.push({ section: 'node', dim, n: 0, system: 'built-in model', metric, value, unit });
      if (textsPerSecond !== null) figure('embed texts/s (batch 64)', textsPerSecond, '/s');
      figure('load ms', model.loadMs, 'ms');
      corpus = { ...full, dim, vectors };
      const queryVectors = await live.embed(queries.map((q) => q.text));
      dimQueries = queries.map((q, i) => ({ ...q, vector: queryVectors[i]! }));
      const { latency } = await timeQueries(dimQueries.filter((q) => q.set !== 'worst-case'), (q) => live!.embed([q.text]), loop);
      out.latency.push({ section: 'node', dim, n: 0, system: 'built-in model', op: 'query embedding', ...latency });
    }
    for (const n of args.sizes) {
      const sized = prefix(corpus, n);
      const embedder = new PrecomputedEmbedder(`bench-${dim}d`, dim, live).addCorpus(prefix(corpus, n + ADD_PROBE)).addQueries(dimQueries);
      await benchSize(out, {
        section: 'node',
        corpus,
        n,
        queries: dimQueries,
        loop,
        heapBytes,
        log,
        engram: [{ system: 'Engram', open: () => createEngine({ embedder, clock: () => BENCH_NOW }), ...(live ? { switchable: embedder } : {}) }],
      });
      if (live && n <= args.modelIngestMax) {
        const model = live;
        await guarded(out, `ingest with the built-in model at N = ${n}`, log, async () => {
          log(`${dim}-d, ${n}: Engram ingest with the built-in model`);
          const engine = await createEngine({ embedder: model, clock: () => BENCH_NOW });
          const start = performance.now();
          for (let s = 0; s < n; s += INGEST_BATCH) await engine.add(memoryInputs(sized, s, Math.min(n, s + INGEST_BATCH)));
          out.figures.push({ section: 'node', dim, n, system: 'Engram', metric: 'ingest memories/s (built-in model)', value: n / ((performance.now() - start) / 1000), unit: '/s' });
          await engine.close();
        });
      }
    }
  }

  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'node.json'), JSON.stringify(out, null, 1));
  log('wrote bench/results/node.json');
}

await main();
