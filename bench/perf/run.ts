/**
 * `npm run bench [-- --sizes 1000,10000 --dims 384 --rounds 5 --budget 10000 --sections node,browser --no-doc]`
 * (`--report-only` re-renders the docs from bench/results/latest.json without measuring; `--doc-dir=<dir>` writes them
 * there instead of docs/; `--million` adds the one-million scale, `--million-n 200000` the same path smaller)
 *
 * Runs every section in its own process (fresh heap each): Node (pure pipeline and peers), writes (a chat turn:
 * add one, then search; `add` at N), long memories (documents and a chat), the vector leg alone (IVF against the
 * exact scan, uniform and clustered vectors), headless Chromium
 * (the real worker on OPFS and peers in the page), then `npm run bench:embedder` and `npm run bench:worker`
 * when those scripts exist (`--sections sync` adds `npm run bench:sync`, a new device receiving through a local S3
 * server: not in the default run, it takes minutes). Writes bench/results/latest.json, and unless --no-doc, docs/bench.md,
 * docs/bench.json and docs/bench-*.svg.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs, toArgv } from './args.js';
import type { IvfBenchRow } from './ivf.js';
import type { SectionResult } from './measure.js';
import { docsDir, repoRoot, resultsDir } from './paths.js';
import { charts, issue45Rows, renderMarkdown, targetRows, type BenchResults, type ExtraSection, type SectionLoad } from './report.js';

const argv = process.argv.slice(2);
const writeDoc = !argv.includes('--no-doc');
const reportOnly = argv.includes('--report-only');
// `--doc-dir=/tmp/x` renders the docs there instead of docs/ (to inspect a run without touching docs/bench.md).
const docDirFlag = argv.find((a) => a.startsWith('--doc-dir='));
const outDir = docDirFlag ? docDirFlag.slice('--doc-dir='.length) : docsDir;
// `--keep-others`: sections not run now keep their figures from the previous bench/results/latest.json, so the slow
// million section can be run on its own and still land in one report.
const keepOthers = argv.includes('--keep-others');
const args = parseArgs(argv.filter((a) => a !== '--no-doc' && a !== '--report-only' && a !== docDirFlag && a !== '--keep-others'));
const failures: string[] = [];
/** 1-minute load average at the start and end of each section: the machine is shared. */
const loads: SectionLoad[] = [];
mkdirSync(resultsDir, { recursive: true });

function timedSection<T>(section: string, body: () => T): T {
  const start = loadavg()[0]!;
  const t0 = performance.now();
  try {
    return body();
  } finally {
    loads.push({ section, start, end: loadavg()[0]!, minutes: (performance.now() - t0) / 60_000 });
  }
}

if (reportOnly) {
  const results = JSON.parse(readFileSync(join(resultsDir, 'latest.json'), 'utf8')) as BenchResults;
  writeDocs(results);
  process.exit(0);
}

function run(label: string, command: string, commandArgs: string[]): boolean {
  console.log(`\n=== ${label} ===`);
  const result = spawnSync(command, commandArgs, { cwd: repoRoot, stdio: 'inherit' });
  if (result.status !== 0) failures.push(`${label} exited with ${result.status ?? result.signal}`);
  return result.status === 0;
}

function readSection(file: string): SectionResult | null {
  const path = join(resultsDir, file);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as SectionResult) : null;
}

const model = spawnSync('npm', ['run', '--silent', 'ensure-model'], { cwd: repoRoot, stdio: 'inherit' });
if (model.status !== 0) failures.push('npm run ensure-model failed: 100-d runs may be skipped');

