/**
 * `npm run bench:embedder`: sentences/s by device and batch size (1, 8, 64) and model load time, for the built-in
 * model and the tiny random BERT, in Node (onnxruntime-node, CPU) and in headless Chromium (WASM, and WebGPU on
 * SwiftShader, which measures correctness of the path, not GPU speed). Also what `device: 'auto'` picks there.
 * Writes bench/results/embedder.json. Flags: --quick (smaller corpus and time budget), --node, --browser.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, chromiumArgs } from '../../test/browser/harness.js';
import { startViteServer } from '../../test/browser/vite-server.js';
import { repoRoot, resultsDir } from '../perf/paths.js';
import { CALIBRATION_TEXTS } from '../../src/embedder/device.js';
import { measureCase, MODEL_CASES, type CaseResult } from './measure.js';
import type * as Page from './page.js';

const LOCOMO = resolve(repoRoot, '../shared/data/locomo-dev');

/** LoCoMo turns (real chat lengths) when the dev data is there, else the calibration sentences cycled. */
function corpus(size: number): { texts: string[]; source: string } {
  if (existsSync(LOCOMO)) {
    const texts: string[] = [];
    for (const file of readdirSync(LOCOMO).filter((name) => name.endsWith('.json')).sort()) {
      const conversation = JSON.parse(readFileSync(join(LOCOMO, file), 'utf8')) as Record<string, unknown>;
      for (const [key, value] of Object.entries(conversation)) {
        if (/^session_\d+$/.test(key)) for (const turn of value as { text: string }[]) texts.push(turn.text);
      }
    }
    return { texts: texts.slice(0, size), source: `LoCoMo dev turns (first ${Math.min(size, texts.length)})` };
  }
  return { texts: Array.from({ length: size }, (_, i) => CALIBRATION_TEXTS[i % CALIBRATION_TEXTS.length] as string), source: 'calibration sentences (LoCoMo dev data absent)' };
}

async function nodeSection(texts: string[], budgetMs: number): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const model of MODEL_CASES) results.push(await measureCase(model, 'cpu', texts, budgetMs));
  return results;
}

async function browserSection(texts: string[], budgetMs: number): Promise<{ results: CaseResult[]; auto: unknown }> {
  // Its own optimizer cache, so the test server's cache is never invalidated by this run.
  const { server, baseURL } = await startViteServer({ frozen: true, config: { cacheDir: resolve(repoRoot, 'node_modules/.vite-bench-embedder') } });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs(true) });
  try {
    const page = await browser.newPage();
    page.on('pageerror', (error) => console.error('[page error]', error.message));
    await page.goto(`${baseURL}/bench/embedder/page.html`);
    await page.waitForFunction(() => 'embedderBench' in globalThis);
    // Closures run in the page: each one reaches the page module through the global the HTML sets.
    type Scope = { embedderBench: typeof Page };
    const results = await page.evaluate(
      ({ texts, budgetMs }) => (globalThis as unknown as Scope).embedderBench.run(['wasm', 'webgpu'], texts, budgetMs),
      { texts, budgetMs },
    );
    const auto = await page.evaluate(() => (globalThis as unknown as Scope).embedderBench.autoChoices());
    return { results, auto };
  } finally {
    await browser.close();
    await server.close();
  }
}

function table(title: string, results: CaseResult[]): string {
  const lines = [`\n${title}`, `${'model'.padEnd(32)} ${'device'.padEnd(7)} ${'load ms'.padStart(8)} ${'warm ms'.padStart(8)} ${'b=1 /s'.padStart(9)} ${'b=8 /s'.padStart(9)} ${'b=64 /s'.padStart(9)}`];
  for (const r of results) {
    const rates = r.throughput.map((t) => t.sentencesPerSecond.toFixed(0).padStart(9)).join(' ');
    lines.push(`${r.model.padEnd(32)} ${r.device.padEnd(7)} ${r.loadMs.toFixed(0).padStart(8)} ${r.warmLoadMs.toFixed(0).padStart(8)} ${rates}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, node: { type: 'boolean', default: false }, browser: { type: 'boolean', default: false } } });
  const both = !values.node && !values.browser;
  const { texts, source } = corpus(values.quick ? 256 : 2048);
  const budgetMs = values.quick ? 1500 : 5000;
  const report: Record<string, unknown> = { date: new Date().toISOString(), corpus: source, budgetMs, cores: (await import('node:os')).cpus().length };
  console.log(`embedder bench: ${source}, up to ${budgetMs} ms per measurement`);
  if (values.node || both) {
    const node = await nodeSection(texts, budgetMs);
    report.node = node;
    console.log(table('Node (onnxruntime-node, CPU)', node));
  }
  if (values.browser || both) {
    const { results, auto } = await browserSection(texts, budgetMs);
    report.browser = results;
    report.browserAuto = auto;
    console.log(table('Headless Chromium (WebGPU = SwiftShader: a correctness path, not GPU speed)', results));
    console.log('\n`device: "auto"` in headless Chromium:', JSON.stringify(auto, null, 1));
  }
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'embedder.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(`\nwrote ${join(resultsDir, 'embedder.json')}`);
}

await main();
