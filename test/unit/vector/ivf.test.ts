import { describe, expect, it } from 'vitest';
import { exactRowsAbove } from '../../../src/vector/exact-scan.js';
import { IvfScan, type IvfScanOptions } from '../../../src/vector/ivf.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import { clustered, exactTop, foundAmong, randomSource, uniform } from '../helpers/vectors.js';

/** Mean recall@k of `index` against the exact top k, checking each returned score is the exact cosine. */
function recallOf(index: VectorIndex, vectors: Map<string, Float32Array>, queries: Float32Array[], k = 10): number {
  return queries.reduce((found, query) => found + foundAmong(vectors, query, index.search(query, k), k), 0) / (queries.length * k);
}

function built(vectors: Float32Array[], dim: number, options: IvfScanOptions = {}) {
  const scan = new IvfScan({ ivfMinRows: 5_000, ...options });
  const index = new VectorIndex(dim, scan, vectors.length);
  const byId = new Map<string, Float32Array>(vectors.map((v, i) => [`m${i}`, v]));
  index.setMany([...byId.keys()], vectors);
  return { scan, index, byId };
}

describe('IvfScan', () => {
  it('answers clustered vectors from the lists with recall@10 ≥ 0.98, probing a small share', async () => {
    const dim = 128;
    const { scan, index, byId } = built(clustered(1, 20_000, dim), dim);
    expect(scan.status().answering).toBe('scan');
    expect(scan.status().building).toBe(true);
    await scan.idle();
    const status = scan.status();
    expect(status.answering).toBe('lists');
    expect(status.lists).toBe(Math.round(Math.sqrt(20_000) * 4));
    expect(status.share).toBeLessThan(0.2);
    expect(recallOf(index, byId, clustered(2, 60, dim))).toBeGreaterThanOrEqual(0.98);
  }, 60_000);

  it('leaves uniform vectors to the exact int8 scan (the lists would probe nearly everything), and its share still holds recall when forced', async () => {
    const dim = 64;
    const vectors = uniform(3, 20_000, dim);
    const { scan, index, byId } = built(vectors, dim);
    await scan.idle();
    expect(scan.status().share).toBeGreaterThan(0.35);
    expect(scan.status().answering).toBe('scan');
    const queries = uniform(4, 60, dim);
    expect(recallOf(index, byId, queries)).toBe(1);
    // Allowed to answer at any share, the lists probe what calibration measured, and that holds recall.
    const forced = built(vectors, dim, { maxShare: 1 });
    await forced.scan.idle();
    expect(forced.scan.status().answering).toBe('lists');
    expect(recallOf(forced.index, forced.byId, queries)).toBeGreaterThanOrEqual(0.98);
  }, 60_000);

  it('follows adds, updates and removes after the build, and while it runs', async () => {
    const dim = 64;
    const vectors = clustered(5, 20_000, dim, 60);
    const { scan, index, byId } = built(vectors, dim);
    const { random } = randomSource(11);
    const extra = clustered(6, 6_000, dim, 60);
    let next = 0;
    const churn = (count: number) => {
      for (let i = 0; i < count; i++) {
        const roll = random();
        const ids = [...byId.keys()];
        if (roll < 0.4) {
          const id = `n${next}`;
          const v = extra[next++ % extra.length]!;
          index.set(id, v);
          byId.set(id, v);
        } else if (roll < 0.7) {
          const id = ids[Math.floor(random() * ids.length)]!;
          const v = extra[Math.floor(random() * extra.length)]!;
          index.set(id, v);
          byId.set(id, v);
        } else {
          const id = ids[Math.floor(random() * ids.length)]!;
          expect(index.remove(id)).toBe(true);
          byId.delete(id);
        }
      }
    };
    // While the build runs: its catch-up must place every row changed meanwhile.
    churn(1_500);
    await scan.idle();
    expect(scan.status().answering).toBe('lists');
    churn(3_000);
    expect(index.size).toBe(byId.size);
    expect(recallOf(index, byId, clustered(7, 100, dim, 60))).toBeGreaterThanOrEqual(0.98);
  }, 60_000);

  it('retrains once as many rows changed as it was trained on, answering meanwhile', async () => {
    const dim = 32;
    const { scan, index, byId } = built(clustered(8, 8_000, dim, 40), dim);
    await scan.idle();
    expect(scan.status().trainedRows).toBe(8_000);
    const more = clustered(9, 9_000, dim, 40);
    index.setMany(more.map((_, i) => `x${i}`), more);
    more.forEach((v, i) => byId.set(`x${i}`, v));
    expect(scan.status().building).toBe(true);
    expect(recallOf(index, byId, clustered(10, 40, dim, 40))).toBeGreaterThanOrEqual(0.98);
    await scan.idle();
    expect(scan.status().trainedRows).toBe(17_000);
    expect(recallOf(index, byId, clustered(11, 60, dim, 40))).toBeGreaterThanOrEqual(0.98);
  }, 60_000);

  it('keeps rowsAbove exact, and lists empty after clear', async () => {
    const dim = 48;
    const vectors = clustered(12, 6_000, dim, 30);
    const { scan, index } = built(vectors, dim);
    await scan.idle();
    const queries = clustered(13, 20, dim, 30);
    expect(scan.rowsAbove(index, queries, 0.8, 5)).toEqual(exactRowsAbove(index, queries, 0.8, 5));
    index.clear();
    expect(index.search(queries[0]!, 10)).toEqual([]);
    expect(scan.status().answering).toBe('scan');
  }, 60_000);

  it('filters with eligible, falling back to every row when the lists hold fewer than k eligible rows', async () => {
    const dim = 64;
    const { scan, index, byId } = built(clustered(14, 10_000, dim, 50), dim);
    await scan.idle();
    expect(scan.status().answering).toBe('lists');
    const keep = new Set([...byId.keys()].filter((_, i) => i % 997 === 0));
    const query = clustered(15, 1, dim, 50)[0]!;
    const hits = index.search(query, 10, (id) => keep.has(id));
    const only = new Map([...byId].filter(([id]) => keep.has(id)));
    expect(hits.map((h) => h.id)).toEqual(exactTop(only, query, 10).map((h) => h.id));
  }, 60_000);
});

