/**
 * Store helpers for engine tests: a store whose close() keeps its data, a store that fails on demand, and a full
 * snapshot for "unchanged" checks.
 */
import { memoryStore, type Store } from '../../../src/index.js';

/** `inner` with a close() that keeps its data, so a second engine can open it again (as after a page reload). */
export function reopenable(inner: Store = memoryStore()): Store {
  return { ...inner, close: async () => undefined };
}

export interface FaultyStore extends Store {
  /** When set, the next writes throw this (until cleared). */
  failWrites: Error | null;
  writes: number;
}

export function faultyStore(inner: Store = memoryStore()): FaultyStore {
  const store: FaultyStore = {
    kind: inner.kind,
    persistent: inner.persistent,
    failWrites: null,
    writes: 0,
    loadRecords: () => inner.loadRecords(),
    loadVectors: (id, dim) => inner.loadVectors(id, dim),
    async write(change) {
      if (store.failWrites) throw store.failWrites;
      store.writes++;
      return inner.write(change);
    },
    readMeta: (key) => inner.readMeta(key),
    changeCounter: () => inner.changeCounter(),
    count: () => inner.count(),
    close: () => inner.close(),
  };
  return store;
}

/** Everything a store holds for one embedder, in a comparable form. */
export async function snapshot(store: Store, embedder?: { id: string; dim: number }) {
  const records = (await store.loadRecords()).sort((a, b) => (a.id < b.id ? -1 : 1));
  const vectors = embedder ? await store.loadVectors(embedder.id, embedder.dim) : null;
  return {
    records,
    vectorIds: vectors ? vectors.ids.slice().sort() : [],
    counter: await store.changeCounter(),
  };
}
