/**
 * Retrieval-quality harness: `npm run eval -- [--data <folder>] [--beir <folder>] [--no-documents] [--json out.json] [--no-doc] [--ablate]`.
 * Replays each LoCoMo conversation into a fresh engine with the built-in model and default options, asks
 * every category 1-4 question, and scores the ranked turn ids against the evidence, next to its peers on the
 * same memories and vectors. `--ablate` also runs the engine with one technique changed at a time.
 * Then notes (the same turns without threads, each a minute after the one before; and as one batch without dates) and documents (a BEIR corpus
 * in one add, bench/lib/documents.ts): the data sets a ranking default must hold on besides chat.
 * The tables go to stdout, to `--json`, and (unless `--no-doc`) into docs/quality.md.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmbedder } from '../src/index.js';
import { readBeirOrSkip } from './lib/beir.js';
import { documentsTable, documentsTargets, evaluateDocuments, type DocumentsReport } from './lib/documents.js';
import { ablationTable, commitLabel, pairedTable, resultsTable, sessionTargetCheck, stageTargetCheck, targetCheck, updateMarkedBlock, type StageTarget } from './lib/report.js';
import { closeEngines, engineRanker, minisearchDefaults, oramaHybrid, pureLeg } from './lib/rankers.js';
import { dataFolder, evaluateRanker, loadOrSkip, scoredQuestions, type Ranker, type RankerReport } from './lib/run.js';
import { ablations } from './lib/variants.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const QUALITY_DOC = join(root, 'docs/quality.md');
/** BEIR NFCorpus beside the repo, as the LoCoMo dev split (run.ts DEV_SPLIT). */
const BEIR_NFCORPUS = resolve(root, '../shared/data/beir-nfcorpus');
const TARGET = { r10: 0.68, ndcg10: 0.55, categoryMargin: 0.02, meanQueryMs: 5 };
const STAGE_TARGET: StageTarget = {
  r10: 0.78,
  ndcg10: 0.6,
  category: { 'multi-hop': 0.5, 'open-domain': 0.45 },
  baseline: {
    'multi-hop': { r10: 0.419, ndcg10: 0.329 },
    temporal: { r10: 0.845, ndcg10: 0.727 },
    'open-domain': { r10: 0.369, ndcg10: 0.254 },
    'single-hop': { r10: 0.843, ndcg10: 0.612 },
  },
  noThreadsBaseline: 0.646,
};
const NO_THREADS = 'Engram (defaults), memories without meta.thread';

interface Args {
  data: string;
  json: string | undefined;
  writeDoc: boolean;
  ablate: boolean;
  beir: string;
  documents: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { data: dataFolder(argv), json: undefined, writeDoc: true, ablate: false, beir: BEIR_NFCORPUS, documents: true };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--json') args.json = resolve(argv[++i] ?? '');
    else if (argv[i] === '--no-doc') args.writeDoc = false;
    else if (argv[i] === '--ablate') args.ablate = true;
    else if (argv[i] === '--beir') args.beir = resolve(argv[++i] ?? '');
    else if (argv[i] === '--no-documents') args.documents = false;
  }
  return args;
}

const BM25_STOP = 'BM25 + English stop words';
const BM25_ENGINE = 'BM25, engine lexical settings (+ Porter2)';
const BEFORE = "Engram, `assembly: 'greedy'`, `dateBoost: 1` (the defaults before)";
/** Issue 28: chat must not fall below where it stood when the other data sets joined the eval. */
const CHAT_FLOOR = { r10: 0.737, ndcg10: 0.562 };

const rankers: Ranker[] = [
  engineRanker('Engram (defaults)'),
  engineRanker(NO_THREADS, { noThreads: true }),
  engineRanker(BEFORE, { search: { assembly: 'greedy', dateBoost: 1 } }),
  minisearchDefaults,
  engineRanker(BM25_STOP, { noEmbedder: true, engine: { lexical: { stem: false } }, search: pureLeg }),
  engineRanker(BM25_ENGINE, { noEmbedder: true, search: pureLeg }),
  engineRanker('Vector leg alone (built-in model)', { search: { ...pureLeg, mode: 'vector' } }),
  oramaHybrid(false),
  oramaHybrid(true),
];

// Pairs: defaults, then neighbours off, per way of storing the turns. `touch: false` so no row changes another's memories.
const quiet = { touch: false } as const;
const noNeighbours = { touch: false, neighbours: false } as const;
const notes = { noThreads: true, spacedDates: true };
const batch = { noThreads: true, noDates: true };
const notesRankers: Ranker[] = [
  engineRanker('chat (threads, dates): defaults', { search: quiet }),
  engineRanker('chat: neighbours: false', { search: noNeighbours }),
  engineRanker('notes (no threads; each turn a minute after the one before): defaults', { ...notes, search: quiet }),
  engineRanker('notes: neighbours: false', { ...notes, search: noNeighbours }),
  engineRanker('one batch (no threads, no dates, one add per conversation): defaults', { ...batch, search: quiet }),
  engineRanker('one batch: neighbours: false', { ...batch, search: noNeighbours }),
];

