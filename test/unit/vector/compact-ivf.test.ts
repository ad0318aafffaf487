import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../../src/store/memory-store.js';
import { IvfScan, type IvfScanOptions } from '../../../src/vector/ivf.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import { runs } from '../helpers/tier.js';
import { clustered, foundAmong, uniform } from '../helpers/vectors.js';

const SPACE = 'e';

/** A compact index (codes only) over a memory store holding the floats, with an IVF scan from 5,000 rows. */
function compactIndex(dim: number, options: IvfScanOptions = {}) {
  const store = memoryStore();
  const stored = new Map<string, Float32Array>();
  let reads = 0;
  const scan = new IvfScan({ ivfMinRows: 5_000, ...options });
  const index = new VectorIndex(dim, scan, 64, {
    from: 0,
    fetch: (ids) => {
      reads += ids.length;
      return store.loadVectorsByIds!(SPACE, dim, ids);
    },
  });
  const put = async (ids: string[], vectors: Float32Array[]) => {
    const data = new Float32Array(ids.length * dim);
    vectors.forEach((v, i) => data.set(v, i * dim));
    await store.write({ vectors: { vectorSpace: SPACE, dim, ids, data } });
    ids.forEach((id, i) => stored.set(id, vectors[i]!));
    index.setMany(ids, vectors);
  };
  const remove = async (id: string) => {
    await store.write({ remove: [id] });
    stored.delete(id);
    index.remove(id);
  };
  return { index, stored, put, remove, reads: () => reads, resetReads: () => (reads = 0) };
}

/** Mean recall@k against the exact top k; every score returned must be the exact cosine of a stored vector. */
async function recallOf(index: VectorIndex, stored: Map<string, Float32Array>, queries: Float32Array[], k = 10): Promise<number> {
  let found = 0;
  for (const query of queries) found += foundAmong(stored, query, await index.searchAsync(query, k), k);
  return found / (queries.length * k);
}

