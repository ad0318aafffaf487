/** Markdown for the harness' reports, and the marked blocks of docs/quality.md they live in. */
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { MetricRow } from './metrics.js';
import { CATEGORY_NAMES, type RankerReport } from './run.js';

const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

function spread(report: RankerReport, metric: keyof MetricRow = 'r10'): string {
  const values = Object.values(report.byConversation).map((row) => row[metric]);
  return `${f3(Math.min(...values))}–${f3(Math.max(...values))}`;
}

export function resultsTable(reports: readonly RankerReport[]): string {
  const categories = Object.values(CATEGORY_NAMES);
  const conversations = Object.keys(reports[0]?.byConversation ?? {});
  return [
    '| ranker | R@5 | R@10 | R@20 | nDCG@10 | session R@10 | mean query ms (wall) | CPU ms |',
    '|---|---|---|---|---|---|---|---|',
    ...reports.map((r) => `| ${r.name} | ${f3(r.overall.r5)} | ${f3(r.overall.r10)} | ${f3(r.overall.r20)} | ${f3(r.overall.ndcg10)} | ${f3(r.overall.s10)} | ${r.meanQueryMs.toFixed(2)} | ${r.meanQueryCpuMs.toFixed(2)} |`),
    '',
    'Per category, session-level R@10 (the share of the sessions holding evidence that the top 10 reach):',
    '',
    `| ranker | ${categories.join(' | ')} |`,
    `|---|${categories.map(() => '---').join('|')}|`,
    ...reports.map((r) => `| ${r.name} | ${categories.map((c) => (r.byCategory[c] ? f3(r.byCategory[c]!.s10) : '—')).join(' | ')} |`),
    '',
    'Per category, R@10 / nDCG@10:',
    '',
    `| ranker | ${categories.map((c) => `${c} (n=${reports[0]?.byCategory[c]?.n ?? 0})`).join(' | ')} |`,
    `|---|${categories.map(() => '---').join('|')}|`,
    ...reports.map((r) => `| ${r.name} | ${categories.map((c) => (r.byCategory[c] ? `${f3(r.byCategory[c]!.r10)} / ${f3(r.byCategory[c]!.ndcg10)}` : '—')).join(' | ')} |`),
    '',
    'Per conversation, R@10 / nDCG@10:',
    '',
    `| ranker | ${conversations.map((c) => `${c} (n=${reports[0]!.byConversation[c]!.n})`).join(' | ')} |`,
    `|---|${conversations.map(() => '---').join('|')}|`,
    ...reports.map((r) => `| ${r.name} | ${conversations.map((c) => `${f3(r.byConversation[c]!.r10)} / ${f3(r.byConversation[c]!.ndcg10)}`).join(' | ')} |`),
  ].join('\n');
}

/** Each variant against the first (the defaults): overall, change, and the spread over conversations. */
export function ablationTable(reports: readonly RankerReport[]): string {
  const base = reports[0]!;
  return [
    '| variant (one change from the defaults) | R@10 | Δ R@10 | nDCG@10 | Δ nDCG@10 | R@5 | R@10 per conversation (min–max) | mean query ms |',
    '|---|---|---|---|---|---|---|---|',
    ...reports.map((r, i) =>
      `| ${r.name} | ${f3(r.overall.r10)} | ${i === 0 ? '' : signed(r.overall.r10 - base.overall.r10)} | ${f3(r.overall.ndcg10)} | ${i === 0 ? '' : signed(r.overall.ndcg10 - base.overall.ndcg10)} | ${f3(r.overall.r5)} | ${spread(r)} | ${r.meanQueryMs.toFixed(2)} |`,
    ),
  ].join('\n');
}

/** Rows in pairs (a way of storing, then one change to it): each second row with its change from the first. */
export function pairedTable(reports: readonly RankerReport[]): string {
  return [
    '| ranker | R@5 | R@10 | Δ R@10 | nDCG@10 | Δ nDCG@10 | session R@10 | R@10 per conversation (min–max) | mean query ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...reports.map((r, i) => {
      const base = i % 2 === 1 ? reports[i - 1]! : null;
      const delta = (metric: 'r10' | 'ndcg10') => (base ? signed(r.overall[metric] - base.overall[metric]) : '');
      return `| ${r.name} | ${f3(r.overall.r5)} | ${f3(r.overall.r10)} | ${delta('r10')} | ${f3(r.overall.ndcg10)} | ${delta('ndcg10')} | ${f3(r.overall.s10)} | ${spread(r)} | ${r.meanQueryMs.toFixed(2)} |`;
    }),
  ].join('\n');
}

export interface Target {
  r10: number;
  ndcg10: number;
  /** Largest allowed shortfall of any category's R@10 and nDCG@10 against the reference ranker. */
  categoryMargin: number;
  meanQueryMs: number;
}

/** Whether `engram` meets the target, line by line, against the `reference` ranker's categories. */
const mark = (ok: boolean) => (ok ? 'met' : '**missed**');

