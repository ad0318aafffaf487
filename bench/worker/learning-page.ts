/**
 * Learning from use (issue 18) as users run it: `createMemory` (the real worker, SQLite on OPFS, the built-in model)
 * searched with reinforcement and associations off, reinforcement on (the default), and both on. Driven by
 * bench/worker.ts (`learningSection`) through `window.learningBench`, one phase per call so the driver logs between.
 */
import * as Comlink from 'comlink';
import { bytesOnDisk, sleep, untilHybrid } from './page-lib.js';
import { createMemory, type Memory, type RemoteSearchOptions } from '../../src/index.js';
import { TOUCH_WRITE_DELAY_MS } from '../../src/engine/touch-writer.js';
import type { AssociationOptions } from '../../src/search/options.js';
import { edgeKey } from '../../src/store/graph-rows.js';
import type { SearchResult } from '../../src/types.js';
import type { Batch, LearningStore } from './learning-store.js';

let texts: string[] = [];
let createdAt: number[] = [];
/** The main bench's query sets (fixed + Zipfian worst case), from the driver. */
let benchQueries: string[] = [];
/** What the replay and the timed blocks search: query families (below), then the bench's sets. */
let learningSet: string[] = [];
let memory: Memory | null = null;

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export const CONFIGS = ['baseline', 'reinforce', 'associations'] as const;
export type Config = (typeof CONFIGS)[number];
/** `associations: {}` takes the defaults the option has when turned on (floor 0.3, bridges). */
const OPTIONS: Record<Config, Partial<RemoteSearchOptions>> = {
  baseline: { reinforce: false, associations: false },
  reinforce: { reinforce: true, associations: false },
  associations: { reinforce: true, associations: {} as AssociationOptions },
};
/** Searches that change nothing (warm-up, probes). */
const READ_ONLY: Partial<RemoteSearchOptions> = { touch: false, associations: false };

/** What a store write after a pause holds (bookkeeping: 'none' writes nothing; 'touch' is the pre-learning kind). */
export type Bookkeeping = 'none' | 'touch' | 'reinforce';
const BOOKKEEPING: Record<Bookkeeping, Partial<RemoteSearchOptions>> = {
  none: READ_ONLY,
  touch: OPTIONS.baseline,
  reinforce: OPTIONS.reinforce,
};

function learningStore<T>(run: (bench: Comlink.Remote<LearningStore>) => Promise<T>): Promise<T> {
  const worker = new Worker(new URL('./learning-store.ts', import.meta.url), { type: 'module' });
  return run(Comlink.wrap<LearningStore>(worker)).finally(() => worker.terminate());
}

function opened(): Memory {
  if (!memory) throw new Error('bench: open a memory first');
  return memory;
}



/** Five words of memory `i`'s text from word `from`: a short query that finds it and its neighbours. */
function excerpt(i: number, from: number): string {
  const words = (texts[i] ?? '').split(/\s+/).filter(Boolean);
  return (words.slice(from, from + 5).length >= 3 ? words.slice(from, from + 5) : words.slice(-5)).join(' ');
}

/**
 * Query families: three overlapping excerpts of each of `count` memories spread over the first `n`. Their answers
 * share some memories and not others, as a user's related questions do, so the associations one forms reach
 * memories the others did not find directly (the `associate` stage has something to add).
 */
function families(n: number, count = 40): string[] {
  return Array.from({ length: count }, (_, f) => Math.floor(((f + 0.5) * n) / count)).flatMap((i) => [0, 3, 6].map((from) => excerpt(i, from)));
}

/** `count` queries, each from a different memory (distinct for offset + count ≤ n): every search forms new pairs. */
function distinctQueries(n: number, count: number, offset: number): string[] {
  return Array.from({ length: count }, (_, j) => excerpt(((offset + j) * 7919) % n, 2));
}

/** How late after it is due (ms) the bookkeeping write may start: its timer runs on a loaded worker. */
const WRITE_WINDOW_MS = 150;

