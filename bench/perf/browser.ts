/**
 * Browser section driver: serves the repo with the project's own vite.config.ts, opens the bench page in
 * headless Chromium (a fresh profile, so OPFS starts empty) and runs bench/perf/browser/page.ts size by size.
 * Writes bench/results/browser.json. Run by bench/perf/run.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumArgs } from '../../test/browser/harness.js';
import { startServer } from './browser-server.js';
import { parseArgs } from './args.js';
import { queriesToJson, World } from './data.js';
import type { LoopOptions, SectionResult } from './measure.js';
import { benchQueries, benchWords, cacheDir, corpusStem, DATA_VERSION, loadCorpus } from './node-data.js';
import { resultsDir } from './paths.js';
import { ADD_PROBE, guarded } from './suite.js';

function log(message: string): void {
  console.log(`[bench browser ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

async function openPage(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    const text = message.text();
    if (text.startsWith('[bench')) console.log(text);
    else if (message.type() === 'error' || message.type() === 'warning') console.log(`[page ${message.type()}] ${text}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) console.log(`[page http ${response.status()}] ${response.url()}`);
  });
  page.on('pageerror', (error) => console.log(`[page error] ${error.message}`));
  // Page heap for the bench's heap figures: V8 heap plus array buffer backing stores, after a full GC.
  const cdp = await context.newCDPSession(page);
  await page.exposeFunction('benchPageHeap', async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const usage = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; backingStorageSize?: number };
    return usage.usedSize + (usage.backingStorageSize ?? 0);
  });
  await page.goto(url);
  await page.waitForFunction(() => 'engramBench' in window, undefined, { timeout: 120_000 });
  return page;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const loop: LoopOptions = { rounds: args.rounds, budgetMs: args.budgetMs };
  const out: SectionResult = { latency: [], figures: [], stages: [], notes: [], env: {} };

  // The page fetches the same cached files Node uses: identical data in both sections.
  const world = new World(benchWords());
  const largest = Math.max(...args.sizes) + ADD_PROBE;
  loadCorpus(world, largest);
  const queriesFile = `queries-v${DATA_VERSION}-s${world.seed}.json`;
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(join(cacheDir, queriesFile), JSON.stringify(queriesToJson(benchQueries(world))));
  const stem = `/bench/results/cache/${corpusStem(largest, world.seed)}`;
  const queriesUrl = `/bench/results/cache/${queriesFile}`;

  const { server, baseURL } = await startServer();
  const profile = mkdtempSync(join(tmpdir(), 'engram-bench-'));
  // Eager memory measurement: otherwise measureUserAgentSpecificMemory waits for a GC, up to 20 s.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...chromiumArgs(false), '--enable-blink-features=ForceEagerMeasureMemory'],
  });
  try {
    const url = `${baseURL}/bench/perf/browser/index.html`;
    const sizes = args.dims.includes(384) ? args.sizes : [];
    for (const n of sizes) {
      // A fresh page per size: nothing left over from the previous one in the heap.
      const page = await openPage(context, url);
      out.env = await callPage<Record<string, unknown>>(page, 'setup', { stem, queriesUrl, dim: 384 });
      log(`384-d, ${n} memories (${JSON.stringify(out.env)})`);
      await guarded(out, `browser run at N = ${n}`, log, async () => merge(out, await callPage<SectionResult>(page, 'runSize', { n, loop, worker: true })));
      await page.close();
    }
    if (args.dims.includes(100)) {
      for (const n of args.sizes.filter((s) => s <= args.modelIngestMax)) {
        const page = await openPage(context, url);
        await callPage(page, 'setup', { stem, queriesUrl, dim: 384 });
        log(`built-in model, ${n} memories`);
        await guarded(out, `browser built-in model run at N = ${n}`, log, async () => merge(out, await callPage<SectionResult>(page, 'runModel', { n, loop })));
        await page.close();
      }
    }
    out.env.chromium = context.browser()?.version() ?? 'unknown';
  } finally {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'browser.json'), JSON.stringify(out, null, 1));
  log('wrote bench/results/browser.json');
}

/** Calls `window.engramBench[method](arg)` in the page (bench/perf/browser/page.ts). */
function callPage<T>(page: Page, method: 'setup' | 'runSize' | 'runModel', arg: unknown): Promise<T> {
  return page.evaluate(
    ([m, a]) => (window as unknown as { engramBench: Record<string, (a: unknown) => Promise<unknown>> }).engramBench[m]!(a),
    [method, arg] as const,
  ) as Promise<T>;
}

function merge(into: SectionResult, part: SectionResult): void {
  into.latency.push(...part.latency);
  into.figures.push(...part.figures);
  into.stages.push(...part.stages);
  for (const note of part.notes) if (!into.notes.includes(note)) into.notes.push(note);
}

await main();
