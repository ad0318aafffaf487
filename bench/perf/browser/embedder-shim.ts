/**
 * Bench input adapter inside the real worker. The bench's Vite server resolves worker/index.ts's import of
 * src/embedder/index.ts to this module (see bench/perf/browser.ts). `createEmbedder({ bench })` answers from the
 * corpus' precomputed vectors, fetched from the same origin; any other options go to the real createEmbedder.
 * After ingest the page asks (BroadcastChannel) to drop the corpus table, so the worker heap measured afterwards
 * is Engram's own.
 */
import { corpusFromParts, queriesFromJson, type CorpusJson, type QueryJson } from '../data.js';
import { PrecomputedEmbedder } from '../engram.js';
import { estimateTokens } from '../../../src/advanced.js';
import type { LocalEmbedder } from '../../../src/embedder/index.js';

export interface BenchEmbedderOptions {
  id: string;
  dim: number;
  queriesUrl: string;
  /** `<stem>` of the cached corpus files; absent on reopen (stored vectors are loaded from SQLite). */
  corpusStem?: string;
  n?: number;
}

export const BENCH_CHANNEL = 'engram-bench';

/** The worker checks the model before it opens: bench vectors need no model; anything else goes to the real check. */
export async function checkEmbedderModel(options: Record<string, unknown> = {}): Promise<void> {
  if (options.bench) return;
  const real = await import('../../../src/embedder/index.js');
  await real.checkEmbedderModel(options);
}

/** Typed as the real module's result: the worker reads its fields (`deviceChoice` in status, `dispose` on close). */
export async function createEmbedder(options: Record<string, unknown> = {}): Promise<LocalEmbedder> {
  const bench = options.bench as BenchEmbedderOptions | undefined;
  if (!bench) {
    const real = await import('../../../src/embedder/index.js');
    return real.createEmbedder(options);
  }
  let embedder = await build(bench);
  const channel = new BroadcastChannel(BENCH_CHANNEL);
  channel.onmessage = async (event) => {
    const message = event.data as { drop?: boolean; loadChunk?: string; start?: number };
    if (message.drop) embedder = await build({ ...bench, corpusStem: undefined });
    // The million section: one chunk's vectors at a time (a 1M table would not fit twice in memory).
    if (message.loadChunk) {
      embedder = await build({ ...bench, corpusStem: undefined });
      await addChunk(embedder, message.loadChunk, bench.dim);
      channel.postMessage({ chunkLoaded: message.loadChunk });
    }
  };
  // The engine keeps this object: delegate so that dropping the table takes effect. No model runs: a table lookup
  // on the CPU, at the engine's own token estimate.
  return {
    id: bench.id,
    vectorSpace: bench.id,
    model: 'bench precomputed vectors',
    dtype: 'fp32',
    pooling: 'output',
    prompts: { query: '', document: '' },
    maxTokens: Number.POSITIVE_INFINITY,
    longText: 'chunks',
    device: 'cpu',
    deviceChoice: { device: 'cpu', reason: 'requested' },
    loadMs: 0,
    dim: bench.dim,
    embed: (texts) => embedder.embed(texts),
    countTokens: estimateTokens,
    async dispose() {
      channel.close();
    },
  };
}

/** A chunk of the streamed corpus (bench/perf/stream-data.ts): `<stem>.json` texts and `<stem>.f32` vectors. */
async function addChunk(embedder: PrecomputedEmbedder, stem: string, dim: number): Promise<void> {
  const [json, bytes] = await Promise.all([
    fetch(`${stem}.json`).then((r) => r.json() as Promise<{ texts: string[] }>),
    fetch(`${stem}.f32`).then((r) => r.arrayBuffer()),
  ]);
  const vectors = new Float32Array(bytes);
  json.texts.forEach((text, i) => embedder.addVector(text, vectors.subarray(i * dim, (i + 1) * dim)));
}

async function build(bench: BenchEmbedderOptions): Promise<PrecomputedEmbedder> {
  const embedder = new PrecomputedEmbedder(bench.id, bench.dim);
  embedder.addQueries(queriesFromJson((await (await fetch(bench.queriesUrl)).json()) as QueryJson[]));
  if (bench.corpusStem && bench.n) {
    const [json, bytes] = await Promise.all([
      fetch(`${bench.corpusStem}.json`).then((r) => r.json() as Promise<CorpusJson>),
      fetch(`${bench.corpusStem}.f32`).then((r) => r.arrayBuffer()),
    ]);
    const n = bench.n;
    const corpus = corpusFromParts({ texts: json.texts.slice(0, n), createdAt: json.createdAt.slice(0, n), topics: json.topics.slice(0, n) }, new Float32Array(bytes, 0, n * bench.dim), bench.dim);
    embedder.addCorpus(corpus);
  }
  return embedder;
}
