/**
 * The million section in Node, in its own process (run by bench/perf/million.ts; its RSS is this process's):
 * `createEngine` on a SQLite file (openNodeStore), fed from the chunk files by `import` calls of 10,000, then
 * closed and opened again: the time to the first answer, the IVF lists over the compact codes rebuilt in the
 * background, both query sets with the stage breakdown, vector recall@10 against the exact answers, and the
 * process RSS (peak, and after each step). Writes bench/results/million-node.json.
 *
 *   node --expose-gc --import tsx bench/perf/million-node.ts --million-n 200000 [--cpu-prof …]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from './args.js';
import { BENCH_NOW, QUERY_SETS, querySet, SYNTHETIC_DIM, World, type BenchQuery } from './data.js';
import { ENGRAM_OPS, RECALL_OPTIONS, StageTimes, type EngramOp } from './engram.js';
import { meanRecall, timeQueries, type SectionResult } from './measure.js';
import { benchQueries, benchWords } from './node-data.js';
import { resultsDir } from './paths.js';
import { K } from './peers.js';
import { CHUNK, chunkCount, ensureChunks, exactAnswers, readChunkJson, readChunkVectors } from './stream-data.js';
import { recallMetric } from './suite.js';
import { createEngine, type Embedder, type Engine } from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import { readSnapshot, saveSnapshot } from '../../src/engine/lexical-persistence.js';
import { openNodeStore } from '../../src/node.js';
import { IvfScan, type IvfIndex, type IvfSource, type IvfStatus, type ListedRows } from '../../src/vector/ivf.js';

export const NODE_SYSTEM = 'Engram (Node, SQLite file)';
/** The engine's limit on memories per add or import call (limits.maxRecordsPerCall). */
const IMPORT_BATCH = 10_000;

const log = (message: string) => console.log(`[bench million node ${new Date().toISOString().slice(11, 19)}] ${message}`);
const gc = (globalThis as { gc?: () => void }).gc;

/** Vectors of the chunk being imported and of the queries: a million texts' vectors are never held at once. */
class ChunkEmbedder implements Embedder {
  readonly id = `bench-${SYNTHETIC_DIM}d`;
  readonly dim = SYNTHETIC_DIM;
  private chunk = new Map<string, Float32Array>();
  private readonly queries = new Map<string, Float32Array>();

  constructor(queries: readonly BenchQuery[]) {
    for (const q of queries) this.queries.set(q.text, q.vector);
  }

  load(texts: readonly string[], vectors: Float32Array): void {
    this.chunk = new Map(texts.map((text, j) => [text, vectors.subarray(j * this.dim, (j + 1) * this.dim)]));
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const vector = this.chunk.get(text) ?? this.queries.get(text);
      if (!vector) throw new Error(`bench: no vector for "${text.slice(0, 60)}"`);
      return vector.slice();
    });
  }
}

/** The default scan, keeping the compact index's lists it hands over so their status can be read. */
class WatchedScan extends IvfScan {
  lists: IvfIndex<ListedRows> | null = null;

