/// <reference lib="webworker" />
import * as Comlink from 'comlink';
import { createEngine } from '../../../src/index.js';
import type { Embedder } from '../../../src/types.js';
import { openSqliteStore } from '../../../src/store/browser/browser-store.js';

const WORDS = 'river stone garden lamp violin harbor pepper winter ticket cobalt meadow falcon quartz ember saddle orbit velvet'.split(' ');

/** A bag-of-words embedder (hashed words), the same in every worker. */
function embedder(dim: number): Embedder {
  const hash = (word: string) => [...word].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261);
  return {
    id: `bow-${dim}`,
    dim,
    async embed(texts) {
      return texts.map((text) => {
        const v = new Float32Array(dim);
        for (const word of text.split(' ')) v[hash(word) % dim] = (v[hash(word) % dim] ?? 0) + 1;
        return v;
      });
    },
  };
}

function texts(n: number, seed: number): string[] {
  let state = seed;
  const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  return Array.from({ length: n }, () => Array.from({ length: 5 + Math.floor(random() * 6) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' '));
}

type Hits = [string, number][];
/** A fixed clock: time decay would otherwise differ between the two reopened engines. */
const NOW = 1_800_000_000_000;

async function searchAll(vectorMemory: 'float32' | 'compact', name: string, queries: string[]): Promise<{ hits: Hits[]; count: number }> {
  const store = await openSqliteStore({ name, backend: 'opfs' });
  const engine = await createEngine({ store, embedder: embedder(48), vectorMemory, supersedeThreshold: false, clock: () => NOW });
  const hits: Hits[] = [];
  for (const query of queries) {
    const result = await engine.search(query, { mode: 'vector', touch: false });
    hits.push(result.hits.map((h) => [h.id, h.score]));
  }
  const count = await engine.count();
  await engine.close();
  return { hits, count };
}

const lab = {
  /**
   * Writes n memories with a compact engine, closes it, then reopens the database compact and float32: both must
   * answer the same (ids and exact scores).
   */
  async reloadRoundTrip(n: number): Promise<{ compact: Hits[]; float: Hits[]; count: number }> {
    const name = `compact-${Date.now()}`;
    const store = await openSqliteStore({ name, backend: 'opfs' });
    const engine = await createEngine({ store, embedder: embedder(48), vectorMemory: 'compact', supersedeThreshold: false, clock: () => NOW });
    const all = texts(n, 7);
    for (let start = 0; start < n; start += 500) await engine.add(all.slice(start, start + 500).map((text, i) => ({ id: `m${start + i}`, text })));
    await engine.close();
    const queries = texts(10, 99);
    const compact = await searchAll('compact', name, queries);
    const float = await searchAll('float32', name, queries);
    return { compact: compact.hits, float: float.hits, count: compact.count };
  },
};

export type CompactLab = typeof lab;
Comlink.expose(lab);
