/**
 * `npm run bench:worker [-- --sizes 10000,100000 --rounds 3]`: the worker and its store in headless Chromium with
 * a persistent profile (real OPFS; incognito OPFS is an in-memory emulation).
 *
 * - storage backends: the three wa-sqlite VFSs and plain IndexedDB (one object per memory) on the same 10k writes;
 * - ingest memories/s end to end with the built-in model (page → worker → embedding → SQLite → indexes);
 * - cold open (a new worker to the first answer, and to the first answer using the model) at each size;
 * - bytes on disk per memory; what a cold open spends its time on; a follower tab's latency against the leader's;
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
import type { WorkerBench } from './worker/page.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const sizes = option('sizes', '10000,100000').split(',').map(Number);
const productionBuild = !process.argv.includes('--no-build');
const rounds = Number(option('rounds', '3'));
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
    await page.close();

    if (productionBuild) {
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
  writeFileSync(join(resultsDir, 'worker.json'), JSON.stringify(results, null, 1));
  report(results);
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
}

await main();
