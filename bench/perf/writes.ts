/**
 * Writes section (issue 45): what a chat app's turn costs, and `add` at size, with MiniSearch and Orama in the
 * same process on the same data. At each size N: the store is filled (Engram: `import`; the peers: their bulk
 * insert), then
 * - steady: the fixed query set searched with nothing written in between, once Engram's vector lists are built
 *   (hybrid; MiniSearch lexical); the searches while they build, right after the import, are reported apart;
 * - turns: one memory added, then one query of the same set searched, again and again (the search after the add is
 *   timed apart from the add, and with Engram its trace's stages are kept);
 * - `add` at N: memories added in batches of 50 (Engram and Orama; MiniSearch one by one, it has no batch).
 * After the turns, Engram is asked for some of the memories it was just given, by their own text: each must come
 * back first (the answers are checked, not only timed). Run as its own process by bench/perf/run.ts; writes
 * bench/results/writes.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { insert, insertMultiple, search as oramaSearch } from '@orama/orama';
import MiniSearch from 'minisearch';
import { parseArgs } from './args.js';
import { BENCH_NOW, prefix, querySet, World, type BenchQuery, type Corpus } from './data.js';
import { ENGRAM_OPS, INGEST_BATCH, memoryInputs, PrecomputedEmbedder, StageTimes } from './engram.js';
import { summarise, timeQueries, type Latency, type LoopOptions, type SectionResult } from './measure.js';
import { benchQueries, benchWords, loadCorpus } from './node-data.js';
import { isEntry, resultsDir } from './paths.js';
import { buildOrama, K, NaiveVectors, oramaThresholds } from './peers.js';
import { guarded } from './suite.js';
import { IvfScan } from '../../src/advanced.js';
import { createEngine, type Engine } from '../../src/index.js';

/** Turns per system and size (fewer when the loop's budget runs out first; at least MIN_TURNS). */
export const TURNS = 200;
const MIN_TURNS = 3;
/** Memories added in batches of ADD_BATCH to measure `add` at N (fewer when the budget runs out). */
export const ADD_COUNT = 2_000;
const ADD_BATCH = 50;
/** Memories of the turns that are searched for by their own text afterwards. */
const CHECKED = 10;

export const WRITES_OPS = {
  steady: 'hybrid, steady',
  building: 'hybrid, right after the import (vector lists building)',
  afterAdd: 'hybrid, right after adding one',
  add: 'add one',
  turn: 'turn (add one, then search)',
} as const;