const sectionArgs = toArgv(args);
for (const [section, file, command, extra] of [
  ['node', 'node.json', process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', 'bench/perf/node.ts']],
  ['writes', 'writes.json', process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', 'bench/perf/writes.ts']],
  ['long', 'long.json', process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/perf/long.ts']],
  ['browser', 'browser.json', process.execPath, ['--import', 'tsx', 'bench/perf/browser.ts']],
  ['ivf', 'ivf.json', process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/perf/ivf.ts']],
  ['million', 'million.json', process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', 'bench/perf/million.ts']],
] as const) {
  if (!args.sections.includes(section)) continue;
  rmSync(join(resultsDir, file), { force: true });
  timedSection(section, () => run(`${section} section`, command, [...extra, ...sectionArgs]));
}

// Sections other parts of the project add as npm scripts; their own output is kept verbatim.
const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
const extra: ExtraSection[] = [];
for (const section of ['embedder', 'worker', 'sync']) {
  const script = `bench:${section}`;
  if (!args.sections.includes(section) || !scripts[script]) continue;
  console.log(`\n=== ${script} ===`);
  const result = timedSection(section, () => spawnSync('npm', ['run', '--silent', script], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 }));
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  process.stdout.write(output);
  if (result.status !== 0) failures.push(`npm run ${script} exited with ${result.status ?? result.signal}`);
  extra.push({ script, ok: result.status === 0, output: output.split('\n').filter((l) => !l.startsWith('npm warn')).slice(-80).join('\n') });
}

const node = args.sections.includes('node') ? readSection('node.json') : null;
const browser = args.sections.includes('browser') ? readSection('browser.json') : null;
const million = args.sections.includes('million') ? readSection('million.json') : null;
const writes = args.sections.includes('writes') ? readSection('writes.json') : null;
const ivf = args.sections.includes('ivf') && existsSync(join(resultsDir, 'ivf.json')) ? (JSON.parse(readFileSync(join(resultsDir, 'ivf.json'), 'utf8')) as IvfBenchRow[]) : null;
const long = args.sections.includes('long') && existsSync(join(resultsDir, 'long.json')) ? (JSON.parse(readFileSync(join(resultsDir, 'long.json'), 'utf8')) as NonNullable<BenchResults['long']>) : null;
const previous: BenchResults | null = keepOthers && existsSync(join(resultsDir, 'latest.json')) ? (JSON.parse(readFileSync(join(resultsDir, 'latest.json'), 'utf8')) as BenchResults) : null;
const kept = (section: string) => previous !== null && !args.sections.includes(section);
if (previous) {
  for (const load of previous.meta.loads ?? []) if (kept(load.section)) loads.push(load);
  for (const section of previous.extra) if (kept(section.script.replace('bench:', '')) && !extra.some((e) => e.script === section.script)) extra.push(section);
}
const results: BenchResults = {
  meta: {
    date: new Date().toISOString(),
    command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}${previous ? ` (other sections from the run of ${previous.meta.date.slice(0, 16)}: ${previous.meta.command})` : ''}`,
    sizes: kept('node') && kept('browser') ? previous!.meta.sizes : args.sizes,
    dims: kept('node') && kept('browser') ? previous!.meta.dims : args.dims,
    rounds: args.rounds,
    budgetMs: args.budgetMs,
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    // A browser section kept from the previous run keeps its Chromium.
    chromium: String(browser?.env.chromium ?? million?.env.chromium ?? (kept('browser') || kept('million') ? previous!.meta.chromium : 'not run')),
    failures,
    loads,
  },
  node: node ?? (kept('node') ? previous!.node : null),
  browser: browser ?? (kept('browser') ? previous!.browser : null),
  million: million ?? (kept('million') ? (previous!.million ?? null) : null),
  writes: writes ?? (kept('writes') ? (previous!.writes ?? null) : null),
  long: long ?? (kept('long') ? (previous!.long ?? null) : null),
  ivf: ivf ?? (kept('ivf') ? (previous!.ivf ?? null) : null),
  extra,
};
writeFileSync(join(resultsDir, 'latest.json'), JSON.stringify(results, null, 1));
console.log('\nwrote bench/results/latest.json');

if (writeDoc) writeDocs(results);
for (const row of [...targetRows(results), ...issue45Rows(results)]) console.log(`${row.holds === null ? '  -' : row.holds ? ' ok' : 'MISS'}  ${row.target}: ${row.measured}`);
if (failures.length > 0) {
  console.log(`\nfailures:\n${failures.map((f) => `  ${f}`).join('\n')}`);
  process.exitCode = 1;
}

function writeDocs(results: BenchResults): void {
  mkdirSync(outDir, { recursive: true });
  const chartFiles = charts(results);
  for (const chart of chartFiles) writeFileSync(join(outDir, chart.file), chart.svg);
  writeFileSync(join(outDir, 'bench.md'), withKeptSections(renderMarkdown(results, chartFiles), join(outDir, 'bench.md')));
  writeFileSync(join(outDir, 'bench.json'), JSON.stringify(results, null, 1));
  console.log(`wrote ${outDir}/bench.md, bench.json, ${chartFiles.map((c) => c.file).join(', ')}`);
}

/**
 * Sections other benches wrote into bench.md between `<!-- name: … -->` and `<!-- /name -->` (the learning cost
 * from `bench:worker -- --learning-only`) survive a regeneration, placed before the code-choices section.
 */
function withKeptSections(doc: string, previousFile: string): string {
  const previous = existsSync(previousFile) ? readFileSync(previousFile, 'utf8') : '';
  const kept = previous.match(/<!-- ([a-z-]+):[^\n]*-->\n[\s\S]*?<!-- \/\1 -->\n/g) ?? [];
  if (kept.length === 0) return doc;
  const at = doc.indexOf('## Measurements behind choices in the code');
  const block = kept.map((section) => `${section}\n`).join('');
  return at < 0 ? `${doc}\n${block}` : doc.slice(0, at) + block + doc.slice(at);
}
