/**
 * The million section, inside headless Chromium: `createMemory` (the real worker, SQLite on OPFS) fed chunk by
 * chunk, then a cold open, both query sets and the answers recall is measured on. Each step is its own call from
 * bench/perf/million.ts (through `window.millionBench`), so the driver sees progress, samples the worker's memory
 * between steps and notices a crashed worker instead of waiting on it.
 */
import { queriesFromJson, QUERY_SETS, querySet, type BenchQuery, type QueryJson, type QuerySetName } from '../data.js';
import { ENGRAM_OPS, RECALL_OPTIONS, StageTimes, type EngramOp } from '../engram.js';
import { timeQueries, type Latency, type LoopOptions } from '../measure.js';
import { BENCH_CHANNEL, type BenchEmbedderOptions } from './embedder-shim.js';
import { createMemory, type Memory } from '../../../src/index.js';

/** The engine's limit on memories per add or import call (limits.maxRecordsPerCall). */
const IMPORT_BATCH = 10_000;
/**
 * Long call timeouts: at this scale an open or a first search may take longer than the defaults, and the bench
 * wants the figure, not a TIMEOUT; the driver has its own limit for a stalled or crashed worker.
 */
const SLOW = { callTimeoutMs: 600_000, writeTimeoutMs: 600_000, openTimeoutMs: 600_000 };

let memory: Memory | null = null;
let queries: BenchQuery[] = [];
let bench: BenchEmbedderOptions | null = null;
let name = '';

async function waitForEmbedder(m: Memory, timeoutMs = 600_000): Promise<void> {
  const start = performance.now();
  for (;;) {
    const status = await m.status();
    if (status.embedder !== null && status.indexing === null) return;
    if (status.error || performance.now() - start > timeoutMs) throw new Error(`bench: the worker embedder did not become ready: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function open(): Memory {
  if (!memory) throw new Error('bench: no memory open');
  return memory;
}

const api = {
  async setup(options: { name: string; queriesUrl: string; dim: number }): Promise<number> {
    name = options.name;
    queries = queriesFromJson((await (await fetch(options.queriesUrl)).json()) as QueryJson[]);
    bench = { id: `bench-${options.dim}d`, dim: options.dim, queriesUrl: options.queriesUrl };
    return queries.length;
  },

  async open(): Promise<void> {
    memory = await createMemory({ name, storage: 'opfs', embedder: { bench } as never, persist: false, ...SLOW });
    await waitForEmbedder(memory);
  },

  /** One chunk: the worker's bench embedder loads the chunk's vectors, then `import` calls of IMPORT_BATCH. */
  async ingestChunk(options: { stem: string; start: number; count: number }): Promise<{ ms: number }> {
    const m = open();
    const t = performance.now();
    const channel = new BroadcastChannel(BENCH_CHANNEL);
    const loaded = new Promise<void>((resolve) => {
      channel.onmessage = (event) => {
        if ((event.data as { chunkLoaded?: string }).chunkLoaded === options.stem) resolve();
      };
    });
    channel.postMessage({ loadChunk: options.stem });
    const [json] = await Promise.all([fetch(`${options.stem}.json`).then((r) => r.json() as Promise<{ texts: string[]; createdAt: number[] }>), loaded]);
    channel.close();
    for (let s = 0; s < options.count; s += IMPORT_BATCH) {
      const end = Math.min(options.count, s + IMPORT_BATCH);
      const batch = [];
      for (let j = s; j < end; j++) batch.push({ id: `m${options.start + j}`, text: json.texts[j]!, createdAt: json.createdAt[j]! });
      await m.import(batch);
    }
    return { ms: performance.now() - t };
  },

  async count(): Promise<number> {
    return open().count();
  },

  async close(): Promise<void> {
    await memory?.close();
    memory = null;
  },

  /** A new worker on the stored database: to the first answer (lexical allowed), then to the first hybrid answer. */
  async coldOpen(): Promise<{ firstAnswerMs: number; hybridMs: number; mode: string }> {
    const query = queries[0]!;
    const start = performance.now();
    memory = await createMemory({ name, storage: 'opfs', embedder: { bench } as never, persist: false, ...SLOW });
    const first = await memory.search(query.text, ENGRAM_OPS.hybrid);
    const firstAnswerMs = performance.now() - start;
    let mode = first.trace.mode;
    while (mode !== 'hybrid' && performance.now() - start < 600_000) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      mode = (await memory.search(query.text, ENGRAM_OPS.hybrid)).trace.mode;
    }
    return { firstAnswerMs, hybridMs: performance.now() - start, mode };
  },

  /** One operation over one query set; stage means, p50 and p99 for hybrid. */
  async timeSet(options: { set: QuerySetName; op: EngramOp; loop: LoopOptions }): Promise<{ latency: Latency; stages: ReturnType<StageTimes['rows']> }> {
    const m = open();
    const stages = new StageTimes();
    const { latency } = await timeQueries(querySet(queries, options.set), async (q) => {
      const result = await m.search(q.text, ENGRAM_OPS[options.op]);
      if (options.op === 'hybrid') stages.record(result);
      return result;
    }, options.loop);
    return { latency, stages: stages.rows() };
  },

  /** The raw vector ranking of every query (recall@10 is computed in Node against the exact scan). */
  async vectorAnswers(): Promise<Record<string, string[]>> {
    const m = open();
    const out: Record<string, string[]> = {};
    for (const q of queries) out[q.name] = (await m.search(q.text, RECALL_OPTIONS)).hits.map((h) => h.id);
    return out;
  },

  sets: () => QUERY_SETS.filter((set) => querySet(queries, set).length > 0),
};

export type MillionBench = typeof api;
(window as unknown as { millionBench: MillionBench }).millionBench = api;
