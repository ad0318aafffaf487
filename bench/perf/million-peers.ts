/**
 * MiniSearch at the million section's scale, in Node, in its own process (run by bench/perf/million.ts with
 * `--million-peers`): built from the chunk files, timed once over each query set (one warm-up pass and one round:
 * its slowest queries take seconds each). Writes bench/results/million-peers.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { parseArgs } from './args.js';
import { QUERY_SETS, querySet, SYNTHETIC_DIM, World } from './data.js';
import { timeQueries, type SectionResult } from './measure.js';
import { benchQueries, benchWords } from './node-data.js';
import { resultsDir } from './paths.js';
import { K } from './peers.js';
import { chunkCount, CHUNK, readChunkJson } from './stream-data.js';

const gc = (globalThis as { gc?: () => void }).gc;
const heap = () => {
  gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

const n = parseArgs(process.argv.slice(2)).millionN;
const world = new World(benchWords());
const queries = benchQueries(world);
const out: SectionResult = { latency: [], figures: [], stages: [], notes: [], env: {} };
const base = heap();
const start = performance.now();
const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], storeFields: [] });
for (let k = 0; k < chunkCount(n); k++) {
  const { texts } = readChunkJson(world.seed, k);
  const count = Math.min(CHUNK, n - k * CHUNK);
  index.addAll(texts.slice(0, count).map((text, j) => ({ id: `m${k * CHUNK + j}`, text })));
  console.log(`[bench million peers] MiniSearch indexed ${Math.min(n, (k + 1) * CHUNK)}`);
}
const figure = (metric: string, value: number, unit: string) => out.figures.push({ section: 'node', dim: SYNTHETIC_DIM, n, system: 'MiniSearch (Node)', metric, value, unit });
figure('build memories/s', n / ((performance.now() - start) / 1000), '/s');
figure('heap MB', (heap() - base) / 2 ** 20, 'MB');
for (const set of QUERY_SETS) {
  const inSet = querySet(queries, set);
  const { latency } = await timeQueries(inSet, (q) => index.search(q.text).slice(0, K).map((r) => r.id as string), { rounds: 1, budgetMs: 0 });
  out.latency.push({ section: 'node', dim: SYNTHETIC_DIM, n, system: 'MiniSearch (Node)', op: 'lexical', set, ...latency });
  console.log(`[bench million peers] MiniSearch ${set} set: p50 ${latency.p50.toFixed(1)} ms, p99 ${latency.p99.toFixed(0)} ms`);
}
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, 'million-peers.json'), JSON.stringify(out, null, 1));
