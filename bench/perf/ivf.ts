/**
 * The vector index section (`npm run bench -- --sections ivf`): the vector leg alone at each bench size, on 384-d
 * synthetic unit vectors, uniform on the sphere or clustered, against the exact int8 scan (the same rows, scores and
 * order as the exact float32 scan). Timed and checked for recall@10: the IVF scan over float32 rows (the default
 * below the compact size), IVF over a compact index's int8 codes with the floats read back for rescoring (the
 * default at a million), and the 1-bit prefilter (what a compact index answers with while its lists build). Also
 * the IVF build time and whether the lists answer (where they cannot hold recall, the exact int8 scan does).
 * Writes bench/results/ivf.json; run by bench/perf/run.ts.
 *
 *   node --expose-gc --import tsx bench/perf/ivf.ts [--sizes 10000,100000] [--rounds 1]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from './args.js';
import { SYNTHETIC_DIM } from './data.js';
import { isEntry, resultsDir } from './paths.js';
import { IvfScan, type IvfScanOptions, type IvfStatus } from '../../src/vector/ivf.js';
import { QuantizedScan } from '../../src/vector/quantized-scan.js';
import type { ScoredRow, VectorRows, VectorScan } from '../../src/vector/scan.js';
import { VectorIndex } from '../../src/vector/vector-index.js';
import { prng } from '../../src/util/prng.js';

export const IVF_KINDS = ['uniform', 'clustered'] as const;
export type IvfKind = (typeof IVF_KINDS)[number];
/** Clusters of the clustered data by default: more than the lists of the smaller sizes, as real embeddings have topics. */
const CLUSTERS = 1_000;
const K = 10;

/** One way of answering the vector leg, at one size and kind of data. */
export interface IvfBenchRow {
  kind: IvfKind;
  n: number;
  dim: number;
  system: string;
  p50: number;
  p99: number;
  recall: number;
  /** IVF rows: build time, and whether the lists answer (false: the exact int8 scan does). */
  buildMs?: number;
  status?: IvfStatus;
  load: [number, number];
}

export const IVF_SYSTEMS = {
  exact: 'exact int8 scan',
  prefilter: 'int8 + 1-bit prefilter',
  ivf: 'IVF (float32 rows)',
  compact: 'IVF (compact codes, floats read back)',
} as const;

