/**
 * `npm run bench [-- --sizes 1000,10000 --dims 384 --rounds 5 --budget 10000 --sections node,browser --no-doc]`
 * (`--report-only` re-renders the docs from bench/results/latest.json without measuring)
 *
 * Runs every section in its own process (fresh heap each): Node (pure pipeline and peers), headless Chromium
 * (the real worker on OPFS and peers in the page), then `npm run bench:embedder` and `npm run bench:worker`
 * when those scripts exist. Writes bench/results/latest.json, and unless --no-doc, docs/bench.md,
 * docs/bench.json and docs/bench-*.svg.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs, toArgv } from './args.js';
import type { SectionResult } from './measure.js';
import { docsDir, repoRoot, resultsDir } from './paths.js';
import { charts, renderMarkdown, targetRows, type BenchResults, type ExtraSection } from './report.js';

const argv = process.argv.slice(2);
const writeDoc = !argv.includes('--no-doc');
const reportOnly = argv.includes('--report-only');
const args = parseArgs(argv.filter((a) => a !== '--no-doc' && a !== '--report-only'));
const failures: string[] = [];
mkdirSync(resultsDir, { recursive: true });

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
  ['browser', 'browser.json', process.execPath, ['--import', 'tsx', 'bench/perf/browser.ts']],
] as const) {
  if (!args.sections.includes(section)) continue;
  rmSync(join(resultsDir, file), { force: true });
  run(`${section} section`, command, [...extra, ...sectionArgs]);
}

// Sections other parts of the project add as npm scripts; their own output is kept verbatim.
const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
const extra: ExtraSection[] = [];
for (const section of ['embedder', 'worker']) {
  const script = `bench:${section}`;
  if (!args.sections.includes(section) || !scripts[script]) continue;
  console.log(`\n=== ${script} ===`);
  const result = spawnSync('npm', ['run', '--silent', script], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  process.stdout.write(output);
  if (result.status !== 0) failures.push(`npm run ${script} exited with ${result.status ?? result.signal}`);
  extra.push({ script, ok: result.status === 0, output: output.split('\n').filter((l) => !l.startsWith('npm warn')).slice(-80).join('\n') });
}

const node = args.sections.includes('node') ? readSection('node.json') : null;
const browser = args.sections.includes('browser') ? readSection('browser.json') : null;
const results: BenchResults = {
  meta: {
    date: new Date().toISOString(),
    command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
    sizes: args.sizes,
    dims: args.dims,
    rounds: args.rounds,
    budgetMs: args.budgetMs,
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    chromium: String(browser?.env.chromium ?? 'not run'),
    failures,
  },
  node,
  browser,
  extra,
};
writeFileSync(join(resultsDir, 'latest.json'), JSON.stringify(results, null, 1));
console.log('\nwrote bench/results/latest.json');

if (writeDoc) writeDocs(results);
for (const row of targetRows(results)) console.log(`${row.holds === null ? '  -' : row.holds ? ' ok' : 'MISS'}  ${row.target}: ${row.measured}`);
if (failures.length > 0) {
  console.log(`\nfailures:\n${failures.map((f) => `  ${f}`).join('\n')}`);
  process.exitCode = 1;
}

function writeDocs(results: BenchResults): void {
  mkdirSync(docsDir, { recursive: true });
  const chartFiles = charts(results);
  for (const chart of chartFiles) writeFileSync(join(docsDir, chart.file), chart.svg);
  writeFileSync(join(docsDir, 'bench.md'), renderMarkdown(results, chartFiles));
  writeFileSync(join(docsDir, 'bench.json'), JSON.stringify(results, null, 1));
  console.log(`wrote docs/bench.md, docs/bench.json, ${chartFiles.map((c) => `docs/${c.file}`).join(', ')}`);
}
