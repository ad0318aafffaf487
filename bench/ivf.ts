/**
 * The vector leg alone at size: the IVF index (src/vector/ivf.ts) against the int8 scan with its 1-bit prefilter
 * (the previous default) and the exact int8 scan (the reference: same answers as the exact float32 scan), on
 * synthetic unit vectors, uniform or clustered. Reports p50/p99 per query, recall@10 against the exact scan, and
 * the IVF's build time, with the load average before and after.
 *
 *   npx tsx bench/ivf.ts [--sizes 100000,1000000] [--kinds uniform,clustered] [--dim 384] [--queries 200]
 *
 * Vectors are cached under bench/results/ivf-cache/ (gitignored); results go to bench/results/ivf-<time>.json.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { IvfScan, type IvfScanOptions } from '../src/vector/ivf.js';
import { QuantizedScan } from '../src/vector/quantized-scan.js';
import type { ScoredRow, VectorRows, VectorScan } from '../src/vector/scan.js';
import { prng } from '../src/util/prng.js';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] as string);
const sizes = (args.get('sizes') ?? '100000,1000000').split(',').map(Number);
const kinds = (args.get('kinds') ?? 'uniform,clustered').split(',') as Kind[];
const dim = Number(args.get('dim') ?? 384);
const queryCount = Number(args.get('queries') ?? 200);
const only = args.get('scans')?.split(',');
/** IvfScan options as JSON (for sweeps), e.g. --ivf '{"listsPerRoot":2}'. */
const ivfOptions = JSON.parse(args.get('ivf') ?? '{}') as IvfScanOptions;
const resultsDir = join(import.meta.dirname, 'results');
const cacheDir = join(resultsDir, 'ivf-cache');
const CLUSTERS = 1_000;

type Kind = 'uniform' | 'clustered';

/** Unit vectors: uniform on the sphere, or around CLUSTERS fixed centres (cosine to the centre about 0.7). */
function generate(kind: Kind, n: number, seed: number): Float32Array {
  const random = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const centres = kind === 'clustered' ? generate('uniform', CLUSTERS, 7) : null;
  const spread = 1 / Math.sqrt(dim);
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const at = i * dim;
    const c = centres ? Math.floor(random() * CLUSTERS) * dim : 0;
    let norm = 0;
    for (let d = 0; d < dim; d++) {
      const v = centres ? (centres[c + d] as number) + spread * gauss() : gauss();
      out[at + d] = v;
      norm += v * v;
    }
    const inv = 1 / Math.sqrt(norm);
    for (let d = 0; d < dim; d++) out[at + d] = (out[at + d] as number) * inv;
  }
  return out;
}

function cached(kind: Kind, n: number, seed: number): Float32Array {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, `${kind}-${n}-${dim}-${seed}.f32`);
  if (existsSync(file)) {
    const bytes = readFileSync(file);
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  }
  const data = generate(kind, n, seed);
  writeFileSync(file, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return data;
}

function rowsOf(matrix: Float32Array): VectorRows {
  const size = matrix.length / dim;
  return {
    dim,
    size,
    matrix,
    sumOfRows() {
      const sum = new Float64Array(dim);
      for (let r = 0; r < size; r++) for (let d = 0; d < dim; d++) sum[d] = (sum[d] as number) + (matrix[r * dim + d] as number);
      return sum;
    },
  };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;

function timed(scan: VectorScan, rows: VectorRows, queries: Float32Array): { answers: ScoredRow[][]; p50: number; p99: number; mean: number } {
  const count = queries.length / dim;
  const query = (q: number) => queries.subarray(q * dim, (q + 1) * dim);
  for (let q = 0; q < Math.min(20, count); q++) scan.topK(rows, query(q), 10); // warm-up
  const times: number[] = [];
  const answers: ScoredRow[][] = [];
  for (let q = 0; q < count; q++) {
    const start = performance.now();
    answers.push(scan.topK(rows, query(q), 10));
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { answers, p50: quantile(times, 0.5), p99: quantile(times, 0.99), mean: times.reduce((a, b) => a + b, 0) / count };
}

function recall(answers: ScoredRow[][], truth: ScoredRow[][]): number {
  let found = 0;
  answers.forEach((hits, q) => {
    const rows = new Set(hits.map((h) => h.row));
    found += (truth[q] as ScoredRow[]).filter((t) => rows.has(t.row)).length;
  });
  return found / (truth.length * 10);
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
const results: Record<string, unknown>[] = [];
console.log(`load average ${load()}`);
for (const kind of kinds) {
  for (const n of sizes) {
    const rows = rowsOf(cached(kind, n, 1));
    const queries = cached(kind, queryCount, 2);
    const all = Array.from({ length: n }, (_, r) => r);
    const row: Record<string, unknown> = { kind, n, dim, queries: queryCount, ivfOptions, loadBefore: load() };
    // The reference: the int8 scan without prefilter returns the exact scan's rows, scores and order.
    let exact: VectorScan | null = new QuantizedScan({ prefilterMinRows: false });
    exact.rowsChanged!(rows, all);
    const truth = timed(exact, rows, queries);
    exact = null;
    row.exactInt8 = { p50: truth.p50, p99: truth.p99 };
    if (!only || only.includes('prefilter')) {
      let prefiltered: VectorScan | null = new QuantizedScan();
      prefiltered.rowsChanged!(rows, all);
      const found = timed(prefiltered, rows, queries);
      prefiltered = null;
      row.prefilter = { p50: found.p50, p99: found.p99, recall: recall(found.answers, truth.answers) };
    }
    const ivf = new IvfScan(ivfOptions);
    const start = performance.now();
    ivf.rowsChanged(rows, all);
    await ivf.idle();
    const buildMs = performance.now() - start;
    const found = timed(ivf, rows, queries);
    row.ivf = { p50: found.p50, p99: found.p99, recall: recall(found.answers, truth.answers), buildMs, ...ivf.status() };
    row.loadAfter = load();
    results.push(row);
    console.log(JSON.stringify(row));
  }
}
mkdirSync(resultsDir, { recursive: true });
const out = join(resultsDir, `ivf-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(out, JSON.stringify(results, null, 2));
console.log(`wrote ${out}`);