  override compactLists<S extends ListedRows>(source: IvfSource<S>): IvfIndex<S> {
    const made = super.compactLists(source);
    this.lists = made as unknown as IvfIndex<ListedRows>;
    return made;
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const n = args.millionN;
  const world = new World(benchWords());
  const queries = benchQueries(world);
  const out: SectionResult = { latency: [], figures: [], stages: [], notes: [], env: { n } };
  const figure = (metric: string, value: number, unit: string) => out.figures.push({ section: 'node', dim: SYNTHETIC_DIM, n, system: NODE_SYSTEM, metric, value, unit });
  let peakRss = 0;
  const rss = (label: string) => {
    gc?.();
    const bytes = process.memoryUsage().rss;
    peakRss = Math.max(peakRss, bytes);
    log(`RSS ${label}: ${(bytes / 2 ** 20).toFixed(0)} MB`);
    return bytes / 2 ** 20;
  };
  ensureChunks(world, n, log);
  const exact = exactAnswers(world, n, queries, log);
  const dir = mkdtempSync(join(tmpdir(), 'engram-bench-million-node-'));
  const path = join(dir, 'million.db');
  const embedder = new ChunkEmbedder(queries);
  let scan: WatchedScan | null = null;
  // As an app (and engram-mcp) does: the lexical snapshot saved before close, handed to the next open.
  let store: Store | null = null;
  const open = async (): Promise<Engine> => {
    store = await openNodeStore({ path });
    return createEngine({
      store,
      indexSnapshot: await readSnapshot(store),
      embedder,
      clock: () => BENCH_NOW,
      vectorScan: () => (scan = new WatchedScan({ kernelCompile: 'background' })),
    });
  };
  const base = rss('at start');
  try {
    let engine = await open();
    const start = performance.now();
    let importMs = 0;
    let readMs = 0;
    for (let k = 0; k < chunkCount(n); k++) {
      const t0 = performance.now();
      const json = readChunkJson(world.seed, k);
      const count = Math.min(CHUNK, n - k * CHUNK);
      embedder.load(json.texts.slice(0, count), readChunkVectors(world.seed, k));
      const t1 = performance.now();
      for (let s = 0; s < count; s += IMPORT_BATCH) {
        const batch = [];
        for (let j = s; j < Math.min(count, s + IMPORT_BATCH); j++) batch.push({ id: `m${k * CHUNK + j}`, text: json.texts[j]!, createdAt: json.createdAt[j]! });
        await engine.import(batch);
      }
      readMs += t1 - t0;
      importMs += performance.now() - t1;
      const done = Math.min(n, (k + 1) * CHUNK);
      log(`imported ${done.toLocaleString('en-US')}: overall ${Math.round(done / ((performance.now() - start) / 1000))}/s (import calls ${Math.round(done / (importMs / 1000))}/s)`);
    }
    embedder.load([], new Float32Array(0));
    figure('import memories/s', n / ((performance.now() - start) / 1000), '/s');
    figure('import: in import calls, memories/s', n / (importMs / 1000), '/s');
    figure('import: reading the chunk files, ms', readMs, 'ms');
    figure('RSS after import MB', rss('after import'), 'MB');
    // As an app that kept running: the IVF lists build once writes pause, before the last save and close.
    const listsStart = performance.now();
    await (scan as WatchedScan | null)?.lists?.idle();
    figure('IVF lists built after the import ms', performance.now() - listsStart, 'ms');
    const saveStart = performance.now();
    const snapshotBytes = await saveSnapshot(engine, store!);
    const vectorBytes = await engine.saveVectorIndex(); // 0: saveSnapshot saved it; timed apart below
    figure('lexical snapshot and vector index save ms', performance.now() - saveStart, 'ms');
    figure('lexical snapshot and vector index MB', (snapshotBytes + vectorBytes) / 2 ** 20, 'MB');
    figure('RSS after the snapshot save MB', rss('after the snapshot save'), 'MB');
    await engine.close();
    scan = null;
    gc?.();

    const t0 = performance.now();
    engine = await open();
    const opened = performance.now() - t0;
    const first = await engine.search(queries[0]!.text, ENGRAM_OPS.hybrid);
    figure('open ms', opened, 'ms');
    figure('open to first answer ms', performance.now() - t0, 'ms');
    figure('first answer search mode', first.trace.mode === 'hybrid' ? 1 : 0, '1 = hybrid');
    log(`open ${Math.round(opened)} ms (lexical index ${engine.lexicalSource}, vector index ${engine.vectorSource}), first answer at ${Math.round(performance.now() - t0)} ms (${first.trace.mode})`);
    if (engine.lexicalSource !== 'snapshot') out.notes.push(`${NODE_SYSTEM}: the lexical index was rebuilt on open, not restored from its snapshot.`);
    if (engine.vectorSource !== 'saved') out.notes.push(`${NODE_SYSTEM}: the vector index was loaded from the stored vectors on open, not restored from its saved form.`);
    figure('RSS after open MB', rss('after open'), 'MB');
    const lists = (scan as WatchedScan | null)?.lists ?? null;
    if (lists) {
      await lists.idle();
      figure('IVF lists ready after open ms', performance.now() - t0, 'ms');
      const status: IvfStatus = lists.status();
      figure('IVF lists answer (1 = yes)', status.answering === 'lists' ? 1 : 0, '');
      figure('IVF probed share %', (status.share ?? 1) * 100, '%');
      log(`IVF lists over the codes: ${JSON.stringify(status)} after ${Math.round(performance.now() - t0)} ms`);
    } else out.notes.push('Engram (Node): the vector index is not compact, or its scan has no lists: no IVF status.');

    for (const set of QUERY_SETS) {
      const inSet = querySet(queries, set);
      if (inSet.length === 0) continue;
      for (const op of Object.keys(ENGRAM_OPS) as EngramOp[]) {
        const stages = new StageTimes();
        const { latency } = await timeQueries(inSet, async (q) => {
          const result = await engine.search(q.text, ENGRAM_OPS[op]);
          if (op === 'hybrid') stages.record(result);
        }, { rounds: args.rounds, budgetMs: args.budgetMs });
        out.latency.push({ section: 'node', dim: SYNTHETIC_DIM, n, system: NODE_SYSTEM, op, set, ...latency });
        out.stages.push(...stages.rows().map((row) => ({ section: 'node' as const, dim: SYNTHETIC_DIM, n, system: NODE_SYSTEM, set, ...row })));
        log(`${op} (${set} set): p50 ${latency.p50.toFixed(2)} ms, p99 ${latency.p99.toFixed(2)} ms`);
      }
      const answers = new Map<BenchQuery, string[]>();
      for (const q of inSet) answers.set(q, (await engine.search(q.text, RECALL_OPTIONS)).hits.map((h) => h.id));
      const recall = meanRecall(answers, new Map(inSet.map((q) => [q, exact.get(q.name) ?? []])), K);
      figure(recallMetric(set), recall, '');
      log(`${recallMetric(set)}: ${recall.toFixed(3)}`);
    }
    figure('RSS after the query sets MB', rss('after the query sets'), 'MB');
    figure('RSS peak MB', peakRss / 2 ** 20, 'MB');
    figure('RSS at start MB', base, 'MB');
    await engine.close();
  } catch (error) {
    out.notes.push(`${NODE_SYSTEM} at N = ${n.toLocaleString('en-US')} failed: ${error instanceof Error ? error.message : String(error)}`);
    log(String(error instanceof Error ? error.stack : error));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, 'million-node.json'), JSON.stringify(out, null, 1));
    log('wrote bench/results/million-node.json');
  }
}

await main();
