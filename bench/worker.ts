/**
 * `npm run bench:worker [-- --sizes 10000,100000 --rounds 3]`: the worker and its store in headless Chromium with
 * a persistent profile (real OPFS; incognito OPFS is an in-memory emulation).
 *
 * - storage backends: the three wa-sqlite VFSs and plain IndexedDB (one object per memory) on the same 10k writes;
 * - ingest memories/s end to end with the built-in model (page → worker → embedding → SQLite → indexes);
 * - cold open (a new worker to the first answer, and to the first answer using the model) at each size;
 * - bytes on disk per memory; what a cold open spends its time on; a follower tab's latency against the leader's;
 * - encryption at rest, at each size: store ingest, cold open and search p50 of a plain database against the same one
 *   encrypted with a passphrase and with an app key (and end-to-end ingest at the first size), PBKDF2 alone, and the
 *   per-record WebCrypto design it was chosen over. `--encryption-only` runs just this section;
 * - learning from use (issue 18), at each size: search p50/p99 with reinforcement and associations off, with
 *   reinforcement on (the default), and with associations followed after a replay formed them; store growth per
 *   1,000 searches; the coalesced bookkeeping write, alone on the store and as the page sees it
 *   (bench/worker/learning-page.ts, learning-store.ts).
 *   `--learning-only` runs just this section;
 * - the cold open at the largest size again in a production build (`vite build` + `vite preview`: one bundled worker
 *   module, as an app ships it; the dev server serves the worker's ~50 modules one by one). `--no-build` skips it.
 *
 * Prints a report and writes bench/results/worker.json. The large databases are seeded through the store with
 * real model vectors (the engine's per-memory supersede check would make seeding 100k through `add` very slow).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { build, preview } from 'vite';
import { CHROMIUM_PATH, chromiumArgs } from '../test/browser/harness.js';
import { startViteServer } from '../test/browser/vite-server.js';
import { World } from './perf/data.js';
import { benchQueries, benchWords, corpusStem, loadCorpus } from './perf/node-data.js';
import { repoRoot, resultsDir } from './perf/paths.js';
import type { Bookkeeping, Config, LearningBench } from './worker/learning-page.js';
import type { Protection, WorkerBench } from './worker/page.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const sizes = option('sizes', '10000,100000').split(',').map(Number);
const productionBuild = !process.argv.includes('--no-build');
const rounds = Number(option('rounds', '3'));
const encryptionOnly = process.argv.includes('--encryption-only');
const learningOnly = process.argv.includes('--learning-only');
const INGEST_BATCH = 1000;
const VFS_N = 10_000;
const GROWTH_BATCHES = 20;
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function log(message: string): void {
  console.log(`[bench worker ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/** Calls `window.workerBench[method](...args)` in the page. */
function call<M extends keyof WorkerBench>(page: Page, method: M, ...args: Parameters<WorkerBench[M]>): Promise<Awaited<ReturnType<WorkerBench[M]>>> {
  return page.evaluate(
    ([m, a]) => (window as unknown as { workerBench: Record<string, (...x: unknown[]) => unknown> }).workerBench[m]!(...a),
    [method, args] as const,
  ) as Promise<Awaited<ReturnType<WorkerBench[M]>>>;
}

async function openPage(context: BrowserContext, url: string, global = 'workerBench'): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (error) => log(`page error: ${error.message}`));
  page.on('console', (message) => message.type() === 'error' && log(`page console: ${message.text()}`));
  await page.goto(url);
  await page.waitForFunction((name) => name in window, global, { timeout: 120_000 });
  return page;
}

const round = (x: number, digits = 0) => Number(x.toFixed(digits));
const load = () => round(loadavg()[0] ?? NaN, 2);

