/**
 * The README's quick start in every browser engine of this machine (engines.ts): open, add at once, hybrid search
 * once the model is in, close, reopen and find the memories again; for each storage the engine can use.
 *
 *   npx tsx test/browser/engines-smoke.ts                      # dev server and production build, all engines
 *   npx tsx test/browser/engines-smoke.ts --mode prod --engines firefox,webkit
 *   npx tsx test/browser/engines-smoke.ts --url http://127.0.0.1:4173/probe.html   # any page with window.engram
 *
 * Modes: `dev` serves the repository with its Vite dev server; `prod` builds the memory lab page with `vite build`
 * (chunked as an app ships it: the case where WebKit evaluated the worker's entry twice) and serves it with
 * `vite preview`; `--url` uses a page that exposes `window.engram = { createMemory }` (e.g. an app built from the
 * `npm pack` tarball). Everything listens on 127.0.0.1 only. Exits 1 if any step of any engine failed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ENGINES, launchEngine, type EngineName } from './engines.js';

const repoRoot = resolve(import.meta.dirname, '../..');
const LAB = '/test/browser/pages/memory-lab.html';

/** Storages each engine offers: WebKitGTK has no OPFS sync access handles (Engram falls back to IndexedDB). */
const STORAGES: Record<EngineName, string[]> = { chromium: ['opfs', 'idb'], firefox: ['opfs', 'idb'], webkit: ['idb', 'auto'] };

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'dev,prod' },
    engines: { type: 'string', default: ENGINES.join(',') },
    url: { type: 'string' },
    echo: { type: 'boolean', default: false },
  },
});

/** The scenario, run in the page: every step's outcome, or the coded error it ended with. */
const SCENARIO = (storage: string) => `
  const { createMemory } = window.engram;
  const name = 'smoke-' + ${JSON.stringify(storage)};
  const t0 = performance.now();
  const steps = [];
  const step = async (label, run) => {
    try {
      const value = await run();
      steps.push({ step: label, ms: Math.round(performance.now() - t0), value });
      return value;
    } catch (error) {
      steps.push({ step: label, ms: Math.round(performance.now() - t0), error: (error.code ? error.code + ': ' : '') + error.message });
      throw error;
    }
  };
  const options = { name, storage: ${JSON.stringify(storage)}, openTimeoutMs: 60000 };
  try {
    let memory = await step('open', async () => { const m = await createMemory(options); window.__smoke = m; return 'ok'; });
    memory = window.__smoke;
    await step('add at once', async () => (await memory.add([
      { text: 'The cat slept on the warm windowsill all afternoon', tags: ['pets'] },
      { text: 'Quarterly revenue grew by ten percent in the northern region', tags: ['work'] },
      { text: 'Remember to water the tomato plants every morning', tags: ['garden'] },
    ])).length);
    await step('model attached', async () => {
      for (let i = 0; i < 240; i++) {
        const status = await memory.status();
        if (status.error) throw Object.assign(new Error(status.error.message), { code: status.error.code });
        if (status.embedder && !status.indexing) return { storage: status.storage, embedder: status.embedder, persisted: status.persisted };
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error('the model was not attached within 60 s');
    });
    await step('hybrid search', async () => {
      const { hits, trace } = await memory.search('a kitten napping', { k: 2 });
      if (trace.mode !== 'hybrid') throw new Error('search mode ' + trace.mode);
      return { mode: trace.mode, top: hits[0]?.text };
    });
    await step('close', () => memory.close().then(() => 'ok'));
    memory = await step('reopen', async () => { window.__smoke = await createMemory(options); return 'ok'; }).then(() => window.__smoke);
    await step('count after reopen', () => memory.count());
    await step('lexical search after reopen', async () => (await memory.search('tomato plants', { k: 1, mode: 'lexical' })).hits[0]?.text ?? null);
    await step('close again', () => memory.close().then(() => 'ok'));
  } catch {}
  return steps;
`;

interface Target {
  label: string;
  url: string;
  stop(): Promise<void>;
}

async function devTarget(): Promise<Target> {
  const { startViteServer } = await import('./vite-server.js');
  const { server, baseURL } = await startViteServer({ frozen: true, keepModules: true });
  return { label: 'dev', url: baseURL + LAB, stop: () => server.close() };
}

async function prodTarget(): Promise<Target> {
  const { build, preview } = await import('vite');
  const configFile = join(repoRoot, 'vite.config.ts');
  const outDir = mkdtempSync(join(tmpdir(), 'engram-smoke-build-'));
  await build({ configFile, logLevel: 'warn', build: { outDir, emptyOutDir: true, rollupOptions: { input: join(repoRoot, LAB.slice(1)) } } });
  const server = await preview({ configFile, logLevel: 'warn', build: { outDir }, preview: { port: 0, host: '127.0.0.1', open: false } });
  const address = server.httpServer.address();
  if (!address || typeof address === 'string') throw new Error('vite preview has no port');
  return {
    label: 'prod',
    url: `http://127.0.0.1:${address.port}${LAB}`,
    stop: async () => {
      await server.close();
      rmSync(outDir, { recursive: true, force: true });
    },
  };
}

const engines = values.engines!.split(',') as EngineName[];
const targets: (() => Promise<Target>)[] = values.url
  ? [async () => ({ label: 'url', url: values.url!, stop: async () => {} })]
  : values.mode!.split(',').map((mode) => (mode === 'dev' ? devTarget : prodTarget));

let failed = false;
for (const makeTarget of targets) {
  const target = await makeTarget();
  try {
    for (const engine of engines) {
      for (const storage of STORAGES[engine]) {
        const page = await launchEngine(engine, { echo: values.echo! });
        try {
          await page.open(target.url);
          await page.evaluate(`for (let i = 0; i < 200 && !window.engram; i++) await new Promise((r) => setTimeout(r, 50)); if (!window.engram) throw new Error('the page exposes no window.engram');`, 30_000);
          const steps = await page.evaluate<{ step: string; ms: number; value?: unknown; error?: string }[]>(SCENARIO(storage), 240_000);
          const ok = steps.length > 0 && steps.every((s) => !s.error) && steps.at(-1)!.step === 'close again' && steps.find((s) => s.step === 'count after reopen')?.value === 3;
          if (!ok) failed = true;
          console.log(`${ok ? 'PASS' : 'FAIL'} ${target.label} ${engine} ${storage}`);
          for (const s of steps) console.log(`  ${String(s.ms).padStart(6)} ms  ${s.step}: ${s.error ? `ERROR ${s.error}` : JSON.stringify(s.value)}`);
          const errors = page.consoleErrors();
          if (errors.length > 0) console.log(`  console errors: ${JSON.stringify(errors.slice(0, 10))}`);
        } catch (error) {
          failed = true;
          console.log(`FAIL ${target.label} ${engine} ${storage}: ${String(error)}`);
        } finally {
          await page.close();
        }
      }
    }
  } finally {
    await target.stop();
  }
}
process.exit(failed ? 1 : 0);
