/// <reference lib="webworker" />
/**
 * Store-level parts of the learning bench, in a dedicated worker (where OPFS sync handles exist): seeding a database
 * with ids as `add` makes them, its size at rest, and the bookkeeping write timed alone. Driven by
 * bench/worker/learning-page.ts; the database's Memory must be closed meanwhile.
 */
import * as Comlink from 'comlink';
import { createEmbedder } from '../../src/embedder/index.js';
import { AssociationGraph } from '../../src/engine/associations.js';
import { newId } from '../../src/util/ids.js';
import { defaultLearningOptions, reinforced } from '../../src/search/reinforce.js';
import type { StoreWrite } from '../../src/store/store.js';
import type { MemoryRecord } from '../../src/types.js';
import { openSqliteStore } from '../../src/store/browser/browser-store.js';

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Hits of one search, best first (all direct: the batches are searched with associations off). */
export type SearchHits = string[];
/** The searches between two bookkeeping writes. */
export type Batch = SearchHits[];

const api = {
  /**
   * A new database of `texts` with real built-in-model vectors, through the store (the engine's per-memory
   * supersede check makes `add` slow at 100k). Ids are UUID v7 as `add` makes them: an association row holds two.
   */
  async seed(name: string, texts: string[], createdAt: number[], batch: number) {
    const embedder = await createEmbedder();
    const vectorSpace = embedder.vectorSpace ?? embedder.id;
    const store = await openSqliteStore({ name, backend: 'opfs' });
    if ((await store.count()) !== 0) throw new Error(`bench: ${name} is not new`);
    let embedMs = 0;
    let writeMs = 0;
    for (let s = 0; s < texts.length; s += batch) {
      const slice = texts.slice(s, s + batch);
      let t = performance.now();
      const vectors = await embedder.embed(slice);
      embedMs += performance.now() - t;
      const data = new Float32Array(slice.length * embedder.dim);
      vectors.forEach((v, i) => data.set(v, i * embedder.dim));
      const put: MemoryRecord[] = slice.map((text, j) => ({ id: newId(), text, createdAt: createdAt[s + j] ?? 0, priority: 1, pinned: false, tags: [], accessCount: 0 }));
      t = performance.now();
      await store.write({ put, vectors: { vectorSpace, dim: embedder.dim, ids: put.map((r) => r.id), data } });
      writeMs += performance.now() - t;
    }
    await store.close();
    await embedder.dispose();
    return { embedder: embedder.id, seeded: texts.length, embedPerSec: texts.length / (embedMs / 1000), writePerSec: texts.length / (writeMs / 1000) };
  },

  /** SQLite's own size of `name` (page count × page size, whatever of it sits in the WAL), its free pages, its rows. */
  async size(name: string) {
    const store = await openSqliteStore({ name, backend: 'opfs' });
    try {
      const { bytes, freeBytes } = await store.sizeOnDisk();
      const associations = (await store.loadAssociations()).length;
      return { bytes, freeBytes, associations, memories: await store.count() };
    } finally {
      await store.close();
    }
  },

  /**
   * The pages the associations take (their table and its index): every association is removed through the store
   * (one write, as a removal's cleanup does) and the pages that frees are counted. Destroys them: call last.
   */
  async associationBytes(name: string) {
    const store = await openSqliteStore({ name, backend: 'opfs' });
    try {
      const before = await store.sizeOnDisk();
      const edges = await store.loadAssociations();
      await store.write({ associations: { remove: edges.map((e) => [e.a, e.b] as [string, string]) } });
      const after = await store.sizeOnDisk();
      if ((await store.loadAssociations()).length !== 0) throw new Error('bench: associations left after removing them all');
      return { associations: edges.length, bytes: after.freeBytes - before.freeBytes, perAssociation: (after.freeBytes - before.freeBytes) / edges.length };
    } finally {
      await store.close();
    }
  },

  /**
   * The write the engine's TouchWriter makes after each batch of searches, made here alone and timed: 'touch' puts
   * the hits' records with an access counted (what bookkeeping wrote before learning); 'reinforce' puts them
   * reinforced (search/reinforce.ts) with every association their searches strengthened (engine/associations.ts,
   * loaded from the store as the engine loads it), in one write as TouchWriter.flush makes it. Each batch is used
   * once, its kind alternating, so every reinforce write inserts new pairs as the real one does. The first batch
   * only warms the connection's page cache.
   */
  async timeWrites(name: string, batches: Batch[]) {
    const store = await openSqliteStore({ name, backend: 'opfs' });
    const { associationStep: step, associationDecayDays: decayDays, maxAssociations: maxPerMemory } = defaultLearningOptions;
    const graph = new AssociationGraph({ step, decayDays, maxPerMemory });
    graph.load(await store.loadAssociations());
    const now = Date.now();
    const timed: { kind: 'touch' | 'reinforce'; records: number; edges: number; ms: number }[] = [];
    try {
      for (const [b, batch] of batches.entries()) {
        const kind = b % 2 === 1 ? 'touch' : 'reinforce';
        const ids = [...new Set(batch.flat())];
        const records = await store.loadRecordsByIds(ids);
        let write: StoreWrite;
        if (kind === 'touch') {
          write = { put: records.map((r) => ({ ...r, accessCount: r.accessCount + 1, lastAccessedAt: now })) };
        } else {
          const keys = new Set(batch.flatMap((hits) => graph.strengthen(hits, now)));
          write = { put: records.map((r) => reinforced(r, false, now, 'bench', defaultLearningOptions)), associations: graph.asWrite(keys) };
        }
        const t = performance.now();
        await store.write(write);
        const ms = performance.now() - t;
        if (b > 0) timed.push({ kind, records: write.put?.length ?? 0, edges: (write.associations?.put?.length ?? 0) + (write.associations?.remove?.length ?? 0), ms });
      }
    } finally {
      await store.close();
    }
    const of = (kind: 'touch' | 'reinforce') => {
      const runs = timed.filter((x) => x.kind === kind);
      return { records: median(runs.map((x) => x.records)), edges: median(runs.map((x) => x.edges)), ms: median(runs.map((x) => x.ms)), runs: runs.map((x) => x.ms) };
    };
    return { touch: of('touch'), reinforce: of('reinforce') };
  },
};

export type LearningStore = typeof api;
Comlink.expose(api);