function log(message: string): void {
  console.log(`[bench writes ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/** A peer or Engram, as the turn loop drives it. */
interface Writable {
  system: string;
  /** The op its searches are reported under (MiniSearch's is lexical). */
  op: string;
  add(from: number, to: number): Promise<void>;
  search(query: BenchQuery): Promise<unknown>;
}

/** `systems`: which of 'Engram', 'MiniSearch', 'Orama hybrid' to run (all by default). */
export async function benchWrites(out: SectionResult, full: Corpus, queries: readonly BenchQuery[], n: number, loop: LoopOptions, systems: readonly string[] = ['Engram', 'MiniSearch', 'Orama hybrid']): Promise<void> {
  const corpus = prefix(full, n);
  const standard = querySet(queries, 'standard');
  const figure = (system: string, metric: string, value: number, unit: string) => out.figures.push({ section: 'node', dim: corpus.dim, n, system, metric, value, unit });
  const latency = (system: string, op: string, l: Latency) => out.latency.push({ section: 'node', dim: corpus.dim, n, system, op, set: 'standard', ...l });
  const stageRows = (system: string, stages: StageTimes) => out.stages.push(...stages.rows().map((row) => ({ section: 'node' as const, dim: corpus.dim, n, system, set: 'standard' as const, ...row })));

  /** Turns from memory `n` on, then `add` in batches after them; every timing into `out`. */
  async function measure(w: Writable, stages?: { steady: StageTimes; afterAdd: StageTimes; record(result: unknown, into: StageTimes): void }): Promise<number> {
    log(`${n}: ${w.system} steady`);
    const steady = await timeQueries(standard, async (q) => {
      const result = await w.search(q);
      if (stages) stages.record(result, stages.steady);
      return result;
    }, loop);
    latency(w.system, w.op === 'hybrid' ? WRITES_OPS.steady : `${w.op}, steady`, steady.latency);

    log(`${n}: ${w.system} turns`);
    const adds = new Map<BenchQuery, number[]>(standard.map((q) => [q, []]));
    const searches = new Map<BenchQuery, number[]>(standard.map((q) => [q, []]));
    const turns = new Map<BenchQuery, number[]>(standard.map((q) => [q, []]));
    const start = performance.now();
    let t = 0;
    for (; t < TURNS && (t < MIN_TURNS || performance.now() - start < loop.budgetMs); t++) {
      const q = standard[t % standard.length]!;
      const t0 = performance.now();
      await w.add(n + t, n + t + 1);
      const t1 = performance.now();
      const result = await w.search(q);
      const t2 = performance.now();
      if (stages) stages.record(result, stages.afterAdd);
      adds.get(q)!.push(t1 - t0);
      searches.get(q)!.push(t2 - t1);
      turns.get(q)!.push(t2 - t0);
    }
    const nonEmpty = (m: Map<BenchQuery, number[]>) => new Map([...m].filter(([, times]) => times.length > 0));
    latency(w.system, w.op === 'hybrid' ? WRITES_OPS.afterAdd : `${w.op}, right after adding one`, summarise(nonEmpty(searches)));
    latency(w.system, WRITES_OPS.add, summarise(nonEmpty(adds)));
    latency(w.system, WRITES_OPS.turn, summarise(nonEmpty(turns)));
    figure(w.system, 'turns measured', t, '');

    log(`${n}: ${w.system} add at N`);
    const from = n + TURNS;
    const addStart = performance.now();
    let added = 0;
    while (added < ADD_COUNT && (added === 0 || performance.now() - addStart < loop.budgetMs)) {
      await w.add(from + added, from + added + ADD_BATCH);
      added += ADD_BATCH;
    }
    figure(w.system, `add memories/s at N (batches of ${ADD_BATCH})`, added / ((performance.now() - addStart) / 1000), '/s');
    return t;
  }

  if (systems.includes('Engram')) await guarded(out, `Engram writes at N = ${n}`, log, async () => {
    log(`${n}: Engram import`);
    const embedder = new PrecomputedEmbedder(`bench-${corpus.dim}d`, corpus.dim).addCorpus(full).addQueries(queries);
    // The default scan (engine/options.ts), kept to learn when its lists are built.
    let scan: IvfScan | undefined;
    const engine: Engine = await createEngine({ embedder, clock: () => BENCH_NOW, vectorScan: () => (scan = new IvfScan({ kernelCompile: 'background' })) });
    for (let s = 0; s < n; s += INGEST_BATCH) await engine.import(memoryInputs(full, s, Math.min(n, s + INGEST_BATCH)));
    // Steady means settled: searches right after a bulk import run while the IVF lists train in the background
    // (ivf.ts), and are reported apart.
    const imported = performance.now();
    if (scan?.status().building) {
      log(`${n}: Engram steady while the vector lists build`);
      const building = await timeQueries(standard, (q) => engine.search(q.text, ENGRAM_OPS.hybrid), { rounds: 1, budgetMs: loop.budgetMs });
      latency('Engram', WRITES_OPS.building, building.latency);
    }
    await scan?.idle();
    figure('Engram', 'vector lists built after the import, ms', performance.now() - imported, 'ms');
    const steady = new StageTimes();
    const afterAdd = new StageTimes();
    const turns = await measure(
      {
        system: 'Engram',
        op: 'hybrid',
        add: async (from, to) => void (await engine.add(memoryInputs(full, from, to))),
        search: (q) => engine.search(q.text, ENGRAM_OPS.hybrid),
      },
      { steady, afterAdd, record: (result, into) => into.record(result as Parameters<StageTimes['record']>[0]) },
    );
    stageRows('Engram, steady', steady);
    stageRows('Engram, right after adding one', afterAdd);
    // The memories of the first turns, asked for by their own text: each must be the first hit.
    let found = 0;
    const checked = Math.min(CHECKED, turns);
    for (let i = 0; i < checked; i++) {
      const hits = (await engine.search(full.texts[n + i]!, { ...ENGRAM_OPS.hybrid, touch: false })).hits;
      if (hits[0]?.id === full.ids[n + i]) found++;
    }
    figure('Engram', 'memories just added found first by their own text', found / checked, '');
    await engine.close();
  });

  if (systems.includes('MiniSearch')) await guarded(out, `MiniSearch writes at N = ${n}`, log, async () => {
    log(`${n}: MiniSearch build`);
    const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], storeFields: [] });
    index.addAll(corpus.texts.map((text, i) => ({ id: corpus.ids[i]!, text })));
    await measure({
      system: 'MiniSearch',
      op: 'lexical',
      add: async (from, to) => {
        for (let i = from; i < to; i++) index.add({ id: full.ids[i]!, text: full.texts[i]! });
      },
      search: async (q) => index.search(q.text).slice(0, K),
    });
  });

  if (systems.includes('Orama hybrid')) await guarded(out, `Orama writes at N = ${n}`, log, async () => {
    log(`${n}: Orama build`);
    const thresholds = oramaThresholds(new NaiveVectors(corpus), standard);
    const orama = await buildOrama(corpus, thresholds);
    const row = (i: number) => ({ id: full.ids[i]!, text: full.texts[i]!, createdAt: full.createdAt[i]!, embedding: Array.from(full.vectors.subarray(i * full.dim, (i + 1) * full.dim)) });
    await measure({
      system: 'Orama hybrid',
      op: 'hybrid',
      add: async (from, to) => {
        if (to - from === 1) await insert(orama.db, row(from));
        else await insertMultiple(orama.db, Array.from({ length: to - from }, (_, j) => row(from + j)), to - from);
      },
      // The threshold stays the one of the first N: the few memories added since barely move the 10th-best cosine.
      search: async (q) => orama.search(q),
    });
  });
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const out: SectionResult = { latency: [], figures: [], stages: [], notes: [], env: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown' } };
  const loop: LoopOptions = { rounds: args.rounds, budgetMs: args.budgetMs };
  const world = new World(benchWords());
  const queries = benchQueries(world);
  const largest = Math.max(...args.sizes) + TURNS + ADD_COUNT;
  log(`corpus of ${largest} memories`);
  const full = loadCorpus(world, largest);
  for (const n of args.sizes) await benchWrites(out, full, queries, n, loop);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'writes.json'), JSON.stringify(out, null, 1));
  log('wrote bench/results/writes.json');
}

if (isEntry(import.meta.url)) await main();
