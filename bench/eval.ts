/**
 * Retrieval-quality harness: `npm run eval -- [--only chat,notes,documents,beam] [--data <folder>] [--beir <folder>] [--beam <folder>]
 * [--no-documents] [--no-beam] [--json [out.json]] [--no-doc] [--ablate]`. `--json` alone prints the JSON to stdout (the tables to stderr).
 * Replays each LoCoMo conversation into a fresh engine with the built-in model and default options, asks
 * every category 1-4 question, and scores the ranked turn ids against the evidence, next to its peers on the
 * same memories and vectors. `--ablate` also runs the engine with one technique changed at a time.
 * Then notes (the same turns without threads, each a minute after the one before; and as one batch without dates) and documents (a BEIR corpus
 * in one add, bench/lib/documents.ts), and changing facts (BEAM chats, bench/lib/beam.ts): the data sets a ranking
 * default must hold on besides chat.
 * The tables go to stdout, to `--json`, and (unless `--no-doc`) into docs/quality.md.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { defaultRecordLimits } from '../src/engine/validate.js';
import { createEmbedder, type Embedder } from '../src/index.js';
import { beamTable, beamTargets, evaluateBeam, loadBeamOrSkip, type BeamReport } from './lib/beam.js';
import { readBeirOrSkip } from './lib/beir.js';
import { datedDocumentsTargets, documentsTable, documentsTargets, evaluateDocuments, type DocumentsReport } from './lib/documents.js';
import { ablationTable, commitLabel, pairedTable, resultsTable, sessionTargetCheck, stageTargetCheck, targetCheck, updateMarkedBlock, type StageTarget } from './lib/report.js';
import { closeEngines, engineRanker, minisearchDefaults, oramaHybrid, pureLeg } from './lib/rankers.js';
import { dataFolder, evaluateRanker, loadOrSkip, scoredQuestions, type Conversation, type Ranker, type RankerReport } from './lib/run.js';
import { ablations } from './lib/variants.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const QUALITY_DOC = join(root, 'docs/quality.md');
/** BEIR NFCorpus beside the repo, as the LoCoMo dev split (run.ts DEV_SPLIT). */
const BEIR_NFCORPUS = resolve(root, '../shared/data/beir-nfcorpus');
/** BEAM's development split, beside the repo too. */
const BEAM_DEV = resolve(root, '../shared/data/beam-dev');
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

const SECTIONS = ['chat', 'notes', 'documents', 'beam'] as const;
type Section = (typeof SECTIONS)[number];

interface Args {
  data: string;
  /** File for the JSON report; '-' prints it to stdout instead of the tables (they go to stderr). */
  json: string | undefined;
  writeDoc: boolean;
  ablate: boolean;
  beir: string;
  beam: string;
  sections: Set<Section>;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { data: dataFolder(argv), json: undefined, writeDoc: true, ablate: false, beir: BEIR_NFCORPUS, beam: BEAM_DEV, sections: new Set(SECTIONS) };
  const only = new Set<Section>();
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1];
    if (argv[i] === '--json') args.json = next === undefined || next.startsWith('--') ? '-' : next === '-' ? (i++, '-') : resolve(argv[++i]!);
    else if (argv[i] === '--no-doc') args.writeDoc = false;
    else if (argv[i] === '--ablate') args.ablate = true;
    else if (argv[i] === '--beir') args.beir = resolve(argv[++i] ?? '');
    else if (argv[i] === '--beam') args.beam = resolve(argv[++i] ?? '');
    else if (argv[i] === '--no-documents') args.sections.delete('documents');
    else if (argv[i] === '--no-beam') args.sections.delete('beam');
    else if (argv[i] === '--only') {
      for (const name of (argv[++i] ?? '').split(',')) {
        if (!(SECTIONS as readonly string[]).includes(name)) throw new Error(`--only takes ${SECTIONS.join(', ')} (comma-separated); got "${name}"`);
        only.add(name as Section);
      }
    }
  }
  if (only.size > 0) args.sections = new Set([...only].filter((s) => args.sections.has(s)));
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

