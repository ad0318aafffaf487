/**
 * Leave-one-conversation-out check of the tuned defaults: `npx tsx bench/tune.ts [--data <folder>] [--no-doc]`.
 * For each conversation, picks the best grid point (fusion weights × neighbour window × neighbour weight) on
 * the other conversations (R@10 + nDCG@10, question-weighted), and scores it on the held-out one. If the
 * held-out figures match the defaults' own, the defaults are not fitted to these five files.
 * Writes the table into docs/quality.md (block `tune`) unless `--no-doc`.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultSearchOptions } from '../src/advanced.js';
import { createEmbedder } from '../src/index.js';
import type { MetricRow } from './lib/metrics.js';
import { closeEngines, engineRanker } from './lib/rankers.js';
import { commitLabel, updateMarkedBlock } from './lib/report.js';
import { dataFolder, evaluateRanker, loadOrSkip, type RankerReport } from './lib/run.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

interface Point {
  lexical: number;
  window: number;
  weight: number;
}

const GRID: Point[] = [];
for (const lexical of [0.7, 0.8, 0.9]) for (const window of [1, 2, 3]) for (const weight of [0.3, 0.5, 0.7]) GRID.push({ lexical, window, weight });

const label = (p: Point) => `weights ${p.lexical} / ${+(1 - p.lexical).toFixed(1)}, window ${p.window}, weight ${p.weight}`;
const objective = (row: MetricRow) => row.r10 + row.ndcg10;

async function main(): Promise<void> {
  const conversations = loadOrSkip(dataFolder(args), 'tune');
  if (!conversations) return;
  const embedder = await createEmbedder();
  const reports: { point: Point; report: RankerReport }[] = [];
  for (const point of GRID) {
    const ranker = engineRanker(label(point), {
      search: {
        touch: false,
        weights: { lexical: point.lexical, vector: 1 - point.lexical },
        neighbours: { window: point.window, weight: point.weight, lenders: 20 },
      },
    });
    const report = await evaluateRanker(ranker, conversations, embedder);
    console.error(`  ${report.name}: R@10 ${report.overall.r10.toFixed(3)} nDCG@10 ${report.overall.ndcg10.toFixed(3)}`);
    reports.push({ point, report });
  }
  const defaults = defaultSearchOptions.neighbours;
  const isDefault = (p: Point) =>
    defaults !== false && p.lexical === defaultSearchOptions.weights.lexical && p.window === defaults.window && p.weight === defaults.weight;

  const rows: string[] = [];
  let heldR10 = 0;
  let heldNdcg = 0;
  let defaultR10 = 0;
  let defaultNdcg = 0;
  let questions = 0;
  for (const { name } of conversations) {
    const trainScore = ({ report }: { report: RankerReport }) =>
      Object.entries(report.byConversation).reduce((sum, [conv, row]) => (conv === name ? sum : sum + objective(row) * row.n), 0);
    const best = reports.reduce((a, b) => (trainScore(b) > trainScore(a) ? b : a));
    const held = best.report.byConversation[name]!;
    const dflt = reports.find((r) => isDefault(r.point))?.report.byConversation[name];
    heldR10 += held.r10 * held.n;
    heldNdcg += held.ndcg10 * held.n;
    defaultR10 += (dflt?.r10 ?? NaN) * held.n;
    defaultNdcg += (dflt?.ndcg10 ?? NaN) * held.n;
    questions += held.n;
    rows.push(`| ${name} | ${label(best.point)} | ${held.r10.toFixed(3)} / ${held.ndcg10.toFixed(3)} | ${dflt ? `${dflt.r10.toFixed(3)} / ${dflt.ndcg10.toFixed(3)}` : '—'} |`);
  }
  const top = [...reports].sort((a, b) => objective(b.report.overall) - objective(a.report.overall)).slice(0, 8);
  const table = [
    `Latest \`npx tsx bench/tune.ts\` (commit ${commitLabel(root)}, ${new Date().toISOString().slice(0, 10)}), ${GRID.length} grid points, R@10 / nDCG@10:`,
    '',
    '| held-out conversation | chosen on the other four | held-out score | defaults on it |',
    '|---|---|---|---|',
    ...rows,
    `| **all, question-weighted** | | **${(heldR10 / questions).toFixed(3)} / ${(heldNdcg / questions).toFixed(3)}** | **${(defaultR10 / questions).toFixed(3)} / ${(defaultNdcg / questions).toFixed(3)}** |`,
    '',
    'Best grid points on all five (the surface is flat near the top):',
    '',
    '| grid point | R@10 | nDCG@10 |',
    '|---|---|---|',
    ...top.map(({ point, report }) => `| ${label(point)}${isDefault(point) ? ' (defaults)' : ''} | ${report.overall.r10.toFixed(3)} | ${report.overall.ndcg10.toFixed(3)} |`),
  ].join('\n');
  console.log(table);
  if (!args.includes('--no-doc')) updateMarkedBlock(join(root, 'docs/quality.md'), 'tune', table);
  await closeEngines();
  await embedder.dispose?.();
}

await main();
