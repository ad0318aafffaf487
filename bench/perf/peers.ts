/**
 * The peers Engram is measured against, on the same corpus and queries (runs in Node and in the page):
 * Orama's hybrid search with the same vectors, MiniSearch alone, and a naive reference (an array of vectors,
 * a full sort) that also gives the exact answers for recall checks.
 */
import { create, insertMultiple, search as oramaSearch, type AnyOrama } from '@orama/orama';
import MiniSearch from 'minisearch';
import type { BenchQuery, Corpus } from './data.js';

export const K = 10;

/** A system under test: built once per corpus, then asked every query. Answers are ids, best first. */
export interface System {
  name: string;
  search(query: BenchQuery): string[] | Promise<string[]>;
}

/** Cosine top-k by brute force over an array of vectors with a full sort: slow on purpose, exact by construction. */
export class NaiveVectors implements System {
  readonly name = 'naive (full sort)';
  private readonly rows: Float32Array[];

  constructor(private readonly corpus: Corpus) {
    const { n, dim, vectors } = corpus;
    this.rows = Array.from({ length: n }, (_, i) => vectors.slice(i * dim, (i + 1) * dim));
  }

  ranked(query: Float32Array, k = K): { id: string; score: number }[] {
    const scored = this.rows.map((row, i) => {
      let dot = 0;
      for (let d = 0; d < row.length; d++) dot += query[d]! * row[d]!;
      return { id: this.corpus.ids[i]!, score: dot };
    });
    scored.sort((a, b) => b.score - a.score);
    return scored.slice(0, k);
  }

  search(query: BenchQuery): string[] {
    return this.ranked(query.vector).map((r) => r.id);
  }
}

export function buildMiniSearch(corpus: Corpus): System {
  const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], storeFields: [] });
  index.addAll(corpus.texts.map((text, i) => ({ id: corpus.ids[i]!, text })));
  return {
    name: 'MiniSearch',
    search: (query) => index.search(query.text).slice(0, K).map((r) => r.id as string),
  };
}

/**
 * Orama hybrid search (its own full-text BM25 + its brute-force vector scan, min-max fused).
 * Orama returns every vector above a similarity threshold; we hand it, per query, the exact 10th-best cosine
 * from the naive reference, the most favourable threshold there is (its vector leg then keeps about 10 hits),
 * so the ratio against it is conservative.
 */
export async function buildOrama(corpus: Corpus, thresholds: Map<string, number>): Promise<System & { db: AnyOrama }> {
  const { dim, n, vectors } = corpus;
  const db: AnyOrama = create({
    schema: { text: 'string', createdAt: 'number', embedding: `vector[${dim}]` } as const,
  });
  const batch = 2000;
  for (let start = 0; start < n; start += batch) {
    const docs = [];
    for (let i = start; i < Math.min(n, start + batch); i++) {
      docs.push({ id: corpus.ids[i]!, text: corpus.texts[i]!, createdAt: corpus.createdAt[i]!, embedding: Array.from(vectors.subarray(i * dim, (i + 1) * dim)) });
    }
    await insertMultiple(db, docs, batch);
  }
  return {
    name: 'Orama hybrid',
    db,
    async search(query) {
      const result = await oramaSearch(db, {
        mode: 'hybrid',
        term: query.text,
        vector: { value: Array.from(query.vector), property: 'embedding' },
        similarity: thresholds.get(query.name) ?? 0.8,
        limit: K,
      } as never);
      return (result as { hits: { id: string }[] }).hits.map((hit) => hit.id);
    },
  };
}

/** Orama's threshold per query: just below the exact 10th-best cosine. */
export function oramaThresholds(naive: NaiveVectors, queries: readonly BenchQuery[]): Map<string, number> {
  return new Map(queries.map((q) => [q.name, (naive.ranked(q.vector, K).at(-1)?.score ?? 0) - 1e-6]));
}
