/**
 * `npx tsx bench/ingest.ts [--n 10000] [--batch 1000] [--at 0] [--vectors model|corpus]`: the engine's add path
 * in Node, in process (in-memory store), for iterating on ingest speed (the worker figure is `npm run bench:worker`).
 *
 * - `--vectors model` (default): the built-in model through `createEmbedder`, as users run it;
 *   `--vectors corpus`: the bench corpus' 384-d vectors, precomputed (the add path without the model).
 * - `--at N`: first fills the store with N memories through `import` (no supersede), then times `add`.
 * Prints memories/s and the share of it spent in the embedder.
 */
import { createEngine } from '../src/index.js';
import type { Embedder } from '../src/index.js';
import { World } from './perf/data.js';
import { PrecomputedEmbedder, memoryInputs } from './perf/engram.js';
import { loadBuiltInModel } from './perf/model.js';
import { benchWords, loadCorpus } from './perf/node-data.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const n = Number(option('n', '10000'));
const batch = Number(option('batch', '1000'));
const at = Number(option('at', '0'));
const source = option('vectors', 'model');
const embedBatchSize = Number(option('embed-batch', '0')) || undefined;

const corpus = loadCorpus(new World(benchWords()), at + n);
let embedder: Embedder;
if (source === 'model') {
  const model = await loadBuiltInModel();
  if ('reason' in model) throw new Error(model.reason);
  embedder = model.embedder;
} else {
  embedder = new PrecomputedEmbedder('bench-corpus', corpus.dim).addCorpus(corpus);
}

let embedMs = 0;
const timed: Embedder = Object.create(embedder) as Embedder;
timed.embed = async (texts) => {
  const t = performance.now();
  const out = await embedder.embed(texts);
  embedMs += performance.now() - t;
  return out;
};

const engine = await createEngine({ embedder: timed, embedBatchSize });
for (let s = 0; s < at; s += 1000) await engine.import(memoryInputs(corpus, s, Math.min(at, s + 1000)));
embedMs = 0;
// Warm-up on a throwaway engine would change nothing for the model (already loaded); the first batch is timed.
const start = performance.now();
for (let s = at; s < at + n; s += batch) await engine.add(memoryInputs(corpus, s, Math.min(at + n, s + batch)));
const ms = performance.now() - start;
const superseded = (await engine.export()).filter((r) => r.supersededBy !== undefined).length;
console.log(
  `${source}: add ${n} at ${at} in batches of ${batch}: ${Math.round(n / (ms / 1000))}/s ` +
    `(${Math.round(ms)} ms, embedder ${Math.round(embedMs)} ms = ${Math.round((100 * embedMs) / ms)}%; ${superseded} superseded)`,
);
await engine.close();
