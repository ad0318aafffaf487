/**
 * The one-million section (`npm run bench -- --million`, or `--million-n 200000` for the same path smaller): the
 * corpus streamed from chunk files, the Engram worker on OPFS fed by `import` calls of 10,000 with progress and the
 * ingest rate, then a cold open, both query sets, vector recall@10 against an exact scan computed here from the
 * cached vectors, and the worker's total memory (JS heap + array buffers + WebAssembly memory) read through the
 * Chrome DevTools Protocol on the worker's own target. Writes bench/results/million.json. Run by bench/perf/run.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumArgs } from '../../test/browser/harness.js';
import { parseArgs } from './args.js';
import { startServer } from './browser-server.js';
import { queriesToJson, QUERY_SETS, querySet, SYNTHETIC_DIM, World } from './data.js';
import { ENGRAM_OPS, type EngramOp } from './engram.js';
import { meanRecall, summarise, type LoopOptions, type SectionResult } from './measure.js';
import { benchQueries, benchWords, cacheDir, DATA_VERSION } from './node-data.js';
import { repoRoot, resultsDir } from './paths.js';
import { K } from './peers.js';
import { CHUNK, chunkCount, chunkName, ensureChunks, exactAnswers } from './stream-data.js';
import { recallMetric } from './suite.js';
import type { MillionBench } from './browser/million.js';

/** After the last import: the worker's 10 s quiet time, then the snapshot save (every text hashed) and repack. */
const IDLE_SAVE_WAIT_MS = 60_000;

const WORKER = 'Engram worker (OPFS)';
const EXACT = 'exact scan (Node, top-10 selection)';
/** A call to the page that takes longer than this is a stalled worker: the section ends with a note. */
const CALL_TIMEOUT_MS = 20 * 60_000;
const PROBE_TIMEOUT_MS = 60_000;

