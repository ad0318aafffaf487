/**
 * Engram as a bench system, the same in Node (createEngine) and in the page (createMemory): which searches
 * are measured, with which options, and the input adapter that hands the engine the corpus' precomputed
 * vectors (the engine still normalises, stores, indexes and scans them: only the model call is replaced).
 */
import type { BenchQuery, Corpus } from './data.js';
import { percentile } from './measure.js';
import { K } from './peers.js';
import type { Embedder, MemoryInput, SearchOptions, SearchResult } from '../../src/index.js';

/** The operations measured on Engram, with their search options (everything else stays default). */
export const ENGRAM_OPS = {
  /** The whole pipeline as users call it (decay, boosts, MMR, context assembly), top 10. */
  hybrid: { k: K },
  'lexical leg': { k: K, mode: 'lexical' },
  'vector leg': { k: K, mode: 'vector' },
} satisfies Record<string, Partial<SearchOptions>>;

export type EngramOp = keyof typeof ENGRAM_OPS;

/**
 * Pure vector ranking (no neighbour support, decay, boosts or MMR): compared with the exact top 10 for recall@10.
 * Neighbour support by time would lift memories written close to a hit, which an exact scan knows nothing of.
 */
export const RECALL_OPTIONS: Partial<SearchOptions> = { k: K, mode: 'vector', raw: true, neighbours: false, decay: false, diversity: false, touch: false };

export const INGEST_BATCH = 1000;

export function memoryInputs(corpus: Corpus, start = 0, end = corpus.n): MemoryInput[] {
  const out: MemoryInput[] = [];
  for (let i = start; i < end; i++) out.push({ id: corpus.ids[i]!, text: corpus.texts[i]!, createdAt: corpus.createdAt[i]! });
  return out;
}

/**
 * Answers `embed` from a table of precomputed vectors (corpus texts and query texts). When `live` is set and
 * `useLive` is on, query texts go to the real model instead: that is "hybrid with query embedding".
 */
export class PrecomputedEmbedder implements Embedder {
  readonly id: string;
  readonly dim: number;
  useLive = false;
  /** The real model's token counter when there is one, so context assembly counts as it would in use. */
  readonly countTokens?: (text: string) => number;
  private readonly table = new Map<string, Float32Array>();

  constructor(
    id: string,
    dim: number,
    private readonly live: Embedder | null = null,
  ) {
    this.id = id;
    this.dim = dim;
    const counter = live?.countTokens?.bind(live);
    if (counter) this.countTokens = counter;
  }

  addCorpus(corpus: Corpus): this {
    for (let i = 0; i < corpus.n; i++) this.table.set(corpus.texts[i]!, corpus.vectors.subarray(i * corpus.dim, (i + 1) * corpus.dim));
    return this;
  }

  addVector(text: string, vector: Float32Array): this {
    this.table.set(text, vector);
    return this;
  }

  addQueries(queries: readonly BenchQuery[], vectorOf: (query: BenchQuery) => Float32Array = (q) => q.vector): this {
    for (const query of queries) this.table.set(query.text, vectorOf(query));
    return this;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (this.useLive && this.live) return this.live.embed(texts);
    return texts.map((text) => {
      const vector = this.table.get(text);
      if (!vector) throw new Error(`bench: no precomputed vector for "${text.slice(0, 60)}"`);
      return vector.slice();
    });
  }

}

/** Milliseconds per trace stage over many searches, for the stage breakdown table. */
export class StageTimes {
  readonly byStage = new Map<string, number[]>();

  record(result: Pick<SearchResult, 'trace'>): void {
    for (const stage of result.trace.stages) {
      const list = this.byStage.get(stage.name) ?? [];
      list.push(stage.ms);
      this.byStage.set(stage.name, list);
    }
  }

  /** Mean, p50 and p99 per stage, in the order the stages first ran. */
  rows(): { stage: string; mean: number; p50: number; p99: number }[] {
    return [...this.byStage].map(([stage, times]) => {
      const sorted = [...times].sort((a, b) => a - b);
      return { stage, mean: times.reduce((s, t) => s + t, 0) / Math.max(1, times.length), p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    });
  }
}