const stage = (result: SearchResult, name: string) => result.trace.stages.find((s) => s.name === name);
const associativeHits = (result: SearchResult) => result.hits.filter((h) => h.explain.associative !== undefined).length;

const bench = {
  async setup(stem: string, queries: string[]): Promise<number> {
    const json = (await (await fetch(`${stem}.json`)).json()) as { texts: string[]; createdAt: number[] };
    ({ texts, createdAt } = json);
    benchQueries = queries;
    return texts.length;
  },

  /** A new database of the first `n` memories with real model vectors, through the store (learning-store.ts). */
  seed: (name: string, n: number) => learningStore((b) => b.seed(name, texts.slice(0, n), createdAt.slice(0, n), 2000)),

  /** Bytes the associations of `name` take (removes them: call last; with the Memory closed). */
  associationBytes: (name: string) => learningStore((b) => b.associationBytes(name)),

  /** The bookkeeping writes of `batches`, made alone on the store (learning-store.ts; call with the Memory closed). */
  timeWrites: (name: string, batches: Batch[]) => learningStore((b) => b.timeWrites(name, batches)),

  /** The database at rest (call with its Memory closed). */
  async size(name: string) {
    const stored = await learningStore((b) => b.size(name));
    return { ...stored, fileBytes: await bytesOnDisk(name) };
  },

  /**
   * Opens `name` as an app does, waits for the model and the background record load, then warms up (one pass over
   * the learning set that changes nothing).
   */
  async open(name: string, n: number) {
    const t = performance.now();
    memory = await createMemory({ name, persist: false });
    await untilHybrid(memory);
    const readyMs = performance.now() - t;
    await sleep(1000 + n / 20);
    learningSet = [...families(n), ...benchQueries];
    for (const query of learningSet) await memory.search(query, READ_ONLY);
    const status = await memory.status();
    return { readyMs, lexicalIndex: status.lexicalIndex, count: status.count, associations: status.associations, queries: learningSet.length };
  },

  /** Closes the memory (its bookkeeping is flushed), then lets the worker's memory be reclaimed. */
  async close() {
    await memory?.close();
    memory = null;
    await sleep(3000);
  },

  /**
   * `count` searches back to back, each from a different memory, as `config`: latencies, and the associations after
   * every 1,000. Bookkeeping writes fall inside the stream (at most TOUCH_WRITE_MAX_DELAY_MS apart).
   */
  async stream(config: Config, n: number, count: number, offset: number) {
    const m = opened();
    const ms: number[] = [];
    const checkpoints: { searches: number; associations: number; core: number; elapsedMs: number }[] = [];
    const start = performance.now();
    const queries = distinctQueries(n, count, offset);
    for (let i = 0; i < queries.length; i++) {
      const t = performance.now();
      await m.search(queries[i]!, OPTIONS[config]);
      ms.push(performance.now() - t);
      if ((i + 1) % 1000 === 0 || i === queries.length - 1) {
        const status = await m.status();
        if (status.error) throw new Error(`bench: ${status.error.code}: ${status.error.message}`);
        checkpoints.push({ searches: i + 1, associations: status.associations, core: status.core, elapsedMs: performance.now() - start });
      }
    }
    return { ms, checkpoints };
  },

  /**
   * `passes` replays of the learning set with reinforcement on (associations not followed), each followed by a
   * read-only pass with associations on: how many searches the `associate` stage added memories to.
   */
  async replay(passes: number) {
    const m = opened();
    const out = [];
    for (let p = 1; p <= passes; p++) {
      const ms: number[] = [];
      for (const query of learningSet) {
        const t = performance.now();
        await m.search(query, OPTIONS.reinforce);
        ms.push(performance.now() - t);
      }
      const { associations, core } = await m.status();
      let searchesAdded = 0;
      let added = 0;
      let hitsAssociative = 0;
      for (const query of learningSet) {
        const result = await m.search(query, { ...OPTIONS.associations, touch: false });
        const n = stage(result, 'associate')?.out ?? 0;
        added += n;
        if (n > 0) searchesAdded++;
        hitsAssociative += associativeHits(result);
      }
      out.push({ pass: p, p50Ms: median(ms), associations, core, searchesAdded, added, hitsAssociative, searches: learningSet.length });
    }
    return out;
  },

  /**
   * `rounds` rounds; in each, one block of the learning set per configuration, in a rotated order. A pause before
   * each block lets the previous block's bookkeeping write run outside any timed search.
   */
  async timeBlocks(rounds: number) {
    const m = opened();
    const of = () => ({ ms: [] as number[], associateMs: [] as number[], reinforceMs: [] as number[], added: 0, hitsAssociative: 0, searches: 0 });
    const by = { baseline: of(), reinforce: of(), associations: of() };
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < CONFIGS.length; k++) {
        const config = CONFIGS[(r + k) % CONFIGS.length]!;
        const into = by[config];
        await sleep(TOUCH_WRITE_DELAY_MS + 500);
        for (const query of learningSet) {
          const t = performance.now();
          const result = await m.search(query, OPTIONS[config]);
          into.ms.push(performance.now() - t);
          const associate = stage(result, 'associate');
          if (associate) {
            into.associateMs.push(associate.ms);
            into.added += associate.out;
          }
          const reinforce = stage(result, 'reinforce');
          if (reinforce) into.reinforceMs.push(reinforce.ms);
          into.hitsAssociative += associativeHits(result);
          into.searches++;
        }
      }
    }
    return by;
  },

  /** `batch` searches (each from a different memory) that change nothing: their hits, for `timeWrites`. */
  async collectBatch(n: number, batch: number, offset: number): Promise<Batch> {
    const m = opened();
    const out: Batch = [];
    for (const query of distinctQueries(n, batch, offset)) out.push((await m.search(query, READ_ONLY)).hits.map((h) => h.id));
    return out;
  },

  /**
   * The coalesced bookkeeping write, seen from the page: `batch` searches (each from a different memory) with
   * `bookkeeping`, then the worker is pinged with `count()` back to back around the time the write is due. The
   * write holds the worker's thread (SQLite on OPFS sync handles), so the ping it overlaps waits for it: the stall
   * (longest ping − median ping, among the pings that start from just before the write is due to WRITE_WINDOW_MS
   * after) includes the write's time. With 'none' nothing is written: the noise floor.
   */
  async observeWrite(bookkeeping: Bookkeeping, batch: number, n: number, offset: number) {
    const m = opened();
    const records = new Set<string>();
    const edges = new Set<string>();
    for (const query of distinctQueries(n, batch, offset)) {
      const result = await m.search(query, BOOKKEEPING[bookkeeping]);
      if (bookkeeping === 'none') continue;
      for (const hit of result.hits) records.add(hit.id);
      if (bookkeeping !== 'reinforce') continue;
      const direct = result.hits.filter((h) => h.explain.associative === undefined).map((h) => h.id).sort();
      for (let i = 0; i < direct.length; i++) for (let j = i + 1; j < direct.length; j++) edges.add(edgeKey(direct[i]!, direct[j]!));
    }
    const last = performance.now();
    await sleep(Math.max(0, last + TOUCH_WRITE_DELAY_MS - 200 - performance.now()));
    const pings: { at: number; ms: number }[] = [];
    const until = last + TOUCH_WRITE_DELAY_MS + 1000;
    while (performance.now() < until) {
      const t = performance.now();
      await m.count();
      pings.push({ at: t, ms: performance.now() - t });
    }
    const pingMs = median(pings.map((p) => p.ms));
    const due = last + TOUCH_WRITE_DELAY_MS;
    const around = pings.filter((p) => p.at >= due - 20 && p.at <= due + WRITE_WINDOW_MS).map((p) => p.ms);
    return { bookkeeping, batch, records: records.size, edges: edges.size, stallMs: Math.max(0, ...around) - pingMs, pingMs, pings: around.length };
  },
};

export type LearningBench = typeof bench;
(window as unknown as { learningBench: LearningBench }).learningBench = bench;