function log(message: string): void {
  console.log(`[bench million ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/**
 * The page's CDP session auto-attaches to its workers; Playwright's CDPSession has no per-target session id, so
 * commands reach a worker through Target.sendMessageToTarget (the non-flattened protocol).
 */
class WorkerProbe {
  private readonly workers = new Map<string, string>();
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 1;

  private constructor(private readonly cdp: CDPSession) {
    cdp.on('Target.attachedToTarget', (event) => {
      log(`attached to ${event.targetInfo.type} ${event.targetInfo.url}`);
      if (event.targetInfo.type === 'worker') this.workers.set(event.sessionId, event.targetInfo.url);
    });
    cdp.on('Target.detachedFromTarget', (event) => {
      if (event.sessionId) this.workers.delete(event.sessionId);
    });
    cdp.on('Target.receivedMessageFromTarget', (event) => {
      const message = JSON.parse(event.message) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id!);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
  }

  static async attach(context: BrowserContext, page: Page): Promise<WorkerProbe> {
    const cdp = await context.newCDPSession(page);
    const probe = new WorkerProbe(cdp);
    await cdp.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
    return probe;
  }

  private send<T>(sessionId: string, method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      // A worker that went away never answers: give up rather than wait.
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no answer from the worker in ${PROBE_TIMEOUT_MS / 1000} s`));
      }, PROBE_TIMEOUT_MS);
      const settle = <A extends unknown[]>(f: (...a: A) => void) => (...a: A) => {
        clearTimeout(timer);
        f(...a);
      };
      this.pending.set(id, { resolve: settle(resolve as (value: unknown) => void), reject: settle(reject) });
      this.cdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) }).catch(settle(reject));
    });
  }

  /** The Engram worker's session (the module worker serving worker/index.ts). */
  engramSession(): string | undefined {
    return [...this.workers].find(([, url]) => /worker\/index/.test(url))?.[0] ?? [...this.workers.keys()].at(-1);
  }

  /** JS heap, array-buffer backing stores and WebAssembly memories of the Engram worker, in bytes. */
  async memory(gc = true): Promise<{ heap: number; arrayBuffers: number; wasm: number; total: number } | null> {
    const session = this.engramSession();
    if (!session) return null;
    if (gc) await this.send(session, 'HeapProfiler.collectGarbage');
    const usage = await this.send<{ usedSize: number; backingStorageSize?: number }>(session, 'Runtime.getHeapUsage');
    // Not in backingStorageSize (checked in Chromium 156): every WebAssembly memory, as bench/perf/browser/wasm-tracker.ts saw them.
    const wasmBytes = await this.send<{ result: { value?: number } }>(session, 'Runtime.evaluate', {
      expression: 'globalThis.__engramBenchWasmBytes?.() ?? -1',
      returnByValue: true,
    });
    const heap = usage.usedSize;
    const arrayBuffers = usage.backingStorageSize ?? 0;
    const wasm = wasmBytes.result.value ?? -1;
    if (wasm < 0) throw new Error('the WebAssembly tracker is not loaded in the worker');
    return { heap, arrayBuffers, wasm, total: heap + arrayBuffers + wasm };
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const n = args.millionN;
  const loop: LoopOptions = { rounds: args.rounds, budgetMs: args.budgetMs };
  const out: SectionResult = { latency: [], figures: [], stages: [], notes: [], env: { n, loadStart: loadavg()[0] } };
  const figure = (system: string, metric: string, value: number, unit: string, section: 'node' | 'browser' = 'browser') =>
    out.figures.push({ section, dim: SYNTHETIC_DIM, n, system, metric, value, unit });
  const write = () => {
    out.env.loadEnd = loadavg()[0];
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, 'million.json'), JSON.stringify(out, null, 1));
  };

  const world = new World(benchWords());
  const queries = benchQueries(world);
  log(`${n.toLocaleString('en-US')} memories in chunks of ${CHUNK.toLocaleString('en-US')}`);
  ensureChunks(world, n, log);

  // Exact answers and the time of a plain exact scan, from the cached vectors (one 1.5 GB array at 1M × 384).
  const exact = exactAnswers(world, n, queries, log, (set, times) => out.latency.push({ section: 'node', dim: world.dim, n, system: EXACT, op: 'vector top-10', set, ...summarise(times) }));
  if (!out.latency.some((r) => r.system === EXACT)) out.notes.push(`The exact scan's time is from the run that cached its answers (bench/results/cache), not this one.`);
  runNode(n, out);

  if (args.millionPeers) runPeers(n, out);
  else out.notes.push('MiniSearch at this scale not run (add --million-peers: its own Node process, several minutes). Orama is not run at this scale (its heap at the largest size of the other sections, scaled, is the limit).');

  if (args.millionNodeOnly) {
    out.notes.push('The browser worker at this scale was not run in this run (--million-node-only).');
    write();
    log('wrote bench/results/million.json');
    return;
  }
  const queriesFile = `queries-v${DATA_VERSION}-s${world.seed}.json`;
  writeFileSync(join(cacheDir, queriesFile), JSON.stringify(queriesToJson(queries)));
  const { server, baseURL } = await startServer();
  const profile = mkdtempSync(join(tmpdir(), 'engram-bench-million-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs(false) });
  out.env.chromium = context.browser()?.version() ?? 'unknown';
  let peakBytes = 0;
  try {
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') log(`[page ${message.type()}] ${message.text()}`);
    });
    page.on('pageerror', (error) => log(`[page error] ${error.message}`));
    // Any of these ends a pending call at once: a renderer crash, the worker going away, or a stalled call.
    let gone: string | null = null;
    const goneWaiters = new Set<(reason: string) => void>();
    const fail = (reason: string) => {
      gone ??= reason;
      for (const waiter of goneWaiters) waiter(reason);
    };
    page.on('crash', () => fail('the page crashed (renderer out of memory?)'));
    page.on('worker', (worker) => worker.on('close', () => log(`worker closed: ${worker.url()}`)));
    const probe = await WorkerProbe.attach(context, page);
    await page.goto(`${baseURL}/bench/perf/browser/million.html`);
    await page.waitForFunction(() => 'millionBench' in window, undefined, { timeout: 120_000 });

    const call = async <M extends keyof MillionBench>(method: M, ...callArgs: Parameters<MillionBench[M]>): Promise<Awaited<ReturnType<MillionBench[M]>>> => {
      if (gone) throw new Error(gone);
      let onGone: (reason: string) => void = () => {};
      let timer: NodeJS.Timeout | undefined;
      const stop = new Promise<never>((_, reject) => {
        onGone = (reason) => reject(new Error(reason));
        goneWaiters.add(onGone);
        timer = setTimeout(() => reject(new Error(`${method} took over ${CALL_TIMEOUT_MS / 60_000} min`)), CALL_TIMEOUT_MS);
      });
      try {
        return (await Promise.race([
          page.evaluate(([m, a]) => (window as unknown as { millionBench: Record<string, (...x: unknown[]) => unknown> }).millionBench[m]!(...a), [method, callArgs] as const),
          stop,
        ])) as Awaited<ReturnType<MillionBench[M]>>;
      } finally {
        goneWaiters.delete(onGone);
        clearTimeout(timer);
      }
    };
    const sample = async (label: string, gc = true) => {
      const memory = await probe.memory(gc).catch((error: unknown) => {
        log(`memory probe failed: ${String(error)}`);
        return null;
      });
      if (!memory) return null;
      // Only after a GC: a sample without one counts garbage the worker would collect anyway.
      if (gc) peakBytes = Math.max(peakBytes, memory.total);
      log(`worker memory ${label}${gc ? '' : ' (no GC)'}: heap ${mb(memory.heap)} MB + array buffers ${mb(memory.arrayBuffers)} MB + wasm ${mb(memory.wasm)} MB = ${mb(memory.total)} MB`);
      return memory;
    };
    const recordMemory = (label: string, memory: Awaited<ReturnType<typeof sample>>) => {
      if (!memory) return;
      figure(WORKER, `worker memory ${label}: JS heap MB`, memory.heap / 2 ** 20, 'MB');
      figure(WORKER, `worker memory ${label}: array buffers MB`, memory.arrayBuffers / 2 ** 20, 'MB');
      figure(WORKER, `worker memory ${label}: WebAssembly MB`, memory.wasm / 2 ** 20, 'MB');
      figure(WORKER, `worker memory ${label}: total MB`, memory.total / 2 ** 20, 'MB');
    };

    let ingested = 0;
    try {
      await call('setup', { name: `bench-million-${n}`, queriesUrl: `/bench/results/cache/${queriesFile}`, dim: world.dim });
      await call('open');
      const start = performance.now();
      for (let k = 0; k < chunkCount(n); k++) {
        const count = Math.min(CHUNK, n - k * CHUNK);
        const { ms } = await call('ingestChunk', { stem: `/bench/results/cache/${chunkName(world.seed, k)}`, start: k * CHUNK, count });
        ingested += count;
        const seconds = (performance.now() - start) / 1000;
        log(`ingested ${ingested.toLocaleString('en-US')}/${n.toLocaleString('en-US')}: this chunk ${Math.round(count / (ms / 1000))}/s, overall ${Math.round(ingested / seconds)}/s`);
        // Without a GC: cheap enough between chunks, and it shows the growth.
        if (k % 4 === 3) await sample(`at ${ingested}`, false);
      }
      figure(WORKER, 'ingest memories/s', n / ((performance.now() - start) / 1000), '/s');
      figure(WORKER, 'memories stored', await call('count'), '');
      recordMemory('after ingest', await sample('after ingest'));
      // What an app's worker holds once it goes quiet after a large import: the worker saves the lexical snapshot
      // after 10 s without changes and keeps its index in the snapshot's packed form.
      await new Promise((resolve) => setTimeout(resolve, IDLE_SAVE_WAIT_MS));
      recordMemory('after ingest, once idle', await sample('after ingest, once idle'));
      await call('close');
      // The closed worker's memory is reclaimed first, as in the other sections' cold open.
      await new Promise((resolve) => setTimeout(resolve, 5000));

      const cold = await call('coldOpen');
      figure(WORKER, 'cold open to first answer ms', cold.firstAnswerMs, 'ms');
      figure(WORKER, 'cold open to first hybrid answer ms', cold.hybridMs, 'ms');
      log(`cold open: first answer ${Math.round(cold.firstAnswerMs)} ms, hybrid ${Math.round(cold.hybridMs)} ms (${cold.mode})`);
      recordMemory('after cold open', await sample('after cold open'));

      for (const set of await call('sets')) {
        for (const op of Object.keys(ENGRAM_OPS) as EngramOp[]) {
          const { latency, stages } = await call('timeSet', { set, op, loop });
          out.latency.push({ section: 'browser', dim: world.dim, n, system: WORKER, op, set, ...latency });
          out.stages.push(...stages.map((row) => ({ section: 'browser' as const, dim: world.dim, n, system: WORKER, set, ...row })));
          log(`${op} (${set} set): p50 ${latency.p50.toFixed(2)} ms, p99 ${latency.p99.toFixed(2)} ms`);
        }
      }
      const answers = await call('vectorAnswers');
      for (const set of QUERY_SETS) {
        const inSet = querySet(queries, set);
        if (inSet.length === 0) continue;
        const recall = meanRecall(new Map(inSet.map((q) => [q, answers[q.name] ?? []])), new Map(inSet.map((q) => [q, exact.get(q.name) ?? []])), K);
        figure(WORKER, recallMetric(set), recall, '');
        log(`${recallMetric(set)}: ${recall.toFixed(3)}`);
      }
      recordMemory('after the query sets', await sample('after the query sets'));
      figure(WORKER, 'total worker memory MB (peak)', peakBytes / 2 ** 20, 'MB');
      await call('close');
    } catch (error) {
      const message = `${WORKER} at N = ${n.toLocaleString('en-US')} failed after ${ingested.toLocaleString('en-US')} memories ingested: ${firstLine(error)}`;
      log(message);
      out.notes.push(message);
      if (peakBytes > 0) figure(WORKER, 'total worker memory MB (peak before the failure)', peakBytes / 2 ** 20, 'MB');
    }
  } finally {
    write();
    await context.close().catch(() => {});
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  log('wrote bench/results/million.json');
}