async function main(): Promise<void> {
  const world = new World(benchWords());
  const largest = Math.max(VFS_N, ...sizes);
  loadCorpus(world, largest); // generated once, cached under bench/results/cache/ (served to the page)
  const stem = `/bench/results/cache/${corpusStem(largest, world.seed)}`;

  // Other people edit the tree while the bench runs: no watching, no reloads; its own optimizer cache.
  const { server, baseURL } = await startViteServer({
    frozen: true,
    config: { cacheDir: resolve(repoRoot, 'node_modules/.vite-bench-worker'), optimizeDeps: { include: ['comlink', 'minisearch', 'idb'] } },
  });
  const url = `${baseURL}/bench/worker/index.html`;
  const profile = mkdtempSync(join(tmpdir(), 'engram-bench-worker-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs(false) });
  // The machine may be shared: the load average says how much the figures are inflated.
  const results: Record<string, unknown> = { date: new Date().toISOString(), chromium: context.browser()?.version(), sizes, rounds, loadBefore: loadavg()[0] };
  try {
    const page = await openPage(context, url);
    log(`corpus: ${await call(page, 'setup', stem)} memories`);
    if (!encryptionOnly && !learningOnly) await storageSections(context, url, page, results);
    if (!learningOnly) results.encryption = await encryptionSection(page);
    await page.close();
    if (!encryptionOnly) results.learning = await learningSection(context, `${baseURL}/bench/worker/learning.html`, stem, world);

    if (productionBuild && !encryptionOnly && !learningOnly) {
      const n = Math.max(...sizes);
      results.production = { n, ...(await productionColdOpen(context, stem, n)) };
      log(`production build, cold open at ${n}: ${JSON.stringify(results.production)}`);
    }
  } finally {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  results.loadAfter = loadavg()[0];
  mkdirSync(resultsDir, { recursive: true });
  // A partial run (--encryption-only, --learning-only) writes its own file, so the full run's figures stay.
  const file = encryptionOnly ? 'worker-encryption.json' : learningOnly ? 'worker-learning.json' : 'worker.json';
  writeFileSync(join(resultsDir, file), JSON.stringify(results, null, 1));
  report(results);
}

const PROTECTIONS: readonly Protection[] = ['plain', 'passphrase', 'key'];
/** The per-record WebCrypto alternative's vectors: a 384-d sentence model's (and the built-in model's, measured too). */
const PER_RECORD_DIM = 384;
const SEED_BATCH = 2000;

type Timed = { openMs: number; firstAnswerMs: number; hybridMs: number; searchP50Ms: number; searchP95Ms: number };
type Opened = Timed & { lexicalIndex: string; firstAnswerWithoutModelMs?: number };
type LoadParts = { openMs: number; recordsMs: number; vectorsMs: number };
interface EncryptionSize {
  n: number;
  load: number;
  seeded: Awaited<ReturnType<WorkerBench['seedVariants']>>;
  /** Store writes, memories/s, per protection. */
  storeIngestPerSec: Record<Protection, number>;
  /** End to end through `add` (first size only). */
  ingestPerSec?: Record<Protection, number>;
  loadParts: Record<Protection, LoadParts>;
  coldOpen: Record<Protection, Timed & { firstAnswerWithoutModelMs: number; runs: Opened[] }>;
  /** The untimed first open of each seeded database (it rebuilds the lexical index). */
  firstOpen: Record<Protection, Timed & { lexicalIndex: string }>;
  /** Encrypted ÷ plain, per figure. */
  ratios: Record<'passphrase' | 'key', Record<string, number>>;
}

/**
 * Encryption at rest against the same database unencrypted, at each size. Each database is seeded through the store
 * (the same records and vectors into all three), opened once untimed (that open rebuilds the lexical index and saves
 * its snapshot on close, as the first open of a seeded database does), then opened `rounds` times per protection,
 * the protections taking turns within each round.
 */
async function encryptionSection(page: Page) {
  const first = sizes[0] ?? 10_000;
  const pbkdf2 = await call(page, 'pbkdf2', 5);
  log(`PBKDF2-SHA-256 ${pbkdf2.iterations} iterations in a worker: median ${round(pbkdf2.medianMs)} ms (${pbkdf2.ms.map((x) => round(x)).join(' ')}); load ${load()}`);
  const bySize: EncryptionSize[] = [];
  for (const n of sizes) {
    const startLoad = load();
    const names = { plain: `bench-enc-plain-${n}`, passphrase: `bench-enc-passphrase-${n}`, key: `bench-enc-key-${n}` } satisfies Record<Protection, string>;
    const seeded = await call(page, 'seedVariants', names, n, SEED_BATCH);
    const storeIngestPerSec = Object.fromEntries(PROTECTIONS.map((p) => [p, seeded.targets.find((t) => t.name === names[p])!.writePerSec])) as Record<Protection, number>;
    log(`encryption ${n}: seeded ${JSON.stringify(seeded)}; load ${load()}`);

    const parts = Object.fromEntries(PROTECTIONS.map((p) => [p, [] as LoadParts[]])) as Record<Protection, LoadParts[]>;
    for (let r = 0; r < rounds; r++) {
      for (const p of PROTECTIONS) parts[p].push(await call(page, 'loadParts', names[p], p, seeded.vectorSpace, seeded.dim));
    }
    const loadParts = Object.fromEntries(PROTECTIONS.map((p) => [p, {
      openMs: median(parts[p].map((x) => x.openMs)), recordsMs: median(parts[p].map((x) => x.recordsMs)), vectorsMs: median(parts[p].map((x) => x.vectorsMs)),
    }])) as Record<Protection, LoadParts>;
    log(`encryption ${n}: store open + load ${JSON.stringify(loadParts)}; load ${load()}`);

    const firstOpen = {} as Record<Protection, Timed & { lexicalIndex: string }>;
    for (const p of PROTECTIONS) {
      firstOpen[p] = await call(page, 'protectedColdOpen', names[p], n, p);
      log(`encryption ${n}: first open (${p}, lexical index ${firstOpen[p].lexicalIndex}) ${round(firstOpen[p].firstAnswerMs)} ms to the first answer`);
    }
    const runs = Object.fromEntries(PROTECTIONS.map((p) => [p, [] as Opened[]])) as Record<Protection, Opened[]>;
    for (let r = 0; r < rounds; r++) {
      // Rotated, so no protection always follows the same one.
      for (let k = 0; k < PROTECTIONS.length; k++) {
        const p = PROTECTIONS[(r + k) % PROTECTIONS.length]!;
        const run = await call(page, 'protectedColdOpen', names[p], n, p);
        if (run.lexicalIndex !== 'snapshot') throw new Error(`bench: ${names[p]} did not open from its snapshot`);
        runs[p].push({ ...run, firstAnswerWithoutModelMs: await call(page, 'protectedFirstAnswer', names[p], p) });
      }
    }
    const timed = (rs: Timed[]): Timed => ({
      openMs: median(rs.map((x) => x.openMs)), firstAnswerMs: median(rs.map((x) => x.firstAnswerMs)), hybridMs: median(rs.map((x) => x.hybridMs)),
      searchP50Ms: median(rs.map((x) => x.searchP50Ms)), searchP95Ms: median(rs.map((x) => x.searchP95Ms)),
    });
    const coldOpen = Object.fromEntries(PROTECTIONS.map((p) => [p, {
      ...timed(runs[p]), firstAnswerWithoutModelMs: median(runs[p].map((x) => x.firstAnswerWithoutModelMs ?? NaN)), runs: runs[p],
    }])) as EncryptionSize['coldOpen'];
    log(`encryption ${n}: cold open ${JSON.stringify(Object.fromEntries(PROTECTIONS.map((p) => [p, { ...coldOpen[p], runs: undefined }])))}; load ${load()}`);

    // Through `add` (the model, the engine's checks, the store), into a new database each round, protections in turn.
    let ingestPerSec: Record<Protection, number> | undefined;
    if (n === first) {
      const perSec = Object.fromEntries(PROTECTIONS.map((p) => [p, [] as number[]])) as Record<Protection, number[]>;
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < PROTECTIONS.length; k++) {
          const p = PROTECTIONS[(r + k) % PROTECTIONS.length]!;
          const ingest = await call(page, 'ingest', `bench-enc-ingest-${p}-${n}-${r}`, n, INGEST_BATCH, p);
          perSec[p].push(ingest.perSec);
          log(`encryption ${n}: ingest through add (${p}) ${JSON.stringify(ingest)}; load ${load()}`);
        }
      }
      ingestPerSec = Object.fromEntries(PROTECTIONS.map((p) => [p, median(perSec[p])])) as Record<Protection, number>;
    }

    const ratios = {} as EncryptionSize['ratios'];
    for (const p of ['passphrase', 'key'] as const) {
      const of = (pick: (x: Protection) => number) => pick(p) / pick('plain');
      ratios[p] = {
        storeIngestPerSec: of((x) => storeIngestPerSec[x]),
        ...(ingestPerSec ? { ingestPerSec: of((x) => ingestPerSec[x]) } : {}),
        storeOpenAndLoadMs: of((x) => loadParts[x].openMs + loadParts[x].recordsMs + loadParts[x].vectorsMs),
        openMs: of((x) => coldOpen[x].openMs),
        firstAnswerMs: of((x) => coldOpen[x].firstAnswerMs),
        firstAnswerWithoutModelMs: of((x) => coldOpen[x].firstAnswerWithoutModelMs),
        hybridMs: of((x) => coldOpen[x].hybridMs),
        searchP50Ms: of((x) => coldOpen[x].searchP50Ms),
      };
    }
    bySize.push({ n, load: startLoad, seeded, storeIngestPerSec, ...(ingestPerSec ? { ingestPerSec } : {}), loadParts, coldOpen, firstOpen, ratios });
  }

  const perRecordWebCrypto = [];
  for (const n of sizes) {
    for (const dim of new Set([PER_RECORD_DIM, bySize[0]?.seeded.dim ?? PER_RECORD_DIM])) {
      const startLoad = load();
      const measured = await call(page, 'perRecordWebCrypto', n, dim, INGEST_BATCH);
      if (measured.checked !== n) throw new Error(`bench: ${measured.checked} of ${n} records checked`);
      perRecordWebCrypto.push({ ...measured, load: startLoad });
      log(`per-record WebCrypto at ${n}, ${dim}-d: ${JSON.stringify(measured)}; load ${load()}`);
    }
  }
  return { pbkdf2, sizes: bySize, perRecordWebCrypto };
}

/** Everything before the encryption section: storage backends, write growth, ingest, cold open, two tabs. */
async function storageSections(context: BrowserContext, url: string, page: Page, results: Record<string, unknown>): Promise<void> {
  // Warm-up, discarded: whichever backend ran first would otherwise pay for WebAssembly tier-up.
  await call(page, 'backends', 'opfs', 2000, 500);
  const backends: Record<string, unknown> = {};
  for (const backend of ['opfs', 'opfs-pool', 'idb', 'indexeddb'] as const) {
    backends[backend] = await call(page, 'backends', backend, VFS_N, 500);
    log(`backend ${backend}: ${JSON.stringify(backends[backend])}`);
  }
  results.backends = backends;

  // One 1,000-memory write early and late in a growing table (it used to grow with the table: docs/worker.md).
  const growth: Record<string, { early: number; late: number }> = {};
  for (const ids of ['uuid7', 'random'] as const) {
    const { ms } = await call(page, 'writeGrowth', GROWTH_BATCHES, INGEST_BATCH, ids);
    growth[ids] = { early: median(ms.slice(1, 4)), late: median(ms.slice(-3)) };
    log(`write growth (${ids} ids): ${ms.map((x) => round(x)).join(' ')} ms`);
  }
  results.writeGrowth = growth;

  const first = sizes[0] ?? 10_000;
  const ingestName = `bench-ingest-${first}`;
  const ingest = await call(page, 'ingest', ingestName, first, INGEST_BATCH);
  log(`ingest ${first} with the built-in model: ${JSON.stringify(ingest)}`);
  results.ingest = { n: first, ...ingest };

  const vectorSpace = await call(page, 'vectorSpace');
  const cold: Record<string, unknown>[] = [];
  for (const n of sizes) {
    let name = ingestName;
    if (n !== first) {
      name = `bench-seeded-${n}`;
      const seeded = await call(page, 'seed', name, n, 2000);
      log(`seeded ${n} through the store: ${JSON.stringify(seeded)}`);
      cold.push({ n, seeded });
    }
    const open = await call(page, 'coldOpen', name, rounds);
    const breakdown = await call(page, 'breakdown', name, vectorSpace);
    log(`cold open at ${n}: ${JSON.stringify(open)}; parts ${JSON.stringify(breakdown.parts)}`);
    cold.push({ n, ...open, parts: breakdown.parts, snapshotBytesPerMemory: breakdown.snapshotBytes / n, freeBytesPerMemory: breakdown.freeBytes / n });
  }
  results.coldOpen = cold;

  // Two tabs on one database: the second page's calls travel to the first page's worker.
  const follower = await openPage(context, url);
  await call(page, 'openShared', ingestName);
  await call(follower, 'openShared', ingestName);
  const leaderLatency = await call(page, 'sharedLatency', 100);
  const followerLatency = await call(follower, 'sharedLatency', 100);
  await call(follower, 'closeShared');
  await call(page, 'closeShared');
  results.tabs = { leader: leaderLatency, follower: followerLatency };
  log(`two tabs: leader ${JSON.stringify(leaderLatency)}, follower ${JSON.stringify(followerLatency)}`);
  await follower.close();
}

/**
 * The same page built as an app ships it, served by `vite preview` (another origin, so its own OPFS: the database is
 * seeded again there). The build gets the corpus and the models folder copied in, as an app copies `models/`.
 */
async function productionColdOpen(context: BrowserContext, stem: string, n: number): Promise<Record<string, unknown>> {
  const outDir = mkdtempSync(join(tmpdir(), 'engram-bench-build-'));
  const configFile = resolve(repoRoot, 'vite.config.ts');
  try {
    await build({
      configFile, logLevel: 'warn',
      build: { outDir, emptyOutDir: true, rollupOptions: { input: resolve(repoRoot, 'bench/worker/index.html') } },
    });
    mkdirSync(join(outDir, 'bench/results/cache'), { recursive: true });
    cpSync(resolve(repoRoot, `.${stem}.json`), join(outDir, `${stem}.json`));
    cpSync(resolve(repoRoot, 'models'), join(outDir, 'models'), { recursive: true });
    const server = await preview({ configFile, logLevel: 'warn', build: { outDir }, preview: { port: 0, host: '127.0.0.1', open: false } });
    try {
      const address = server.httpServer.address();
      if (!address || typeof address === 'string') throw new Error('bench: vite preview has no port');
      const page = await openPage(context, `http://127.0.0.1:${address.port}/bench/worker/index.html`);
      await call(page, 'setup', stem);
      const name = `bench-seeded-${n}`;
      log(`production build: seeded ${JSON.stringify(await call(page, 'seed', name, n, 2000))}`);
      const open = await call(page, 'coldOpen', name, rounds);
      await page.close();
      return open;
    } finally {
      await server.close();
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

/** The figures as Markdown tables (pasted into docs/worker.md). */
function report(results: Record<string, unknown>): void {
  console.log(`\nChromium ${String(results.chromium)}; 1-minute load average ${round(Number(results.loadBefore), 1)} before, ${round(Number(results.loadAfter), 1)} after (2 cores).`);
  if (encryptionOnly) {
    reportEncryption(results.encryption as Awaited<ReturnType<typeof encryptionSection>>);
    return;
  }
  if (learningOnly) {
    reportLearning(results.learning as LearningSize[]);
    return;
  }
  const backends = results.backends as Record<string, { ingestPerSec: number; singleCommitMs: number; reopenMs: number; loadMs: number }>;
  const idb = backends.indexeddb;
  console.log(`\n## Storage backends, ${VFS_N.toLocaleString('en')} memories with 100-d vectors (batches of 500)\n`);
  console.log('| backend | ingest memories/s | × IndexedDB | one-memory commit ms | reopen + load all ms | × IndexedDB |');
  console.log('|---|---|---|---|---|---|');
  for (const [name, b] of Object.entries(backends)) {
    const load = b.reopenMs + b.loadMs;
    const idbLoad = idb ? idb.reopenMs + idb.loadMs : NaN;
    console.log(`| ${name} | ${round(b.ingestPerSec)} | ${round(b.ingestPerSec / (idb?.ingestPerSec ?? NaN), 2)} | ${round(b.singleCommitMs, 2)} | ${round(load)} | ${round(idbLoad / load, 2)} faster |`);
  }
  const growth = results.writeGrowth as Record<string, { early: number; late: number }>;
  const n = (GROWTH_BATCHES * INGEST_BATCH).toLocaleString('en');
  console.log(`\n## One write of ${INGEST_BATCH.toLocaleString('en')} memories as the table grows to ${n} (opfs; median of three writes)\n`);
  console.log(`| ids | ms at 1–3k stored | ms at ${GROWTH_BATCHES - 3}–${GROWTH_BATCHES - 1}k stored | late / early |`);
  console.log('|---|---|---|---|');
  for (const [ids, g] of Object.entries(growth)) {
    const label = ids === 'uuid7' ? 'time-ordered (UUID v7, what `add` makes)' : 'random (UUID v4, an app\'s own ids)';
    console.log(`| ${label} | ${round(g.early)} | ${round(g.late)} | ${round(g.late / g.early, 2)} |`);
  }
  const ingest = results.ingest as { n: number; perSec: number; bytesPerMemory: number; modelReadyMs: number; embedder: string };
  console.log(`\n## End to end (${ingest.embedder})\n`);
  console.log(`- ingest: ${round(ingest.perSec)} memories/s over ${ingest.n.toLocaleString('en')} (target 2,000: ${round(ingest.perSec / 2000, 2)}×)`);
  console.log(`- first start to model ready: ${round(ingest.modelReadyMs)} ms`);
  console.log('\n| memories | lexical index | createMemory resolved ms | cold open → first answer ms | → first hybrid answer ms | × target 1,500 ms | first answer without a model ms | bytes on disk / memory (index snapshot, free pages) |');
  console.log('|---|---|---|---|---|---|---|---|');
  type Open = { openMs: number; firstAnswerMs: number; hybridMs: number } | null;
  type Row = {
    n: number; rebuilt?: Open; snapshot?: Open; firstAnswerWithoutModelMs?: number; emptyWorkerMs?: number;
    bytesPerMemory?: number; snapshotBytesPerMemory?: number; freeBytesPerMemory?: number;
  };
  for (const row of results.coldOpen as Row[]) {
    for (const source of ['rebuilt', 'snapshot'] as const) {
      const open = row[source];
      if (!open) continue;
      const bytes = `${round(row.bytesPerMemory ?? NaN)} (${round(row.snapshotBytesPerMemory ?? NaN)}, ${round(row.freeBytesPerMemory ?? NaN)})`;
      const withoutModel = source === 'snapshot' ? round(row.firstAnswerWithoutModelMs ?? NaN) : '';
      console.log(`| ${row.n.toLocaleString('en')} | ${source} | ${round(open.openMs)} | ${round(open.firstAnswerMs)} | ${round(open.hybridMs)} | ${round(open.firstAnswerMs / 1500, 2)} | ${withoutModel} | ${bytes} |`);
    }
  }
  for (const row of results.coldOpen as Row[]) {
    if (row.emptyWorkerMs !== undefined) console.log(`- a new worker's first answer on an empty in-memory database (${row.n.toLocaleString('en')} run): ${round(row.emptyWorkerMs)} ms`);
  }
  for (const row of results.coldOpen as { n: number; parts?: Record<string, number> }[]) {
    if (row.parts) console.log(`- parts at ${row.n.toLocaleString('en')}: ${Object.entries(row.parts).map(([k, v]) => `${k} ${round(v)} ms`).join('; ')}`);
  }
  const production = results.production as { n: number; snapshot?: { firstAnswerMs: number; hybridMs: number } | null; firstAnswerWithoutModelMs?: number; emptyWorkerMs?: number } | undefined;
  if (production?.snapshot) {
    const { n, snapshot } = production;
    console.log(`\n- production build (vite build + vite preview), ${n.toLocaleString('en')} memories, snapshot: cold open → first answer ${round(snapshot.firstAnswerMs)} ms (× target 1,500 ms: ${round(snapshot.firstAnswerMs / 1500, 2)}), → first hybrid answer ${round(snapshot.hybridMs)} ms; without a model ${round(production.firstAnswerWithoutModelMs ?? NaN)} ms; a new worker on an empty in-memory database ${round(production.emptyWorkerMs ?? NaN)} ms`);
  }
  const tabs = results.tabs as { leader: { searchMs: number; addMs: number }; follower: { searchMs: number; addMs: number } };
  console.log(`\n- two tabs, median ms: leader search ${round(tabs.leader.searchMs, 1)}, add ${round(tabs.leader.addMs, 1)}; follower search ${round(tabs.follower.searchMs, 1)}, add ${round(tabs.follower.addMs, 1)}`);
  reportEncryption(results.encryption as Awaited<ReturnType<typeof encryptionSection>>);
  reportLearning(results.learning as LearningSize[]);
}

function reportEncryption(encryption: Awaited<ReturnType<typeof encryptionSection>>): void {
  const { pbkdf2, perRecordWebCrypto } = encryption;
  const bySize = encryption.sizes as EncryptionSize[];
  console.log(`\n## Encryption at rest (ChaCha20-Poly1305 pages, SQLite3 Multiple Ciphers), plain against encrypted; medians of ${rounds} round(s)\n`);
  console.log('| memories | figure | plain | passphrase | × plain | app key | × plain |');
  console.log('|---|---|---|---|---|---|---|');
  const row = (n: number, label: string, values: Record<Protection, number>, digits = 0) =>
    console.log(`| ${n.toLocaleString('en')} | ${label} | ${round(values.plain, digits)} | ${round(values.passphrase, digits)} | ${round(values.passphrase / values.plain, 2)} | ${round(values.key, digits)} | ${round(values.key / values.plain, 2)} |`);
  const pick = <T,>(of: Record<Protection, T>, f: (x: T) => number) => ({ plain: f(of.plain), passphrase: f(of.passphrase), key: f(of.key) });
  for (const s of bySize) {
    row(s.n, `ingest, store writes with ${s.seeded.dim}-d vectors, memories/s`, s.storeIngestPerSec);
    if (s.ingestPerSec) row(s.n, 'ingest end to end (`add`, with the model), memories/s', s.ingestPerSec);
    row(s.n, 'store open (passphrase: with PBKDF2) + load every record and vector, ms', pick(s.loadParts, (x) => x.openMs + x.recordsMs + x.vectorsMs));
    row(s.n, '  of which store open, ms', pick(s.loadParts, (x) => x.openMs));
    row(s.n, 'createMemory resolved, ms', pick(s.coldOpen, (x) => x.openMs));
    row(s.n, 'cold open → first answer, ms', pick(s.coldOpen, (x) => x.firstAnswerMs));
    row(s.n, 'cold open → first answer without a model, ms', pick(s.coldOpen, (x) => x.firstAnswerWithoutModelMs));
    row(s.n, 'cold open → first hybrid answer, ms', pick(s.coldOpen, (x) => x.hybridMs));
    row(s.n, 'search p50 (hybrid, once open), ms', pick(s.coldOpen, (x) => x.searchP50Ms), 2);
  }
  console.log('\n× plain is encrypted ÷ plain: the target is ≥ 0.8 for memories/s (at most 25% slower), ≤ 1.25 for open times, ≈ 1 for search.');
  for (const s of bySize) console.log(`- ${s.n.toLocaleString('en')}: 1-minute load average ${s.load} at the start`);
  console.log(`- PBKDF2-SHA-256, ${pbkdf2.iterations.toLocaleString('en')} iterations, alone in a worker: ${round(pbkdf2.medianMs)} ms (median of ${pbkdf2.ms.length}); a passphrase open pays it once, an app key never`);

  console.log('\n## Per-record WebCrypto alternative (not taken): AES-256-GCM per record and column, one call each, in a dedicated worker\n');
  console.log('| memories | vector | encrypt every text + vector ms | per 1k memories | decrypt them all ms | per 1k memories | load |');
  console.log('|---|---|---|---|---|---|---|');
  for (const x of perRecordWebCrypto) {
    console.log(`| ${x.n.toLocaleString('en')} | ${x.dim}-d Float32 | ${round(x.encryptMs)} | ${round(x.encryptMsPer1k, 1)} | ${round(x.decryptMs)} | ${round(x.decryptMsPer1k, 1)} | ${x.load} |`);
  }
}

/** Calls `window.learningBench[method](...args)` in the learning page. */
function callLearning<M extends keyof LearningBench>(page: Page, method: M, ...args: Parameters<LearningBench[M]>): Promise<Awaited<ReturnType<LearningBench[M]>>> {
  return page.evaluate(
    ([m, a]) => (window as unknown as { learningBench: Record<string, (...x: unknown[]) => unknown> }).learningBench[m]!(...a),
    [method, args] as const,
  ) as Promise<Awaited<ReturnType<LearningBench[M]>>>;
}

/** Searches with reinforcement in the growth stream (distinct queries); the baseline stream runs the first half. */
const LEARNING_STREAM = 2000;
const REPLAY_PASSES = 5;
/** Searches before the pause that lets the bookkeeping write run, in the write observation. */
const WRITE_BATCHES = [1, 10, 100] as const;
const BOOKKEEPINGS: readonly Bookkeeping[] = ['none', 'touch', 'reinforce'];
const LEARNING_CONFIGS: readonly Config[] = ['baseline', 'reinforce', 'associations'];

type Percentiles = { p50: number; p99: number; mean: number; max: number; count: number };
function percentiles(ms: number[]): Percentiles {
  const sorted = ms.slice().sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, max: sorted.at(-1) ?? NaN, count: sorted.length };
}
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

type Size = Awaited<ReturnType<LearningBench['size']>>;
interface LearningSize {
  n: number;
  load: { start: number; end: number };
  minutes: number;
  opened: Awaited<ReturnType<LearningBench['open']>>;
  size: { beforeStream: Size; afterStream: Size; atEnd: Size };
  /** Pages freed by removing every association at the end. */
  associationBytes: Awaited<ReturnType<LearningBench['associationBytes']>>;
  /** Distinct queries back to back: the baseline's (first half) and reinforcement's on the same queries, then all. */
  stream: { baseline: Percentiles; reinforce: Percentiles; reinforceAll: Percentiles; checkpoints: { searches: number; associations: number; core: number; elapsedMs: number }[] };
  /** Database bytes at rest (used: without free pages) and associations, per 1,000 searches of the reinforced stream. */
  growthPer1k: { searches: number; associations: number; bytes: number; usedBytes: number };
  replay: Awaited<ReturnType<LearningBench['replay']>>;
  timed: Record<Config, Percentiles & { associateMeanMs: number; reinforceMeanMs: number; addedPerSearch: number; associativeHitsPerSearch: number }>;
  /** × baseline. */
  ratios: Record<'reinforce' | 'associations', { p50: number; p99: number; mean: number }>;
  writes: { bookkeeping: Bookkeeping; batch: number; records: number; edges: number; stallMs: number; stalls: number[]; pingMs: number }[];
  storeWrites: ({ batch: number } & Awaited<ReturnType<LearningBench['timeWrites']>>)[];
}

/**
 * Learning from use at each size, on a new database seeded through the store: (1) a baseline stream of distinct
 * queries (reinforcement off: touch bookkeeping only), closed and measured at rest; (2) twice as many with
 * reinforcement on, the first half the same queries, closed and measured again: growth per 1,000 searches;
 * (3) replays of the learning set (query families + the bench's sets) until associations pass the floor, then
 * `rounds` timed blocks per configuration, rotated; (4) the coalesced bookkeeping write after 1, 10 and 100
 * searches, seen from the page, then the same writes made alone on the store; (5) the bytes the associations take.
 */
async function learningSection(context: BrowserContext, url: string, stem: string, world: World): Promise<LearningSize[]> {
  const page = await openPage(context, url, 'learningBench');
  log(`learning: corpus ${await callLearning(page, 'setup', stem, benchQueries(world).map((q) => q.text))} memories`);
  const out: LearningSize[] = [];
  try {
    for (const n of sizes) {
      const start = { load: load(), at: Date.now() };
      const name = `bench-learn-${n}`;
      log(`learning ${n}: seeded ${JSON.stringify(await callLearning(page, 'seed', name, n))}`);

      let opened = await callLearning(page, 'open', name, n);
      log(`learning ${n}: opened ${JSON.stringify(opened)}; load ${load()}`);
      const baseline = await callLearning(page, 'stream', 'baseline', n, LEARNING_STREAM / 2, 0);
      await callLearning(page, 'close');
      const beforeStream = await callLearning(page, 'size', name);
      log(`learning ${n}: baseline stream ${JSON.stringify(percentiles(baseline.ms))}; at rest ${JSON.stringify(beforeStream)}`);

      opened = await callLearning(page, 'open', name, n);
      const reinforce = await callLearning(page, 'stream', 'reinforce', n, LEARNING_STREAM, 0);
      await callLearning(page, 'close');
      const afterStream = await callLearning(page, 'size', name);
      log(`learning ${n}: reinforced stream ${JSON.stringify(percentiles(reinforce.ms))}, ${JSON.stringify(reinforce.checkpoints)}; at rest ${JSON.stringify(afterStream)}; load ${load()}`);
      const per1k = (x: number) => (x * 1000) / LEARNING_STREAM;
      const formed = afterStream.associations - beforeStream.associations;
      const grew = afterStream.bytes - beforeStream.bytes;
      const growthPer1k = {
        searches: LEARNING_STREAM,
        associations: per1k(formed),
        bytes: per1k(grew),
        usedBytes: per1k(grew - (afterStream.freeBytes - beforeStream.freeBytes)),
      };

      opened = await callLearning(page, 'open', name, n);
      if (opened.associations !== afterStream.associations) throw new Error(`bench: ${opened.associations} associations after reopening, ${afterStream.associations} stored`);
      const replay = await callLearning(page, 'replay', REPLAY_PASSES);
      for (const pass of replay) log(`learning ${n}: replay ${JSON.stringify(pass)}`);

      const blocks = await callLearning(page, 'timeBlocks', rounds);
      const timed = Object.fromEntries(LEARNING_CONFIGS.map((c) => {
        const b = blocks[c];
        return [c, { ...percentiles(b.ms), associateMeanMs: mean(b.associateMs), reinforceMeanMs: mean(b.reinforceMs), addedPerSearch: b.added / b.searches, associativeHitsPerSearch: b.hitsAssociative / b.searches }];
      })) as LearningSize['timed'];
      const ratio = (c: Config) => ({ p50: timed[c].p50 / timed.baseline.p50, p99: timed[c].p99 / timed.baseline.p99, mean: timed[c].mean / timed.baseline.mean });
      const ratios = { reinforce: ratio('reinforce'), associations: ratio('associations') };
      log(`learning ${n}: timed ${JSON.stringify(timed)}; load ${load()}`);

      // Fresh queries after the stream's, so every batch forms new pairs; bookkeeping kinds rotate within a round.
      let offset = LEARNING_STREAM;
      const observed = new Map<string, { bookkeeping: Bookkeeping; batch: number; records: number[]; edges: number[]; stalls: number[]; pings: number[] }>();
      for (const batch of WRITE_BATCHES) {
        for (let r = 0; r < rounds; r++) {
          for (let k = 0; k < BOOKKEEPINGS.length; k++) {
            const bookkeeping = BOOKKEEPINGS[(r + k) % BOOKKEEPINGS.length]!;
            const w = await callLearning(page, 'observeWrite', bookkeeping, batch, n, offset);
            offset += batch;
            const key = `${bookkeeping} ${batch}`;
            const into = observed.get(key) ?? { bookkeeping, batch, records: [], edges: [], stalls: [], pings: [] };
            into.records.push(w.records);
            into.edges.push(w.edges);
            into.stalls.push(w.stallMs);
            into.pings.push(w.pingMs);
            observed.set(key, into);
          }
        }
      }
      const writes = [...observed.values()].map((w) => ({
        bookkeeping: w.bookkeeping, batch: w.batch, records: median(w.records), edges: median(w.edges), stallMs: median(w.stalls), stalls: w.stalls, pingMs: median(w.pings),
      }));
      log(`learning ${n}: writes seen from the page ${JSON.stringify(writes)}`);
      // The same writes made alone on the store: per batch size, a warm-up batch, then touch and reinforce in turn.
      const batches = [];
      for (const batch of WRITE_BATCHES) {
        const of = [];
        for (let b = 0; b < 1 + 2 * rounds; b++, offset += batch) of.push(await callLearning(page, 'collectBatch', n, batch, offset));
        batches.push({ batch, of });
      }
      if (offset > n) throw new Error(`bench: ${offset} distinct queries wanted of ${n} memories`);
      await callLearning(page, 'close');
      const storeWrites = [];
      for (const { batch, of } of batches) storeWrites.push({ batch, ...(await callLearning(page, 'timeWrites', name, of)) });
      log(`learning ${n}: writes alone on the store ${JSON.stringify(storeWrites)}; load ${load()}`);
      const atEnd = await callLearning(page, 'size', name);
      const associationBytes = await callLearning(page, 'associationBytes', name);
      log(`learning ${n}: at rest ${JSON.stringify(atEnd)}; associations take ${JSON.stringify(associationBytes)}`);

      out.push({
        n, load: { start: start.load, end: load() }, minutes: (Date.now() - start.at) / 60_000, opened,
        size: { beforeStream, afterStream, atEnd }, associationBytes,
        stream: {
          baseline: percentiles(baseline.ms), reinforce: percentiles(reinforce.ms.slice(0, baseline.ms.length)), reinforceAll: percentiles(reinforce.ms),
          checkpoints: reinforce.checkpoints,
        },
        growthPer1k, replay, timed, ratios, writes, storeWrites,
      });
    }
  } finally {
    await page.close();
  }
  return out;
}

function reportLearning(bySize: LearningSize[] | undefined): void {
  if (!bySize?.length) return;
  const f = (x: number, digits = 2) => round(x, digits);
  console.log(`\n## Learning from use: cost (issue 18); the real worker on OPFS, built-in model, ${rounds} timed round(s)\n`);
  console.log('Search from the page (query embedding included), p50 / p99 / mean ms, and × the baseline in the same run:\n');
  console.log('| memories | search options | p50 | p99 | mean | × p50 | × p99 | `associate` stage mean ms | `reinforce` stage mean ms | memories added by `associate` / search | associative hits / search |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  const label: Record<Config, string> = {
    baseline: '`reinforce: false, associations: false` (baseline)',
    reinforce: '`reinforce: true` (default)',
    associations: '`reinforce: true, associations: {}`',
  };
  for (const s of bySize) {
    for (const c of LEARNING_CONFIGS) {
      const t = s.timed[c];
      const r = c === 'baseline' ? { p50: 1, p99: 1 } : s.ratios[c];
      const stageMs = (x: number) => (Number.isNaN(x) ? '–' : f(x, 3));
      console.log(`| ${s.n.toLocaleString('en')} | ${label[c]} | ${f(t.p50)} | ${f(t.p99)} | ${f(t.mean)} | ${f(r.p50)} | ${f(r.p99)} | ${stageMs(t.associateMeanMs)} | ${stageMs(t.reinforceMeanMs)} | ${f(t.addedPerSearch, 1)} | ${f(t.associativeHitsPerSearch, 1)} |`);
    }
  }
  console.log('\nA stream of distinct queries back to back (bookkeeping writes fall inside it), p50 / p99 / max ms:\n');
  console.log('| memories | baseline (1,000) | reinforce, the same 1,000 | × p50 | × p99 | reinforce, all 2,000 |');
  console.log('|---|---|---|---|---|---|');
  const ppm = (p: Percentiles) => `${f(p.p50)} / ${f(p.p99)} / ${f(p.max, 1)}`;
  for (const s of bySize) {
    console.log(`| ${s.n.toLocaleString('en')} | ${ppm(s.stream.baseline)} | ${ppm(s.stream.reinforce)} | ${f(s.stream.reinforce.p50 / s.stream.baseline.p50)} | ${f(s.stream.reinforce.p99 / s.stream.baseline.p99)} | ${ppm(s.stream.reinforceAll)} |`);
  }
  console.log('\nStore growth with reinforcement on (distinct queries: every search forms new pairs), at rest:\n');
  console.log('| memories | associations after 1,000 / 2,000 searches | associations per 1,000 | database bytes before → after | growth per 1,000 searches, bytes | of which associations (their pages at the end ÷ their count) | bytes per memory before |');
  console.log('|---|---|---|---|---|---|---|');
  for (const s of bySize) {
    const { beforeStream: b, afterStream: a } = s.size;
    const checkpoints = s.stream.checkpoints.map((c) => c.associations.toLocaleString('en')).join(' / ');
    console.log(`| ${s.n.toLocaleString('en')} | ${checkpoints} | ${round(s.growthPer1k.associations).toLocaleString('en')} | ${b.bytes.toLocaleString('en')} → ${a.bytes.toLocaleString('en')} | ${round(s.growthPer1k.bytes).toLocaleString('en')} | ${round(s.growthPer1k.associations * s.associationBytes.perAssociation).toLocaleString('en')} (${f(s.associationBytes.perAssociation, 0)} bytes × ${round(s.growthPer1k.associations).toLocaleString('en')}) | ${f(b.bytes / b.memories, 0)} |`);
  }
  console.log('\nReplay of the learning set with reinforcement on; after each pass, a read-only pass with associations on:\n');
  console.log('| memories | pass | associations | searches where `associate` added memories | memories added | associative hits in the answers |');
  console.log('|---|---|---|---|---|---|');
  for (const s of bySize) {
    for (const p of s.replay) console.log(`| ${s.n.toLocaleString('en')} | ${p.pass} | ${p.associations.toLocaleString('en')} | ${p.searchesAdded} of ${p.searches} | ${p.added} | ${p.hitsAssociative} |`);
  }
  console.log(`\nThe coalesced bookkeeping write after a batch of searches (each from a different memory), made alone on the store (SQLite on OPFS, median of ${rounds}):\n`);
  console.log('| memories | searches in the batch | bookkeeping | records written | associations written | write ms (runs) | × touch |');
  console.log('|---|---|---|---|---|---|---|');
  for (const s of bySize) {
    for (const w of s.storeWrites) {
      for (const kind of ['touch', 'reinforce'] as const) {
        const x = w[kind];
        console.log(`| ${s.n.toLocaleString('en')} | ${w.batch} | ${kind} | ${x.records} | ${kind === 'touch' ? '–' : x.edges} | ${f(x.ms, 1)} (${x.runs.map((r) => f(r, 1)).join(', ')}) | ${kind === 'touch' ? 1 : f(x.ms / w.touch.ms)} |`);
      }
    }
  }
  console.log(`\nThe same writes seen from the page: the worker's stall around the time the write is due, from back-to-back pings (median of ${rounds}):\n`);
  console.log('| memories | searches in the batch | bookkeeping | records written | associations written | stall ms (runs) |');
  console.log('|---|---|---|---|---|---|');
  for (const s of bySize) {
    for (const w of s.writes) {
      const records = w.bookkeeping === 'none' ? '–' : String(w.records);
      const edges = w.bookkeeping === 'reinforce' ? String(w.edges) : '–';
      console.log(`| ${s.n.toLocaleString('en')} | ${w.batch} | ${w.bookkeeping === 'none' ? 'none (`touch: false`: the noise floor)' : w.bookkeeping} | ${records} | ${edges} | ${f(w.stallMs, 1)} (${w.stalls.map((x) => f(x, 1)).join(', ')}) |`);
    }
  }
  for (const s of bySize) {
    const a = s.associationBytes;
    console.log(`- ${s.n.toLocaleString('en')}: at the end ${a.associations.toLocaleString('en')} associations in ${a.bytes.toLocaleString('en')} bytes of pages (${f(a.perAssociation, 0)} per association); database ${s.size.atEnd.bytes.toLocaleString('en')} bytes`);
  }
  for (const s of bySize) console.log(`- ${s.n.toLocaleString('en')}: 1-minute load average ${s.load.start} at the start, ${s.load.end} at the end (${f(s.minutes, 1)} min)`);
}

await main();
