/**
 * Engram as users run it (`createMemory`: the real worker, SQLite on OPFS, the built-in model) plus store-level
 * comparisons in a dedicated worker (store-worker.ts). Driven by bench/worker.ts through `window.workerBench`.
 */
import * as Comlink from 'comlink';
import { bytesOnDisk, sleep, untilHybrid } from './page-lib.js';
import { createMemory, type EncryptionOptions, type Memory } from '../../src/index.js';
import type { Backend, StoreBench } from './store-worker.js';

let texts: string[] = [];
let createdAt: number[] = [];

const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function storeWorker<T>(run: (bench: Comlink.Remote<StoreBench>) => Promise<T>): Promise<T> {
  const worker = new Worker(new URL('./store-worker.ts', import.meta.url), { type: 'module' });
  return run(Comlink.wrap<StoreBench>(worker)).finally(() => worker.terminate());
}



/** A file of the database folder on OPFS, as raw bytes. */
async function fileBytes(file: string): Promise<Uint8Array> {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('engram');
  return new Uint8Array(await (await (await dir.getFileHandle(file)).getFile()).arrayBuffer());
}

/**
 * A closed worker's memory (hundreds of MB at 100k once the model and vectors are in) is reclaimed while the next one
 * starts: on 2 cores that slowed the next open by up to 0.8 s. A user's cold open follows no such worker, so each
 * round starts after a pause.
 */
const settle = () => sleep(3000);

type OpenOptions = Parameters<typeof createMemory>[0];

/**
 * One cold open: createMemory resolved, the first answer, the first hybrid answer (ms from the start). The memory is
 * left open for the caller.
 */
async function openOnce(options: OpenOptions) {
  const t = performance.now();
  const memory = await createMemory(options);
  const openMs = performance.now() - t;
  await memory.search(texts[11] ?? 'x', { touch: false });
  const firstAnswerMs = performance.now() - t;
  const status = await memory.status();
  await untilHybrid(memory);
  const result = await memory.search(texts[11] ?? 'x', { touch: false });
  if (result.trace.mode !== 'hybrid') throw new Error(`bench: expected a hybrid answer, got ${result.trace.mode}`);
  return { memory, status, openMs, firstAnswerMs, hybridMs: performance.now() - t };
}

/** The time from a new worker to its first answer, then closed and settled. */
async function firstAnswerOnce(options: OpenOptions): Promise<number> {
  const t = performance.now();
  const memory = await createMemory(options);
  await memory.search(texts[11] ?? 'x', { touch: false });
  const ms = performance.now() - t;
  await memory.close();
  await settle();
  return ms;
}

let shared: Memory | null = null;

/** How a database is opened in the encryption comparison. */
export type Protection = 'plain' | 'passphrase' | 'key';
const PASSPHRASE = 'correct horse battery staple, bench edition';
let appKey: Promise<CryptoKey> | undefined;

/** The page's own AES-GCM key (non-extractable, as an app would keep it): one for the page's life, so it reopens. */
async function encryptionFor(protection: Protection): Promise<EncryptionOptions | null> {
  if (protection === 'plain') return null;
  if (protection === 'passphrase') return { passphrase: PASSPHRASE };
  appKey ??= crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
  return { key: await appKey };
}

/** Queries spread over the first `n` memories' texts, `count` of them from `offset`. */
function queries(n: number, count: number, offset: number): string[] {
  return Array.from({ length: count }, (_, i) => texts[(offset + i * Math.floor(n / count)) % n] ?? 'x');
}