/** An error's first line, short enough for a table cell. */
function firstLine(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.replace(/^page\.evaluate: /, '');
  return text.length > 240 ? `${text.slice(0, 240)}…` : text;
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** Engram in Node at this scale (bench/perf/million-node.ts), in its own process: its RSS is the engine's alone. */
function runNode(n: number, out: SectionResult): void {
  const file = join(resultsDir, 'million-node.json');
  rmSync(file, { force: true });
  log('Engram in Node at this scale (its own process)');
  const result = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/perf/million-node.ts', `--million-n=${n}`], { cwd: repoRoot, stdio: 'inherit' });
  if (result.status !== 0 || !existsSync(file)) {
    out.notes.push(`Engram in Node at N = ${n.toLocaleString('en-US')} failed: its process exited with ${result.status ?? result.signal}.`);
    return;
  }
  mergeSection(out, JSON.parse(readFileSync(file, 'utf8')) as SectionResult);
}

function mergeSection(out: SectionResult, part: SectionResult): void {
  out.latency.push(...part.latency);
  out.figures.push(...part.figures);
  out.stages.push(...part.stages);
  out.notes.push(...part.notes);
}

/** MiniSearch at this scale, in its own process (a peer that runs out of memory must not end this section). */
function runPeers(n: number, out: SectionResult): void {
  const file = join(resultsDir, 'million-peers.json');
  rmSync(file, { force: true });
  log('MiniSearch at this scale (its own process)');
  const result = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', 'bench/perf/million-peers.ts', `--million-n=${n}`], { cwd: repoRoot, stdio: 'inherit' });
  if (result.status !== 0 || !existsSync(file)) {
    out.notes.push(`MiniSearch at N = ${n.toLocaleString('en-US')} failed: its process exited with ${result.status ?? result.signal}.`);
    return;
  }
  mergeSection(out, JSON.parse(readFileSync(file, 'utf8')) as SectionResult);
}

await main();