export function targetCheck(engram: RankerReport, reference: RankerReport, target: Target): string {
  const lines = [
    `- recall@10 ≥ ${target.r10}: ${f3(engram.overall.r10)}, ${mark(engram.overall.r10 >= target.r10)}`,
    `- nDCG@10 ≥ ${target.ndcg10}: ${f3(engram.overall.ndcg10)}, ${mark(engram.overall.ndcg10 >= target.ndcg10)}`,
  ];
  for (const [category, row] of Object.entries(engram.byCategory)) {
    const ref = reference.byCategory[category]!;
    const worst = Math.min(row.r10 - ref.r10, row.ndcg10 - ref.ndcg10);
    lines.push(`- ${category} vs ${reference.name} (R@10 ${signed(row.r10 - ref.r10)}, nDCG@10 ${signed(row.ndcg10 - ref.ndcg10)}): ${mark(worst >= -target.categoryMargin)}`);
  }
  lines.push(
    `- mean query latency < ${target.meanQueryMs} ms (embedding included): ${engram.meanQueryMs.toFixed(2)} ms wall, ${mark(engram.meanQueryMs < target.meanQueryMs)} (CPU ${engram.meanQueryCpuMs.toFixed(2)} ms; load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores)`,
  );
  return lines.join('\n');
}

/** Issue 28's chat floors: turn-level R@10 and nDCG@10, and session-level R@10 at or above `bm25`'s in every category. */
export function sessionTargetCheck(engram: RankerReport, bm25: RankerReport, floors: { r10: number; ndcg10: number }): string {
  // The floors are the figures as reported, to three places: compare at that precision.
  const atLeast = (x: number, floor: number) => Number(f3(x)) >= floor;
  const lines = [
    `- recall@10 ≥ ${floors.r10}: ${f3(engram.overall.r10)}, ${mark(atLeast(engram.overall.r10, floors.r10))}`,
    `- nDCG@10 ≥ ${floors.ndcg10}: ${f3(engram.overall.ndcg10)}, ${mark(atLeast(engram.overall.ndcg10, floors.ndcg10))}`,
  ];
  for (const [category, row] of Object.entries(engram.byCategory)) {
    const ref = bm25.byCategory[category]!;
    lines.push(`- ${category}: session R@10 ${f3(row.s10)} vs ${bm25.name} ${f3(ref.s10)}: ${mark(row.s10 >= ref.s10)}`);
  }
  return lines.join('\n');
}

/** Issue 15's targets, offline and with default options: absolute floors, and no category below the issue's baseline. */
export interface StageTarget {
  r10: number;
  ndcg10: number;
  /** R@10 floors per category. */
  category: Record<string, number>;
  /** R@10 / nDCG@10 per category when the issue was written: none may drop. */
  baseline: Record<string, { r10: number; ndcg10: number }>;
  /** R@10 of the memories-without-threads row when the issue was written: it must gain. */
  noThreadsBaseline: number;
}

export function stageTargetCheck(engram: RankerReport, noThreads: RankerReport, target: StageTarget): string {
  const lines = [
    `- recall@10 ≥ ${target.r10}: ${f3(engram.overall.r10)}, ${mark(engram.overall.r10 >= target.r10)}`,
    `- nDCG@10 ≥ ${target.ndcg10}: ${f3(engram.overall.ndcg10)}, ${mark(engram.overall.ndcg10 >= target.ndcg10)}`,
  ];
  for (const [category, floor] of Object.entries(target.category)) {
    const r10 = engram.byCategory[category]!.r10;
    lines.push(`- ${category} recall@10 ≥ ${floor}: ${f3(r10)}, ${mark(r10 >= floor)}`);
  }
  // The baseline was published to 3 decimals: compare at that precision.
  const at3 = (x: number) => Math.round(x * 1000);
  const lower = Object.entries(target.baseline).filter(([category, was]) => {
    const row = engram.byCategory[category]!;
    return at3(row.r10) < at3(was.r10) || at3(row.ndcg10) < at3(was.ndcg10);
  });
  lines.push(`- no category lower than at the issue: ${lower.length === 0 ? 'met' : `**missed** (${lower.map(([c]) => c).join(', ')})`}`);
  const gain = noThreads.overall.r10 - target.noThreadsBaseline;
  lines.push(`- memories without meta.thread gain (recall@10 ${f3(target.noThreadsBaseline)} → ${f3(noThreads.overall.r10)}, ${signed(gain)}): ${mark(gain > 0)}`);
  return lines.join('\n');
}

export function commitLabel(root: string): string {
  try {
    const sha = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
    const dirty = execSync('git status --porcelain -- src bench', { cwd: root }).toString().trim() !== '';
    return dirty ? `${sha} + uncommitted changes` : sha;
  } catch {
    return 'unknown commit';
  }
}

/** Replaces the block between `<!-- name:start -->` and `<!-- name:end -->` (appends it when missing). */
export function updateMarkedBlock(file: string, name: string, body: string): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const block = `${start}\n${body}\n${end}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Retrieval quality\n';
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next = from >= 0 && to > from ? current.slice(0, from) + block + current.slice(to + end.length) : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}
