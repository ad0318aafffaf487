/**
 * The million section's corpus, in chunks: memory i is the same as in the smaller corpora (it depends only on the
 * seed and i), but generated and cached CHUNK memories at a time (`chunk-<k>.json`: texts and dates;
 * `chunk-<k>.f32`: vectors), so neither Node nor the page ever holds the texts of a million memories at once.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QUERY_SETS, querySet, type BenchQuery, type QuerySetName, type World } from './data.js';
import { K } from './peers.js';
import { cacheDir, DATA_VERSION } from './node-data.js';

export const CHUNK = 50_000;

export interface ChunkJson {
  texts: string[];
  createdAt: number[];
}

export function streamDir(seed: number): string {
  return join(cacheDir, `stream-v${DATA_VERSION}-s${seed}`);
}

/** Chunk k's file stem, relative to the cache directory (the page fetches `/bench/results/cache/<this>`). */
export function chunkName(seed: number, k: number): string {
  return `stream-v${DATA_VERSION}-s${seed}/chunk-${String(k).padStart(3, '0')}`;
}

export function chunkCount(n: number): number {
  return Math.ceil(n / CHUNK);
}

/** Generates the missing chunks covering the first n memories (whole chunks, so they serve every n). */
export function ensureChunks(world: World, n: number, log: (message: string) => void): void {
  mkdirSync(streamDir(world.seed), { recursive: true });
  const dim = world.dim;
  for (let k = 0; k < chunkCount(n); k++) {
    const stem = join(cacheDir, chunkName(world.seed, k));
    if (existsSync(`${stem}.json`) && existsSync(`${stem}.f32`)) continue;
    const start = performance.now();
    const json: ChunkJson = { texts: new Array<string>(CHUNK), createdAt: new Array<number>(CHUNK) };
    const vectors = new Float32Array(CHUNK * dim);
    for (let j = 0; j < CHUNK; j++) {
      const m = world.memory(k * CHUNK + j);
      json.texts[j] = m.text;
      json.createdAt[j] = m.createdAt;
      world.embed(m.wordIds, [m.topic], vectors.subarray(j * dim, (j + 1) * dim));
    }
    // Written under a temporary name first: an interrupted run never leaves a short chunk behind.
    writeFileSync(`${stem}.f32.tmp`, vectors);
    renameSync(`${stem}.f32.tmp`, `${stem}.f32`);
    writeFileSync(`${stem}.json.tmp`, JSON.stringify(json));
    renameSync(`${stem}.json.tmp`, `${stem}.json`);
    log(`generated chunk ${k + 1}/${chunkCount(n)} (${Math.round(performance.now() - start)} ms)`);
  }
}

export function readChunkVectors(seed: number, k: number): Float32Array {
  const bytes = readFileSync(join(cacheDir, `${chunkName(seed, k)}.f32`));
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

export function readChunkJson(seed: number, k: number): ChunkJson {
  return JSON.parse(readFileSync(join(cacheDir, `${chunkName(seed, k)}.json`), 'utf8')) as ChunkJson;
}

/** The first n vectors in one array (n × dim float32: 1.5 GB at 1M × 384). */
export function loadVectors(seed: number, n: number, dim: number): Float32Array {
  const all = new Float32Array(n * dim);
  for (let k = 0; k < chunkCount(n); k++) {
    const chunk = readChunkVectors(seed, k);
    const rows = Math.min(CHUNK, n - k * CHUNK);
    all.set(chunk.subarray(0, rows * dim), k * CHUNK * dim);
  }
  return all;
}

/**
 * Exact top-k by inner product (vectors are unit length: cosine) over every row, keeping the k best in a small
 * sorted array: the exact answer recall is measured against, and the time of a plain exact scan in Node.
 */
export function exactTopK(vectors: Float32Array, dim: number, query: Float32Array, k = K): { ids: string[]; scores: number[] } {
  const n = vectors.length / dim;
  const bestScore = new Float64Array(k).fill(-Infinity);
  const bestRow = new Int32Array(k).fill(-1);
  for (let row = 0; row < n; row++) {
    const base = row * dim;
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    for (let i = 0; i < dim; i += 4) {
      a += query[i]! * vectors[base + i]!;
      b += query[i + 1]! * vectors[base + i + 1]!;
      c += query[i + 2]! * vectors[base + i + 2]!;
      d += query[i + 3]! * vectors[base + i + 3]!;
    }
    const score = a + b + c + d;
    if (score <= bestScore[k - 1]!) continue;
    let at = k - 1;
    while (at > 0 && bestScore[at - 1]! < score) {
      bestScore[at] = bestScore[at - 1]!;
      bestRow[at] = bestRow[at - 1]!;
      at--;
    }
    bestScore[at] = score;
    bestRow[at] = row;
  }
  const ids: string[] = [];
  const scores: number[] = [];
  for (let i = 0; i < k; i++) {
    if (bestRow[i]! < 0) break;
    ids.push(`m${bestRow[i]}`);
    scores.push(bestScore[i]!);
  }
  return { ids, scores };
}

/** Exact answers per query name, cached per (n, queries) so reruns skip the scan. */
export function exactAnswersCached(
  seed: number,
  n: number,
  queries: readonly BenchQuery[],
  compute: () => Map<string, string[]>,
): Map<string, string[]> {
  const key = queries.map((q) => q.name + q.text.length).join('|');
  const file = join(streamDir(seed), `exact-n${n}.json`);
  if (existsSync(file)) {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as { key: string; answers: Record<string, string[]> };
    if (cached.key === key) return new Map(Object.entries(cached.answers));
  }
  const answers = compute();
  writeFileSync(file, JSON.stringify({ key, answers: Object.fromEntries(answers) }));
  return answers;
}

/**
 * Exact top-10 ids per query name over the first n memories (cached, see exactAnswersCached); when computed now,
 * `timed` gets each query set's scan times (the naive peer).
 */
export function exactAnswers(
  world: World,
  n: number,
  queries: readonly BenchQuery[],
  log: (message: string) => void,
  timed: (set: QuerySetName, times: Map<BenchQuery, number[]>) => void = () => {},
): Map<string, string[]> {
  return exactAnswersCached(world.seed, n, queries, () => {
    log('exact scan of every query (for recall@10 and as the naive peer)');
    const vectors = loadVectors(world.seed, n, world.dim);
    const answers = new Map<string, string[]>();
    for (const set of QUERY_SETS) {
      const times = new Map<BenchQuery, number[]>();
      for (const q of querySet(queries, set)) {
        const t = performance.now();
        answers.set(q.name, exactTopK(vectors, world.dim, q.vector, K).ids);
        times.set(q, [performance.now() - t]);
      }
      if (times.size > 0) timed(set, times);
    }
    return answers;
  });
}