// The target's reference keeps BM25's usual length normalisation (b 0.7, as before `'auto'`); the row after it shows
// what `'auto'` alone does for BM25 on these chats.
const BEAM_BM25 = `${BM25_ENGINE}, b 0.7`;
const beamRankers: Ranker[] = [
  engineRanker('Engram (defaults)', { search: quiet }),
  engineRanker('Engram, neighbours: false', { search: noNeighbours }),
  engineRanker("Engram, lexical.bm25.b 0.7 (not 'auto')", { engine: { lexical: { bm25: { k: 1.2, b: 0.7, d: 0.5 } } }, search: quiet }),
  engineRanker('Vector leg alone (built-in model)', { search: { ...pureLeg, mode: 'vector' } }),
  engineRanker(BEAM_BM25, { noEmbedder: true, engine: { lexical: { bm25: { k: 1.2, b: 0.7, d: 0.5 } } }, search: pureLeg }),
  engineRanker(`${BM25_ENGINE}, b 'auto'`, { noEmbedder: true, search: pureLeg }),
  engineRanker(BM25_STOP, { noEmbedder: true, engine: { lexical: { stem: false } }, search: pureLeg }),
  minisearchDefaults,
];

/** Where the tables go: stdout, or stderr when stdout carries the JSON. */
let print = (text: string) => console.log(text);

async function chatSection(args: Args, conversations: Conversation[], embedder: Embedder, stamp: string) {
  const questions = conversations.reduce((n, c) => n + scoredQuestions(c).length, 0);
  const run = (ranker: Ranker) => evaluateRanker(ranker, conversations, embedder);
  console.error(`eval: chat, ${conversations.length} conversations, ${questions} questions`);
  const reports = await evaluateAll(rankers, run);
  const engram = reports[0]!;
  const reference = reports.find((r) => r.name === BM25_STOP)!;
  const header = `${questions} questions (categories 1-4) from ${conversations.length} conversations, built-in model \`${embedder.id}\`, Engram with default options.`;
  const noThreads = reports.find((r) => r.name === NO_THREADS)!;
  const results =
    `Latest \`npm run eval\` (${stamp}):\n\n${header}\n\n${resultsTable(reports)}\n\nTarget (issue 6):\n\n${targetCheck(engram, reference, TARGET)}` +
    `\n\nTargets (issue 15, offline: no language model):\n\n${stageTargetCheck(engram, noThreads, STAGE_TARGET)}` +
    `\n\nTargets (issue 28, chat):\n\n${sessionTargetCheck(engram, reports.find((r) => r.name === BM25_ENGINE)!, CHAT_FLOOR)}` +
    `\n\nThe defaults before (\`assembly: 'greedy'\`, \`dateBoost: 1\`):\n\n${sessionTargetCheck(reports.find((r) => r.name === BEFORE)!, reports.find((r) => r.name === BM25_ENGINE)!, CHAT_FLOOR)}`;
  print(results);

  let ablationReports: RankerReport[] = [];
  if (args.ablate) {
    console.error('eval: ablations');
    ablationReports = await evaluateAll(ablations, run);
    const table = `Latest \`npm run eval -- --ablate\` (${stamp}), ${questions} questions:\n\n${ablationTable(ablationReports)}`;
    print(`\n${table}`);
    if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'ablation', table);
  }
  if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'eval', results);
  return { questions, reports, ablations: ablationReports };
}

async function notesSection(args: Args, conversations: Conversation[], embedder: Embedder, stamp: string) {
  const questions = conversations.reduce((n, c) => n + scoredQuestions(c).length, 0);
  console.error('eval: notes');
  const reports = await evaluateAll(notesRankers, (ranker) => evaluateRanker(ranker, conversations, embedder));
  const text =
    `Latest \`npm run eval\` (${stamp}).\n\nNotes: the ${questions} questions over the same turns stored three ways, each with and without neighbour support ` +
    `(R and nDCG binary, as above; Δ against the row above it). A batch stored at one instant takes no support over time: its order says nothing.\n\n${pairedTable(reports)}`;
  print(`\n${text}`);
  if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'notes', text);
  return reports;
}

async function documentsSection(args: Args, embedder: Embedder, stamp: string): Promise<DocumentsReport | null> {
  const beir = readBeirOrSkip(args.beir, 'test', 'eval');
  if (!beir) return null;
  console.error(`eval: documents, ${beir.documents.length} documents, ${beir.queries.length} test queries`);
  const started = performance.now();
  const documents = await evaluateDocuments(beir, embedder);
  const seconds = (performance.now() - started) / 1000;
  const adds = Object.entries(documents.addSeconds).map(([k, s]) => `${k} ${s.toFixed(1)} s`).join(', ');
  const text =
    `Latest \`npm run eval\` (${stamp}).\n\n` +
    `Documents: BEIR NFCorpus, ${documents.documents} abstracts added in one \`add\` call (title + "\\n" + text, no dates, no threads, file order), ` +
    `its ${documents.queries} test queries; nDCG@10 graded as trec_eval ndcg_cut.10, R@100 over the judged documents (bench/lib/beir.ts). ` +
    `Δ against Engram's defaults. The dated rows search a second import of the same abstracts, each with a createdAt drawn uniformly ` +
    `(seeded, bench/lib/documents.ts datesOverAYear) from the year before "now", as a user's notes and files carry dates of their own: ` +
    `${documents.datedWithin30Min} of them have another within 30 minutes. The section took ${seconds.toFixed(0)} s (one add: ${adds}).\n\n${documentsTable(documents)}` +
    `\n\nTargets (issue 28, documents):\n\n${documentsTargets(documents)}` +
    `\n\nTargets (issue 43, the dated import):\n\n${datedDocumentsTargets(documents)}`;
  print(`\n${text}`);
  if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'documents', text);
  return documents;
}

