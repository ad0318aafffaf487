/**
 * The in-memory Store: the default for Node and tests, and the reference behaviour for the spec in
 * test/spec/store-spec.ts. Writes are validated in full before anything changes, then applied in one
 * synchronous step, so a write is atomic. Everything is copied in and out: callers never share state.
 */
import { EngramError, ErrorCode } from '../errors.js';
import { changesIndexed } from './change-counter.js';
import { checkPackedVectors } from './packed-vectors.js';
import { checkAssociations, checkLinks, edgeKey, linkKey } from './graph-rows.js';
import type { AssociationEdge, PackedVectors, Store, StoreWrite } from './store.js';
import { summarize } from './summary.js';
import type { Link, MemoryRecord } from '../types.js';

/** Rows per chunk of loadVectorChunks. */
const VECTOR_CHUNK = 10_000;

/** The stored vectors of one vector space. */
interface SpaceVectors {
  dim: number;
  rows: Map<string, Float32Array>;
}

/**
 * A store in memory, lost on exit: the engine's default. It passes the same spec as the SQLite stores (test/spec).
 *
 * @example
 * ```ts
 * const store = memoryStore();
 * const engine = await createEngine({ store }); // engine.close() closes the store
 * ```
 */
export function memoryStore(): Store {
  const records = new Map<string, MemoryRecord>();
  const vectors = new Map<string, SpaceVectors>();
  const meta = new Map<string, string | Uint8Array>();
  const associations = new Map<string, AssociationEdge>();
  const links = new Map<string, Link>();
  let counter = 0;
  let vectorCounter = 0;
  let closed = false;

  const requireOpen = () => {
    if (closed) throw new EngramError(ErrorCode.CLOSED, 'the memory store is closed');
  };

  return {
    kind: 'memory',
    persistent: false,

    async loadRecords() {
      requireOpen();
      return [...records.values()].map((r) => structuredClone(r));
    },

    async loadRecordSummaries() {
      requireOpen();
      return [...records.values()].map((r) => structuredClone(summarize(r)));
    },

    async loadRecordsByIds(ids) {
      requireOpen();
      return [...new Set(ids)].flatMap((id) => {
        const record = records.get(id);
        return record ? [structuredClone(record)] : [];
      });
    },

    async loadAssociations() {
      requireOpen();
      return [...associations.values()].map((edge) => ({ ...edge }));
    },

    async loadLinks() {
      requireOpen();
      return [...links.values()].map((link) => ({ ...link }));
    },

    async loadVectors(vectorSpace, dim) {
      requireOpen();
      const stored = vectors.get(vectorSpace);
      const ids = stored && stored.dim === dim ? [...stored.rows.keys()] : [];
      return { vectorSpace, dim, ids, data: packRows(stored, ids, dim) };
    },

    async loadVectorsByIds(vectorSpace, dim, wanted) {
      requireOpen();
      const stored = vectors.get(vectorSpace);
      const ids = stored && stored.dim === dim ? [...new Set(wanted)].filter((id) => stored.rows.has(id)) : [];
      return { vectorSpace, dim, ids, data: packRows(stored, ids, dim) };
    },

    async loadVectorChunks(vectorSpace, dim, onChunk) {
      requireOpen();
      const stored = vectors.get(vectorSpace);
      const all = stored && stored.dim === dim ? [...stored.rows.keys()] : [];
      for (let start = 0; start < all.length; start += VECTOR_CHUNK) {
        const ids = all.slice(start, start + VECTOR_CHUNK);
        onChunk({ vectorSpace, dim, ids, data: packRows(stored, ids, dim) });
      }
    },

    async write(change: StoreWrite) {
      requireOpen();
      // Validate and copy everything first: a bad part must leave the store untouched.
      const put = (change.put ?? []).map((r) => {
        if (typeof r?.id !== 'string' || r.id === '') throw new EngramError(ErrorCode.STORE_FAILED, 'a record without an id cannot be stored');
        return structuredClone(r);
      });
      const remove = change.remove ?? [];
      const packed = change.vectors && ownedRows(change.vectors);
      const metaChange = Object.entries(change.meta ?? {}).map(([k, v]) => [k, v instanceof Uint8Array ? v.slice() : v] as const);
      const edgeChange = checkAssociations(change.associations);
      const linkChange = checkLinks(change.links);

      const indexedChange = remove.length > 0 || put.some((r) => changesIndexed(records.get(r.id), r));
      const gone = new Set(remove);
      for (const id of remove) {
        records.delete(id);
        for (const space of vectors.values()) space.rows.delete(id);
      }
      for (const [a, b] of edgeChange.remove) associations.delete(edgeKey(a, b));
      for (const edge of edgeChange.put) associations.set(edgeKey(edge.a, edge.b), { ...edge });
      for (const link of linkChange.remove) links.delete(linkKey(link));
      for (const link of linkChange.put) links.set(linkKey(link), { ...link });
      // After the puts, as SQLite's write does: nothing of a removed memory survives the write.
      if (gone.size > 0) {
        for (const [key, edge] of associations) if (gone.has(edge.a) || gone.has(edge.b)) associations.delete(key);
        for (const [key, link] of links) if (gone.has(link.from) || gone.has(link.to)) links.delete(key);
      }
      for (const record of put) records.set(record.id, record);
      if (packed) {
        let target = vectors.get(packed.vectorSpace);
        if (!target || target.dim !== packed.dim) {
          target = { dim: packed.dim, rows: new Map() };
          vectors.set(packed.vectorSpace, target);
        }
        for (const [id, vector] of packed.rows) target.rows.set(id, vector);
      }
      if (change.keepOnlyVectorSpace !== undefined) {
        for (const vectorSpace of [...vectors.keys()]) if (vectorSpace !== change.keepOnlyVectorSpace) vectors.delete(vectorSpace);
      }
      for (const [key, value] of metaChange) {
        if (value === null) meta.delete(key);
        else meta.set(key, value);
      }
      if (indexedChange) counter++;
      if (remove.length > 0 || packed || change.keepOnlyVectorSpace !== undefined) vectorCounter++;
    },

    async readMeta(key) {
      requireOpen();
      const value = meta.get(key);
      return value instanceof Uint8Array ? value.slice() : (value ?? null);
    },

    async changeCounter() {
      requireOpen();
      return counter;
    },

    async vectorCounter() {
      requireOpen();
      return vectorCounter;
    },

    async count() {
      requireOpen();
      return records.size;
    },

    async close() {
      closed = true;
    },
  };
}

/**
 * Checks a packed block and splits it into owned rows: views of one copy of the block, not a buffer per row (a copy
 * per row was 12% of `add` at 200k, and each buffer one more object for the garbage collector to track).
 */
function ownedRows(vectors: PackedVectors): { vectorSpace: string; dim: number; rows: [string, Float32Array][] } {
  checkPackedVectors(vectors);
  const { vectorSpace, dim, ids } = vectors;
  const data = vectors.data.slice(0, ids.length * dim);
  return { vectorSpace, dim, rows: ids.map((id, i) => [id, data.subarray(i * dim, (i + 1) * dim)]) };
}

/** The vectors of `ids` (all held by `stored`, or none listed), row after row. */
function packRows(stored: SpaceVectors | undefined, ids: readonly string[], dim: number): Float32Array {
  const data = new Float32Array(ids.length * dim);
  ids.forEach((id, i) => data.set(stored?.rows.get(id) as Float32Array, i * dim));
  return data;
}