/** Unit vectors: uniform on the sphere, or around `clusters` fixed centres (cosine to the centre about 0.7). */
export function ivfVectors(kind: IvfKind, n: number, dim: number, seed: number, clusters = CLUSTERS): Float32Array {
  const random = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const centres = kind === 'clustered' ? ivfVectors('uniform', clusters, dim, 7) : null;
  const spread = 1 / Math.sqrt(dim);
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const at = i * dim;
    const c = centres ? Math.floor(random() * clusters) * dim : 0;
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

function rowsOf(matrix: Float32Array, dim: number): VectorRows {
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

/** Each query once to warm up, then `rounds` timed passes; the answers of the first timed pass. */
async function timed(count: number, search: (q: number) => number[] | Promise<number[]>, rounds: number): Promise<{ answers: number[][]; p50: number; p99: number }> {
  for (let q = 0; q < Math.min(20, count); q++) await search(q);
  const times: number[] = [];
  const answers: number[][] = [];
  for (let round = 0; round < rounds; round++) {
    for (let q = 0; q < count; q++) {
      const start = performance.now();
      const rows = await search(q);
      times.push(performance.now() - start);
      if (round === 0) answers.push(rows);
    }
  }
  times.sort((a, b) => a - b);
  return { answers, p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

function recallOf(answers: number[][], truth: number[][]): number {
  let found = 0;
  answers.forEach((rows, q) => {
    const got = new Set(rows);
    found += (truth[q] as number[]).filter((row) => got.has(row)).length;
  });
  return found / Math.max(1, truth.length * K);
}

export interface IvfBenchOptions {
  sizes: readonly number[];
  kinds?: readonly IvfKind[];
  dim?: number;
  queries?: number;
  rounds?: number;
  /** Centres of the clustered data (default 1,000). */
  clusters?: number;
  /** IvfScan options (a smoke run lowers ivfMinRows). */
  ivf?: IvfScanOptions;
  log?: (message: string) => void;
}

/** Every system at every size and kind of data; queries drawn from the same distribution, not stored. */
export async function benchIvf({ sizes, kinds = IVF_KINDS, dim = SYNTHETIC_DIM, queries: queryCount = 200, rounds = 3, clusters = CLUSTERS, ivf = {}, log = () => {} }: IvfBenchOptions): Promise<IvfBenchRow[]> {
  const out: IvfBenchRow[] = [];
  for (const kind of kinds) {
    for (const n of sizes) {
      const matrix = ivfVectors(kind, n, dim, 1, clusters);
      const rows = rowsOf(matrix, dim);
      const queries = ivfVectors(kind, queryCount, dim, 2, clusters);
      const query = (q: number) => queries.subarray(q * dim, (q + 1) * dim);
      const all = Array.from({ length: n }, (_, r) => r);
      const push = (system: string, found: { p50: number; p99: number; answers: number[][] }, truth: number[][], extra: Partial<IvfBenchRow> = {}, load0 = loadavg()[0]!) => {
        const row: IvfBenchRow = { kind, n, dim, system, p50: found.p50, p99: found.p99, recall: recallOf(found.answers, truth), ...extra, load: [load0, loadavg()[0]!] };
        out.push(row);
        log(`${kind} ${n}: ${system} p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms, recall@10 ${row.recall.toFixed(3)}${row.status ? `, lists ${row.status.answering} (share ${row.status.share?.toFixed(3)}), build ${((row.buildMs ?? 0) / 1000).toFixed(1)} s` : ''}`);
      };
      const scanRows = (scan: VectorScan) => (q: number) => scan.topK(rows, query(q), K).map((hit: ScoredRow) => hit.row);
      let load0 = loadavg()[0]!;
      const exact = new QuantizedScan({ prefilterMinRows: false });
      exact.rowsChanged(rows, all);
      const truth = await timed(queryCount, scanRows(exact), rounds);
      push(IVF_SYSTEMS.exact, truth, truth.answers, {}, load0);

      load0 = loadavg()[0]!;
      const prefilter = new QuantizedScan();
      prefilter.rowsChanged(rows, all);
      push(IVF_SYSTEMS.prefilter, await timed(queryCount, scanRows(prefilter), rounds), truth.answers, {}, load0);

      load0 = loadavg()[0]!;
      const scan = new IvfScan(ivf);
      let start = performance.now();
      scan.rowsChanged(rows, all);
      await scan.idle();
      let buildMs = performance.now() - start;
      push(IVF_SYSTEMS.ivf, await timed(queryCount, scanRows(scan), rounds), truth.answers, { buildMs, status: scan.status() }, load0);
      scan.dispose();

      // Compact: codes only in memory, the floats of the rows to rescore read back (from memory here, by id).
      load0 = loadavg()[0]!;
      const fetch = async (ids: readonly string[]) => {
        const data = new Float32Array(ids.length * dim);
        ids.forEach((id, i) => data.set(matrix.subarray(Number(id) * dim, (Number(id) + 1) * dim), i * dim));
        return { ids: [...ids], data };
      };
      const compact = new VectorIndex(dim, new IvfScan(ivf), n, { from: 0, fetch });
      const ids = all.map(String);
      for (let at = 0; at < n; at += 10_000) compact.setMany(ids.slice(at, at + 10_000), matrix.subarray(at * dim, Math.min(n, at + 10_000) * dim));
      start = performance.now();
      compact.warm();
      await compact.listsIdle();
      buildMs = performance.now() - start;
      const search = async (q: number) => (await compact.searchAsync(query(q), K)).map((hit) => Number(hit.id));
      push(IVF_SYSTEMS.compact, await timed(queryCount, search, rounds), truth.answers, { buildMs, status: compact.listStatus() ?? undefined }, load0);
      compact.dispose();
    }
  }
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (message: string) => console.log(`[bench ivf ${new Date().toISOString().slice(11, 19)}] ${message}`);
  const rows = await benchIvf({ sizes: args.sizes, rounds: Math.min(args.rounds, 3), log });
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'ivf.json'), JSON.stringify(rows, null, 1));
  log('wrote bench/results/ivf.json');
}

if (isEntry(import.meta.url)) await main();