async function beamSection(args: Args, embedder: Embedder, stamp: string): Promise<BeamReport[] | null> {
  const chats = loadBeamOrSkip(args.beam, defaultRecordLimits.maxTextLength, 'eval');
  if (!chats) return null;
  const messages = chats.reduce((n, c) => n + c.memories.length, 0);
  const scored = chats.reduce((n, c) => n + c.probes.filter((q) => q.gold.length > 0).length, 0);
  const all = chats.reduce((n, c) => n + c.probes.length, 0);
  const cut = chats.reduce((n, c) => n + c.cut, 0);
  const unknown = chats.reduce((n, c) => n + c.unknownGold, 0);
  console.error(`eval: beam, ${chats.length} chats, ${messages} messages, ${scored} of ${all} questions with gold messages`);
  const reports: BeamReport[] = [];
  for (const ranker of beamRankers) {
    const report = await evaluateBeam(ranker, chats, embedder);
    console.error(`  ${report.name}: any@10 ${report.overall.any10.toFixed(3)} R@10 ${report.overall.r10.toFixed(3)} current first ${(100 * report.current.currentFirst).toFixed(1)}% (${report.meanQueryMs.toFixed(2)} ms/query)`);
    reports.push(report);
  }
  await closeEngines();
  const text =
    `Latest \`npm run eval\` (${stamp}).\n\n` +
    `Changing facts: BEAM's development split (\`../shared/data/beam-dev\`, bench/lib/beam.ts), ${chats.length} user–assistant chats, ${messages} messages, ` +
    `each one memory (position markers stripped; ${cut} message${cut === 1 ? '' : 's'} cut to the engine's ${defaultRecordLimits.maxTextLength.toLocaleString('en')}-character limit), ` +
    `dated by its session a minute apart in order, \`meta.thread\` = its session; a fresh engine per chat, "now" its last message. ` +
    `The ${scored} questions with gold messages (of ${all}; abstention has none${unknown > 0 ? `; ${unknown} gold ids naming no message dropped` : ''}) ask for 10 hits: ` +
    `any@10 = at least one gold message among them, R@10 = the share of the gold messages, both over all questions. ` +
    `Current first: of the knowledge updates with two distinct versions, the share where an updated message ranks above every original one in the 10 (a version not in the 10 ranks below it).\n\n` +
    `${beamTable(reports)}\n\nTargets (issue 43, changing facts):\n\n${beamTargets(reports[0]!, reports.find((r) => r.name === BEAM_BM25)!)}`;
  print(`\n${text}`);
  if (args.writeDoc) updateMarkedBlock(QUALITY_DOC, 'beam', text);
  return reports;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.json === '-') print = (text) => console.error(text);
  const wantsChat = args.sections.has('chat') || args.sections.has('notes');
  const conversations = wantsChat ? loadOrSkip(args.data, 'eval') : null;
  const embedder = await createEmbedder();
  console.error(`eval: ${[...args.sections].join(', ')}; embedder ${embedder.id}`);
  const stamp = `commit ${commitLabel(root)}, ${new Date().toISOString().slice(0, 10)}`;
  const out: Record<string, unknown> = { commit: commitLabel(root), embedder: embedder.id, loadavg: loadavg() };
  if (conversations && args.sections.has('chat')) out.chat = await chatSection(args, conversations, embedder, stamp);
  if (conversations && args.sections.has('notes')) out.notes = await notesSection(args, conversations, embedder, stamp);
  await closeEngines();
  if (args.sections.has('documents')) out.documents = await documentsSection(args, embedder, stamp);
  if (args.sections.has('beam')) out.beam = await beamSection(args, embedder, stamp);
  const json = JSON.stringify(out, null, 2);
  if (args.json === '-') console.log(json);
  else if (args.json) writeFileSync(args.json, json);
  await closeEngines();
  await embedder.dispose?.();
}

await main();