const bench = {
  async setup(stem: string): Promise<number> {
    const json = (await (await fetch(`${stem}.json`)).json()) as { texts: string[]; createdAt: number[] };
    ({ texts, createdAt } = json);
    return texts.length;
  },

  backends: (backend: Backend, n: number, batch: number) => storeWorker((b) => b.backends(backend, texts.slice(0, n), batch)),

  seed: (name: string, n: number, batch: number) => storeWorker((b) => b.seed(name, texts.slice(0, n), createdAt.slice(0, n), batch)),

  vectorSpace: () => storeWorker((b) => b.vectorSpace()),

  writeGrowth: (batches: number, batch: number, ids: 'uuid7' | 'random') =>
    storeWorker((b) => b.writeGrowth(texts, batches, batch, ids)),

  breakdown: (name: string, vectorSpace: string) => storeWorker((b) => b.breakdown(name, vectorSpace, texts[7] ?? 'x')),

  /** End to end: page → worker → embedding → SQLite → indexes, in batches as an app would add them. */
  async ingest(name: string, n: number, batch: number, protection: Protection = 'plain') {
    let t = performance.now();
    const memory = await createMemory({ name, persist: false, encryption: await encryptionFor(protection) });
    if ((await memory.status()).encrypted !== (protection !== 'plain')) throw new Error(`bench: ${name} is not ${protection}`);
    const embedder = await untilHybrid(memory);
    const modelReadyMs = performance.now() - t;
    t = performance.now();
    for (let s = 0; s < n; s += batch) {
      await memory.add(texts.slice(s, s + batch).map((text, j) => ({ text, createdAt: createdAt[s + j] })));
    }
    const perSec = n / ((performance.now() - t) / 1000);
    await memory.close();
    return { embedder, modelReadyMs, perSec, bytesPerMemory: (await bytesOnDisk(name)) / n };
  },

  /**
   * A new worker on an existing database: until the first answer (lexical), and until the model answers too.
   * The first round may rebuild the lexical index (and save its snapshot on close); later rounds restore it.
   */
  async coldOpen(name: string, rounds: number) {
    const runs: { openMs: number; firstAnswerMs: number; hybridMs: number; lexicalIndex: string }[] = [];
    let count = 0;
    for (let round = 0; round < rounds; round++) {
      const { memory, status, openMs, firstAnswerMs, hybridMs } = await openOnce({ name, persist: false });
      runs.push({ openMs, firstAnswerMs, hybridMs, lexicalIndex: status.lexicalIndex });
      count = await memory.count();
      await memory.close();
      await settle();
    }
    const of = (source: string) => runs.filter((r) => r.lexicalIndex === source);
    const summary = (rs: typeof runs) =>
      rs.length ? { openMs: median(rs.map((r) => r.openMs)), firstAnswerMs: median(rs.map((r) => r.firstAnswerMs)), hybridMs: median(rs.map((r) => r.hybridMs)) } : null;
    // Without a model, what the first answer costs when no model load competes for the worker's thread; and on an
    // empty in-memory database, what starting a worker costs by itself (its modules, Comlink, the first call).
    const firstAnswer = async (options: OpenOptions) => {
      const times: number[] = [];
      for (let round = 0; round < rounds; round++) times.push(await firstAnswerOnce(options));
      return median(times);
    };
    return {
      count, rebuilt: summary(of('rebuilt')), snapshot: summary(of('snapshot')),
      firstAnswerWithoutModelMs: await firstAnswer({ name, persist: false, embedder: null }),
      emptyWorkerMs: await firstAnswer({ name: 'bench-empty', storage: 'memory', persist: false, embedder: null }),
      bytesPerMemory: (await bytesOnDisk(name)) / count,
    };
  },

  /** The first `n` memories, with real vectors, into one database per protection (store-worker.ts `seedVariants`). */
  async seedVariants(names: Record<Protection, string>, n: number, batch: number) {
    const protections = Object.keys(names) as Protection[];
    const targets = await Promise.all(protections.map(async (p) => ({ name: names[p], encryption: await encryptionFor(p) })));
    const seeded = await storeWorker((b) => b.seedVariants(targets, texts.slice(0, n), createdAt.slice(0, n), batch));
    // The files as a copied profile would show them: only the plain one starts with SQLite's header.
    for (const p of protections) {
      const header = new TextDecoder().decode((await fileBytes(`${names[p]}.sqlite3`)).slice(0, 15));
      if ((header === 'SQLite format 3') !== (p === 'plain')) throw new Error(`bench: ${names[p]} (${p}) starts with ${JSON.stringify(header)}`);
    }
    return seeded;
  },

  loadParts: async (name: string, protection: Protection, vectorSpace: string, dim: number) => {
    const encryption = await encryptionFor(protection);
    return storeWorker((b) => b.loadParts(name, encryption, vectorSpace, dim));
  },

  pbkdf2: (runs: number) => storeWorker((b) => b.pbkdf2(runs)),

  perRecordWebCrypto: (n: number, dim: number, batch: number) => storeWorker((b) => b.perRecordWebCrypto(texts.slice(0, n), dim, batch)),

  /**
   * One cold open of `name` (of `n` memories) as `protection`: to createMemory resolved, to the first answer, to the
   * first hybrid answer; then the median latency of hybrid searches once it is open (after warm-up searches with
   * other queries, as the background record load may still run after the model is ready).
   */
  async protectedColdOpen(name: string, n: number, protection: Protection) {
    const { memory, status, openMs, firstAnswerMs, hybridMs } = await openOnce({ name, persist: false, encryption: await encryptionFor(protection) });
    if (status.encrypted !== (protection !== 'plain')) throw new Error(`bench: ${name} opened with encrypted=${status.encrypted} as ${protection}`);
    // Searches are timed on memory already read: the worker reads the records into memory in the background after
    // the first answer (reading pages is where encryption costs), so wait until it has.
    await sleep(1000 + n / 20);
    for (const query of queries(n, 20, 5)) await memory.search(query, { touch: false });
    const searchMs: number[] = [];
    for (const query of queries(n, 60, 3)) {
      const t1 = performance.now();
      const result = await memory.search(query, { touch: false });
      searchMs.push(performance.now() - t1);
      if (result.trace.mode !== 'hybrid') throw new Error(`bench: expected a hybrid answer, got ${result.trace.mode}`);
    }
    const count = await memory.count();
    await memory.close();
    if (count !== n) throw new Error(`bench: ${name} holds ${count} memories, expected ${n}`);
    await settle();
    const sorted = searchMs.slice().sort((a, b) => a - b);
    return { openMs, firstAnswerMs, hybridMs, lexicalIndex: status.lexicalIndex, searchP50Ms: median(searchMs), searchP95Ms: sorted[Math.floor(sorted.length * 0.95)] ?? NaN };
  },

  /** As coldOpen's `firstAnswerWithoutModelMs`, one round: the open alone, no model load competing for the cores. */
  async protectedFirstAnswer(name: string, protection: Protection) {
    return firstAnswerOnce({ name, persist: false, embedder: null, encryption: await encryptionFor(protection) });
  },

  /** Opens `name` in this page; with two pages, the second one is a follower of the first. */
  async openShared(name: string) {
    shared = await createMemory({ name, persist: false });
    await untilHybrid(shared);
  },

  /** Median latency of a search and of a one-memory add, from this page. */
  async sharedLatency(rounds: number) {
    if (!shared) throw new Error('bench: openShared first');
    const search: number[] = [];
    const add: number[] = [];
    for (let i = 0; i < rounds; i++) {
      let t = performance.now();
      await shared.search(texts[i] ?? 'x', { touch: false });
      search.push(performance.now() - t);
      t = performance.now();
      await shared.add({ text: `latency probe ${i} ${texts[i + 1] ?? ''}` });
      add.push(performance.now() - t);
    }
    return { searchMs: median(search), addMs: median(add) };
  },

  async closeShared() {
    await shared?.close();
    shared = null;
  },
};

export type WorkerBench = typeof bench;
(window as unknown as { workerBench: WorkerBench }).workerBench = bench;