const ids = (from: number, n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${from + i}`);

describe('IVF over a compact index (int8 codes, floats read from the store)', () => {
  it('answers clustered vectors from the lists with recall@10 ≥ 0.98, reading only the rows it rescores', async () => {
    const dim = 64;
    const { index, stored, put, reads, resetReads } = compactIndex(dim);
    const vectors = clustered(1, 10_000, dim);
    await put(ids(0, vectors.length), vectors);
    expect(index.listStatus()).toMatchObject({ answering: 'scan', building: false, lists: 0 });
    index.warm();
    await index.listsIdle();
    const status = index.listStatus()!;
    expect(status.answering).toBe('lists');
    expect(status.share).toBeLessThan(0.35);
    resetReads();
    const queries = clustered(2, 50, dim);
    expect(await recallOf(index, stored, queries)).toBeGreaterThanOrEqual(0.98);
    // Rescoring reads the k best of the probed lists and the rows their bound cannot rule out, not the index.
    expect(reads() / queries.length).toBeLessThan(500);
    // Queries unlike every stored row (far from every centroid) are answered by every row: exact.
    expect(await recallOf(index, stored, uniform(12, 20, dim))).toBe(1);
  }, 60_000);

  it('leaves uniform vectors to an exact plan over every row (the lists would probe nearly all): recall 1', async () => {
    const dim = 64;
    const { index, stored, put } = compactIndex(dim);
    const vectors = uniform(3, 6_000, dim);
    await put(ids(0, vectors.length), vectors);
    index.warm();
    await index.listsIdle();
    const status = index.listStatus()!;
    expect(status.share).toBeGreaterThan(0.35);
    expect(status.answering).toBe('scan');
    expect(await recallOf(index, stored, uniform(4, 30, dim))).toBe(1);
  }, 60_000);

  it('follows adds, updates and removes after the build: never a removed row, exact scores, recall held', async () => {
    const dim = 48;
    const { index, stored, put, remove } = compactIndex(dim);
    const vectors = clustered(5, 8_000, dim, 60);
    await put(ids(0, vectors.length), vectors);
    index.warm();
    await index.listsIdle();
    expect(index.listStatus()!.answering).toBe('lists');
    let next = 0;
    // Every written vector from a seed of its own: one seed twice (fast-check favours small ones) gives two ids the
    // same vector, and then either may be the top hit for it.
    let fresh = 1_000_000;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.record({ add: fc.integer({ min: 1, max: 40 }) }), fc.record({ update: fc.integer({ min: 0, max: 7_999 }) }), fc.record({ remove: fc.integer({ min: 0, max: 7_999 }) })), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 0xffff }),
        async (ops, seed) => {
          for (const op of ops) {
            if ('add' in op) {
              const added = clustered(fresh++, op.add, dim, 60);
              await put(ids(next, added.length, 'n'), added);
              next += added.length;
            } else if ('update' in op) {
              if (stored.has(`m${op.update}`)) await put([`m${op.update}`], clustered(fresh++, 1, dim, 60));
            } else await remove(`m${op.remove}`);
          }
          const query = clustered(seed + 1, 1, dim, 60)[0]!;
          const hits = await index.searchAsync(query, 10);
          for (const hit of hits) expect(stored.has(hit.id)).toBe(true);
          // A memory just written is found by its own vector.
          const last = [...stored.keys()].at(-1)!;
          expect((await index.searchAsync(stored.get(last)!, 1))[0]?.id).toBe(last);
        },
      ),
      { numRuns: runs(20) },
    );
    expect(index.listStatus()!.answering).toBe('lists');
    expect(await recallOf(index, stored, clustered(6, 40, dim, 60))).toBeGreaterThanOrEqual(0.98);
  }, 120_000);

  it('saves the centroids of a trained build; a new compact index restores them, and refuses a form of another version, training while it answers', async () => {
    const dim = 32;
    const vectors = clustered(7, 7_000, dim, 50);
    const first = compactIndex(dim);
    const saved: Uint8Array[] = [];
    first.index.onScanBuilt((form) => saved.push(form));
    await first.put(ids(0, vectors.length), vectors);
    first.index.warm();
    await first.index.listsIdle();
    expect(saved).toHaveLength(1);
    const trained = first.index.listStatus()!;

    const second = compactIndex(dim);
    const again: Uint8Array[] = [];
    expect(second.index.restoreScan(saved[0]!)).toBe(true);
    second.index.onScanBuilt((form) => again.push(form));
    await second.put(ids(0, vectors.length), vectors);
    second.index.warm();
    await second.index.listsIdle();
    expect(second.index.listStatus()).toMatchObject({ answering: 'lists', lists: trained.lists, trainedRows: trained.trainedRows });
    expect(again).toHaveLength(0);
    expect(await recallOf(second.index, second.stored, clustered(8, 30, dim, 50))).toBeGreaterThanOrEqual(0.98);

    const other = saved[0]!.slice();
    other[4] = 99; // the version word
    const third = compactIndex(dim);
    const retrained: Uint8Array[] = [];
    expect(third.index.restoreScan(other)).toBe(false);
    third.index.onScanBuilt((form) => retrained.push(form));
    await third.put(ids(0, vectors.length), vectors);
    third.index.warm();
    expect(third.index.listStatus()!.building).toBe(true);
    // Searches answer while the lists are trained again.
    expect(await recallOf(third.index, third.stored, clustered(9, 10, dim, 50))).toBeGreaterThanOrEqual(0.9);
    await third.index.listsIdle();
    expect(retrained).toHaveLength(1);
    expect(third.index.listStatus()!.answering).toBe('lists');
  }, 120_000);

  it('a float32 index turning compact hands its trained centroids to the lists over the codes', async () => {
    const dim = 32;
    const store = memoryStore();
    const scan = new IvfScan({ ivfMinRows: 5_000 });
    const index = new VectorIndex(dim, scan, 64, { from: 7_000, fetch: (wanted) => store.loadVectorsByIds!(SPACE, dim, wanted) });
    const saved: Uint8Array[] = [];
    index.onScanBuilt((form) => saved.push(form));
    index.warm();
    const vectors = clustered(10, 7_500, dim, 50);
    const data = new Float32Array(vectors.length * dim);
    vectors.forEach((v, i) => data.set(v, i * dim));
    await store.write({ vectors: { vectorSpace: SPACE, dim, ids: ids(0, vectors.length), data } });
    index.setMany(ids(0, 6_000), vectors.slice(0, 6_000));
    await scan.idle();
    expect(saved).toHaveLength(1);
    index.setMany(ids(6_000, 1_500), vectors.slice(6_000));
    expect(index.isCompact).toBe(true);
    await index.listsIdle();
    expect(index.listStatus()).toMatchObject({ answering: 'lists', trainedRows: 6_000 });
    expect(saved).toHaveLength(1);
  }, 60_000);
});