async function evaluateAll(list: readonly Ranker[], run: (ranker: Ranker) => Promise<RankerReport>): Promise<RankerReport[]> {
  const reports: RankerReport[] = [];
  for (const ranker of list) {
    const report = await run(ranker);
    console.error(`  ${report.name}: R@10 ${report.overall.r10.toFixed(3)} nDCG@10 ${report.overall.ndcg10.toFixed(3)} (${report.meanQueryMs.toFixed(2)} ms/query)`);
    reports.push(report);
  }
  return reports;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const conversations = loadOrSkip(args.data, 'eval');
  if (!conversations) return;
  const questions = conversations.reduce((n, c) => n + scoredQuestions(c).length, 0);
  const embedder = await createEmbedder();
  console.error(`eval: ${conversations.length} conversations, ${questions} questions, embedder ${embedder.id}`);
  const run = (ranker: Ranker) => evaluateRanker(ranker, conversations, embedder);

  const reports = await evaluateAll(rankers, run);
  const engram = reports[0]!;
  const reference = reports.find((r) => r.name === BM25_STOP)!;
  const stamp = `commit ${commitLabel(root)}, ${new Date().toISOString().slice(0, 10)}`;
  const header = `${questions} questions (categories 1-4) from ${conversations.length} conversations, built-in model \`${embedder.id}\`, Engram with default options.`;
  const noThreads = reports.find((r) => r.name === NO_THREADS)!;
  const results =
    `Latest \`npm run eval\` (${stamp}):\n\n${header}\n\n${resultsTable(reports)}\n\nTarget (issue 6):\n\n${targetCheck(engram, reference, TARGET)}` +
    `\n\nTargets (issue 15, offline: no language model):\n\n${stageTargetCheck(engram, noThreads, STAGE_TARGET)}` +
    `\n\nTargets (issue 28, chat):\n\n${sessionTargetCheck(engram, reports.find((r) => r.name === BM25_ENGINE)!, CHAT_FLOOR)}` +
    `\n\nThe defaults before (\`assembly: 'greedy'\`, \`dateBoost: 1\`):\n\n${sessionTargetCheck(reports.find((r) => r.name === BEFORE)!, reports.find((r) => r.name === BM25_ENGINE)!, CHAT_FLOOR)}`;
  console.log(results);

  let ablationReports: RankerReport[] = [];
  if (args.ablate) {
    console.error('eval: ablations');
    ablationReports = await evaluateAll(ablations, run);
    const table = `Latest \`npm run eval -- --ablate\` (${stamp}), ${questions} questions:\n\n${ablationTable(ablationReports)}`;
    console.log(`\n${table}`);
    if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'ablation', table);
  }
  if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'eval', results);

  console.error('eval: notes');
  const notesReports = await evaluateAll(notesRankers, run);
  let other =
    `Latest \`npm run eval\` (${stamp}).\n\nNotes: the ${questions} questions over the same turns stored three ways, each with and without neighbour support ` +
    `(R and nDCG binary, as above; Δ against the row above it). A batch stored at one instant takes no support over time: its order says nothing.\n\n${pairedTable(notesReports)}`;
  let documents: DocumentsReport | null = null;
  const beir = args.documents ? readBeirOrSkip(args.beir, 'test', 'eval') : null;
  if (beir) {
    console.error(`eval: documents, ${beir.documents.length} documents, ${beir.queries.length} test queries`);
    const started = performance.now();
    documents = await evaluateDocuments(beir, embedder);
    const seconds = (performance.now() - started) / 1000;
    const adds = Object.entries(documents.addSeconds).map(([k, s]) => `${k} ${s.toFixed(1)} s`).join(', ');
    other +=
      `\n\nDocuments: BEIR NFCorpus, ${documents.documents} abstracts added in one \`add\` call (title + "\\n" + text, no dates, no threads, file order), ` +
      `its ${documents.queries} test queries; nDCG@10 graded as trec_eval ndcg_cut.10, R@100 over the judged documents (bench/lib/beir.ts). ` +
      `Δ against Engram's defaults. The section took ${seconds.toFixed(0)} s (one add: ${adds}).\n\n${documentsTable(documents)}` +
      `\n\nTargets (issue 28, documents):\n\n${documentsTargets(documents)}`;
  }
  console.log(`\n${other}`);
  if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'documents', other);
  if (args.json) {
    writeFileSync(args.json, JSON.stringify({ commit: commitLabel(root), embedder: embedder.id, questions, reports, ablations: ablationReports, notes: notesReports, documents }, null, 2));
  }
  await closeEngines();
  await embedder.dispose?.();
}

await main();
