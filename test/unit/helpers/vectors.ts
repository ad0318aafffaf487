import { expect } from 'vitest';
import { IvfScan, type IvfIndex, type IvfScanOptions, type IvfSource, type ListedRows } from '../../../src/vector/ivf.js';
import { QuantizedScan, type QuantizedScanOptions } from '../../../src/vector/quantized-scan.js';
import { normalize } from '../../../src/vector/similarity.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';

/** A seeded uniform source in [0, 1) and a standard normal one drawn from it: test data that is the same every run. */
export function randomSource(seed: number): { random: () => number; gauss: () => number } {
  let state = seed >>> 0 || 1;
  const random = () => ((state = Math.imul(state ^ (state >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return { random, gauss };
}

/** The naive int8 dot product of row `row` (stored after the query, which takes the first `stride` bytes) with the query. */
export function int8RowDot(bytes: Int8Array, stride: number, row: number): number {
  let dot = 0;
  for (let j = 0; j < stride; j++) dot += bytes[stride + row * stride + j]! * bytes[j]!;
  return dot;
}

/** The same vectors (ids m0, m1, …) in an exact int8 index and in one with the given scan options. */
export function exactAndScanned(dim: number, vectors: Float32Array[], options: QuantizedScanOptions): { exact: VectorIndex; scanned: VectorIndex } {
  const ids = vectors.map((_, i) => `m${i}`);
  const exact = new VectorIndex(dim, new QuantizedScan({ prefilterMinRows: false }));
  const scanned = new VectorIndex(dim, new QuantizedScan(options));
  exact.setMany(ids, vectors);
  scanned.setMany(ids, vectors);
  return { exact, scanned };
}

/** Unit vectors, uniform on the sphere. */
export function uniform(seed: number, n: number, dim: number): Float32Array[] {
  const { gauss } = randomSource(seed);
  return Array.from({ length: n }, () => normalize(Float32Array.from({ length: dim }, gauss)));
}

/** Unit vectors around `clusters` random centres (cosine to the centre about 0.7), the same centres for every seed. */
export function clustered(seed: number, n: number, dim: number, clusters = 100): Float32Array[] {
  const centres = uniform(7, clusters, dim);
  const { random, gauss } = randomSource(seed);
  const spread = 1 / Math.sqrt(dim);
  return Array.from({ length: n }, () => {
    const centre = centres[Math.floor(random() * clusters)]!;
    return normalize(Float32Array.from(centre, (c) => c + spread * gauss()));
  });
}

/** The exact top k of `query` over `vectors` (by id), as the exact scan orders it. */
export function exactTop(vectors: Map<string, Float32Array>, query: Float32Array, k: number): { id: string; score: number }[] {
  const unit = normalize(query);
  const scored = [...vectors].map(([id, v]) => {
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    let i = 0;
    for (; i + 3 < v.length; i += 4) {
      a0 += unit[i]! * v[i]!;
      a1 += unit[i + 1]! * v[i + 1]!;
      a2 += unit[i + 2]! * v[i + 2]!;
      a3 += unit[i + 3]! * v[i + 3]!;
    }
    for (; i < v.length; i++) a0 += unit[i]! * v[i]!;
    return { id, score: a0 + a1 + a2 + a3 };
  });
  return scored.sort((a, b) => b.score - a.score).slice(0, k);
}

/**
 * How many of the exact top k of `query` are among `hits` (a search's answer), checking that the answer is k long
 * (or every vector) and that each score is the exact cosine of a stored vector.
 */
export function foundAmong(vectors: Map<string, Float32Array>, query: Float32Array, hits: { id: string; score: number }[], k: number): number {
  expect(hits).toHaveLength(Math.min(k, vectors.size));
  const unit = normalize(query);
  for (const hit of hits) {
    const stored = vectors.get(hit.id);
    expect(stored, `returned ${hit.id}, which is not stored`).toBeDefined();
    let score = 0;
    for (let d = 0; d < unit.length; d++) score += unit[d]! * stored![d]!;
    expect(hit.score).toBeCloseTo(score, 5);
  }
  const ids = new Set(hits.map((h) => h.id));
  return exactTop(vectors, query, k).filter((t) => ids.has(t.id)).length;
}

/** An IVF scan that hands each compact index's lists to `made` as it makes them, so a test can read their status. */
export class ListsWatchingScan extends IvfScan {
  constructor(
    private readonly made: IvfIndex<ListedRows>[],
    options?: IvfScanOptions,
  ) {
    super(options);
  }

  override compactLists<S extends ListedRows>(source: IvfSource<S>): IvfIndex<S> {
    const lists = super.compactLists(source);
    this.made.push(lists as unknown as IvfIndex<ListedRows>);
    return lists;
  }
}