describe('IvfScan saved form', () => {
  it('hands the centroids of a trained build to onBuilt; a new scan restores them instead of training', async () => {
    const dim = 64;
    const vectors = clustered(16, 8_000, dim, 40);
    const saved: Uint8Array[] = [];
    const first = new IvfScan({ ivfMinRows: 5_000 });
    first.onBuilt((form) => saved.push(form));
    const index = new VectorIndex(dim, first, vectors.length);
    index.setMany(vectors.map((_, i) => `m${i}`), vectors);
    await first.idle();
    expect(saved).toHaveLength(1);
    // A restored scan on more rows keeps the saved centroids (trained on 8,000) and does not save them again.
    const more = [...vectors, ...clustered(17, 1_000, dim, 40)];
    const again: Uint8Array[] = [];
    const second = new IvfScan({ ivfMinRows: 5_000 });
    second.onBuilt((form) => again.push(form));
    expect(second.restore(saved[0]!)).toBe(true);
    const restored = new VectorIndex(dim, second, more.length);
    const byId = new Map<string, Float32Array>(more.map((v, i) => [`m${i}`, v]));
    restored.setMany([...byId.keys()], more);
    await second.idle();
    expect(second.status()).toMatchObject({ answering: 'lists', trainedRows: 8_000, lists: first.status().lists });
    expect(again).toHaveLength(0);
    expect(recallOf(restored, byId, clustered(18, 40, dim, 40))).toBeGreaterThanOrEqual(0.98);
  }, 60_000);

  it('refuses a corrupt form, another version, or bytes that are no form; a form of another dimension trains anew', async () => {
    const dim = 32;
    const vectors = clustered(19, 6_000, dim, 30);
    const saved: Uint8Array[] = [];
    const scan = new IvfScan({ ivfMinRows: 5_000 });
    scan.onBuilt((form) => saved.push(form));
    new VectorIndex(dim, scan, vectors.length).setMany(vectors.map((_, i) => `m${i}`), vectors);
    await scan.idle();
    const form = saved[0]!;
    const corrupt = form.slice();
    corrupt[corrupt.length - 3]! ^= 0x40;
    const otherVersion = form.slice();
    otherVersion[4] = 2;
    const fresh = new IvfScan();
    expect(fresh.restore(corrupt)).toBe(false);
    expect(fresh.restore(otherVersion)).toBe(false);
    expect(fresh.restore(new Uint8Array(10))).toBe(false);
    expect(fresh.restore(form.subarray(0, form.length - 4))).toBe(false);
    // Restored at dim 32, the scan of a 48-d index trains: its centroids are of the rows it sees.
    const other = new IvfScan({ ivfMinRows: 5_000 });
    const retrained: Uint8Array[] = [];
    other.onBuilt((f) => retrained.push(f));
    expect(other.restore(form)).toBe(true);
    const wide = clustered(20, 6_000, 48, 30);
    new VectorIndex(48, other, wide.length).setMany(wide.map((_, i) => `w${i}`), wide);
    await other.idle();
    expect(retrained).toHaveLength(1);
    expect(other.status().trainedRows).toBe(6_000);
  }, 60_000);
});
