import { QuantizedScan, type QuantizedScanOptions } from '../../../src/vector/quantized-scan.js';
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
