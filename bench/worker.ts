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
import { benchWords, corpusStem, loadCorpus } from './perf/node-data.js';
import { repoRoot, resultsDir } from './perf/paths.js';
import type { Protection, WorkerBench } from './worker/page.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const sizes = option('sizes', '10000,100000').split(',').map(Number);
const productionBuild = !process.argv.includes('--no-build');
const rounds = Number(option('rounds', '3'));
const encryptionOnly = process.argv.includes('--encryption-only');
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

async function openPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (error) => log(`page error: ${error.message}`));
  page.on('console', (message) => message.type() === 'error' && log(`page console: ${message.text()}`));
  await page.goto(url);
  await page.waitForFunction(() => 'workerBench' in window, undefined, { timeout: 120_000 });
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
    if (!encryptionOnly) await storageSections(context, url, page, results);
    results.encryption = await encryptionSection(page);
    await page.close();

    if (productionBuild && !encryptionOnly) {
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
  // A partial run (--encryption-only) writes its own file, so the full run's figures stay.
  writeFileSync(join(resultsDir, encryptionOnly ? 'worker-encryption.json' : 'worker.json'), JSON.stringify(results, null, 1));
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

await main();
