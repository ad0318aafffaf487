/**
 * Limit analysis of the default ranking on LoCoMo (issue 15, "the miss explained with its limit"):
 *   npx tsx bench/limits.ts [--data <folder>] [--examples N]
 * Public API only: every list below is one `engine.search` call, so the analysis follows pipeline.ts as it changes.
 *   final    search(k 20): the default answer (MMR included);
 *   pool 50  search(raw, k 50): the default candidate list (legs → fuse → neighbours → filter → adjust, score order,
 *            no minScore/MMR). pool = max(candidatePool, k), so k 50 is the largest k that keeps the default pool;
 *            the list is longer (trace `adjust` out): its members past 50 come from `defaultCandidates`, not its order;
 *   pool 200 search(raw, k 200): the same list with each leg's pool widened to 200;
 *   whole    search(raw, k 1000): pool 1000 ≥ any conversation, so every memory; `explain.bm25Rank` / `vecRank`
 *            are each leg's own full ranking.
 * Terms: a LexicalIndex with the engine's default lexical options (same stop words and stemming as the engine).
 */
import { defaultSearchOptions } from '../src/advanced.js';
import { LexicalIndex } from '../src/internals.js';
import { createEmbedder, createEngine, type Embedder, type Engine, type SearchOptions, type SearchResult } from '../src/index.js';
import { CATEGORY_NAMES, dataFolder, loadOrSkip, scoredQuestions, type Conversation } from './lib/run.js';

/** A term in more than this share of a conversation's memories (a speaker's name, "time") is not informative. */
const INFORMATIVE_DF = 0.05;
/** Each leg's pool in a default search (`candidatePool`; a larger k widens it). */
const DEFAULT_POOL = defaultSearchOptions.candidatePool;

interface EvidenceRow {
  conversation: string;
  question: string;
  category: string;
  id: string;
  text: string;
  /** 1-based ranks, Infinity when absent: final answer; default candidate list (known to rank 50 only); pool 200; whole list; each leg. */
  finalRank: number;
  candidateRank: number;
  pool200Rank: number;
  wholeRank: number;
  lexicalRank: number;
  vectorRank: number;
  /** In the default (pool 50) candidate list at any depth (see `defaultCandidates`). */
  inCandidates: boolean;
  /** The question's terms; those the evidence holds; of those, the ones held by at most INFORMATIVE_DF of the memories. */
  questionTerms: string[];
  shared: string[];
  informative: string[];
  /** Nearest session distance at which a neighbour holds an informative question term (Infinity: none). */
  contextDistance: number;
  /** Places to the nearest final top-10 hit in the same session (Infinity: none in its session). */
  threadDistanceToTop10: number;
  topHitText: string;
}

interface QuestionRow {
  category: string;
  evidence: EvidenceRow[];
  sessions: number;
  /** Length of the default candidate list (trace), and the members `defaultCandidates` finds. */
  candidates: number;
  members: number;
}

function parseArgs(argv: string[]): { data: string; examples: number } {
  const value = (flag: string) => (argv.includes(flag) ? (argv[argv.indexOf(flag) + 1] ?? '') : undefined);
  return { data: dataFolder(argv), examples: Number(value('--examples') ?? 5) };
}

const ranksOf = (result: SearchResult) => new Map(result.hits.map((h, i) => [h.id, i + 1]));
const idsOf = (result: SearchResult) => result.hits.map((h) => h.id);
const rankIn = (ranks: Map<string, number>, id: string) => ranks.get(id) ?? Infinity;
const stageOut = (result: SearchResult, name: string) => result.trace.stages.find((s) => s.name === name)?.out ?? NaN;

/**
 * Every member of the default candidate list, which `search` shows only to rank 50 (k > 50 widens the pool): each
 * leg's own top 50, plus the memories the neighbours stage adds (the thread neighbours, `engine.timeline`, of the
 * best `lenders` fused candidates), less superseded ones (stage `filter`). The caller checks the count against the
 * trace, so a change in the pipeline shows up as a mismatch rather than a silent drift.
 */
async function defaultCandidates(engine: Engine, question: string): Promise<Set<string>> {
  const ask = (options: Partial<SearchOptions>) => engine.search(question, { raw: true, touch: false, k: DEFAULT_POOL, neighbours: false, ...options });
  const members = new Set([...idsOf(await ask({ mode: 'lexical' })), ...idsOf(await ask({ mode: 'vector' }))]);
  const support = defaultSearchOptions.neighbours;
  if (support === false) return members;
  // Without decay (and with no pins, project or quality in LoCoMo) the raw order is the fused order the lenders come from.
  for (const lender of idsOf(await ask({ k: support.lenders, decay: false }))) {
    const around = await engine.timeline(lender, { before: support.window, after: support.window });
    for (const m of [...around.before, ...around.after]) if (m.supersededBy === undefined) members.add(m.id);
  }
  return members;
}

async function analyseConversation(conversation: Conversation, embedder: Embedder): Promise<QuestionRow[]> {
  const engine = await createEngine({ embedder, clock: () => conversation.lastSessionAt });
  await engine.add(conversation.memories);
  const terms = new LexicalIndex(); // the engine's default lexical options
  const memories = conversation.memories;
  const termsOf = new Map(memories.map((m) => [m.id!, new Set(terms.textTerms(m.text))]));
  // Document frequency: a shared term held by many memories (a speaker's name) says little.
  const df = new Map<string, number>();
  for (const set of termsOf.values()) for (const t of set) df.set(t, (df.get(t) ?? 0) + 1);
  const isInformative = (t: string) => (df.get(t) ?? 0) <= INFORMATIVE_DF * memories.length;
  const textOf = new Map(memories.map((m) => [m.id!, m.text]));
  const threadOf = new Map(memories.map((m) => [m.id!, String(m.meta?.thread)]));
  const order = new Map(memories.map((m, i) => [m.id!, i]));
  const rows: QuestionRow[] = [];
  let incomplete = 0;
  let unmatched = 0;
  for (const q of scoredQuestions(conversation)) {
    const ask = (options: { k: number; raw?: boolean }) => engine.search(q.question, { ...options, touch: false });
    const final = (await ask({ k: 20 })).hits.map((h) => h.id);
    const pool50 = await ask({ k: DEFAULT_POOL, raw: true });
    const pool200 = await ask({ k: 200, raw: true });
    const whole = await ask({ k: 1000, raw: true });
    // The whole list must be every candidate (adjust out), and the vector leg must not have been cut by the pool.
    if (whole.hits.length !== stageOut(whole, 'adjust') || stageOut(whole, 'vector') >= 1000) incomplete++;
    const members = await defaultCandidates(engine, q.question);
    if (members.size !== stageOut(pool50, 'adjust') || pool50.hits.some((h) => !members.has(h.id))) unmatched++;
    const lexicalRanks = new Map(whole.hits.map((h) => [h.id, h.explain.bm25Rank ?? Infinity]));
    const vectorRanks = new Map(whole.hits.map((h) => [h.id, h.explain.vecRank ?? Infinity]));
    const [finalRanks, candidateRanks, pool200Ranks, wholeRanks] = [new Map(final.map((id, i) => [id, i + 1])), ranksOf(pool50), ranksOf(pool200), ranksOf(whole)];
    const questionTerms = terms.queryTerms(q.question);
    const informativeTerms = questionTerms.filter(isInformative);
    const top10 = final.slice(0, 10);
    const evidence = q.evidence.map((id): EvidenceRow => {
      const held = termsOf.get(id) ?? new Set<string>();
      const at = order.get(id)!;
      const sameSession = top10.filter((hit) => threadOf.get(hit) === threadOf.get(id));
      let contextDistance = Infinity;
      for (let d = 1; d < memories.length && contextDistance === Infinity; d++) {
        const near = [memories[at - d], memories[at + d]].filter((m) => m !== undefined && threadOf.get(m.id!) === threadOf.get(id));
        if (near.length === 0) break; // past both ends of the session
        if (near.some((m) => informativeTerms.some((t) => termsOf.get(m!.id!)!.has(t)))) contextDistance = d;
      }
      return {
        conversation: conversation.name, question: q.question, category: CATEGORY_NAMES[q.category]!, id, text: textOf.get(id) ?? '',
        finalRank: rankIn(finalRanks, id), candidateRank: rankIn(candidateRanks, id), pool200Rank: rankIn(pool200Ranks, id),
        wholeRank: rankIn(wholeRanks, id), lexicalRank: rankIn(lexicalRanks, id), vectorRank: rankIn(vectorRanks, id),
        inCandidates: members.has(id),
        questionTerms, shared: questionTerms.filter((t) => held.has(t)), informative: informativeTerms.filter((t) => held.has(t)),
        contextDistance,
        threadDistanceToTop10: sameSession.length === 0 ? Infinity : Math.min(...sameSession.map((hit) => Math.abs(order.get(hit)! - at))),
        topHitText: textOf.get(final[0] ?? '') ?? '',
      };
    });
    const sessions = new Set(q.evidence.map((id) => id.split(':')[0])).size;
    rows.push({ category: CATEGORY_NAMES[q.category]!, evidence, sessions, candidates: stageOut(pool50, 'adjust'), members: members.size });
  }
  await engine.close();
  if (incomplete > 0) console.error(`limits: ${conversation.name}: ${incomplete} questions where search(raw, k 1000) is not the whole list`);
  if (unmatched > 0) console.error(`limits: ${conversation.name}: ${unmatched} questions where the rebuilt candidate members differ from the trace`);
  return rows;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const median = (xs: readonly number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!);
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '–');
const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)}%` : '–');
const rank = (x: number) => (Number.isFinite(x) ? String(x) : '∞');
const share = <T>(xs: readonly T[], test: (x: T) => boolean) => pct(xs.filter(test).length / xs.length);
/** Question-averaged recall: the share of a question's evidence with `ranked(e) ≤ depth`. */
const recall = (qs: readonly QuestionRow[], ranked: (e: EvidenceRow) => number, depth: number) =>
  mean(qs.map((q) => q.evidence.filter((e) => ranked(e) <= depth).length / q.evidence.length));
/** The R@10 a perfect re-ranker of a list would reach: evidence anywhere in it, at most 10 counted. */
const oracle = (qs: readonly QuestionRow[], inList: (e: EvidenceRow) => boolean) =>
  mean(qs.map((q) => Math.min(10, q.evidence.filter(inList).length) / q.evidence.length));
const table = (header: string[], body: string[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.join(' | ')} |`)].join('\n');
const groups = (rows: readonly QuestionRow[]): [string, QuestionRow[]][] => [
  ['overall', [...rows]],
  ...Object.values(CATEGORY_NAMES).map((c): [string, QuestionRow[]] => [c, rows.filter((r) => r.category === c)]),
];
const eitherLeg = (e: EvidenceRow) => Math.min(e.lexicalRank, e.vectorRank);

function report(rows: QuestionRow[], examples: number): void {
  const a = groups(rows).map(([name, qs]) => [
    `${name} (n=${qs.length})`,
    ...[10, 20].map((d) => f3(recall(qs, (e) => e.finalRank, d))),
    ...[10, 20, 50].map((d) => f3(recall(qs, (e) => e.candidateRank, d))),
    f3(oracle(qs, (e) => e.inCandidates)),
    ...[100, 200].map((d) => f3(recall(qs, (e) => e.pool200Rank, d))),
    ...[100, 200].map((d) => f3(recall(qs, (e) => e.wholeRank, d))),
    ...[50, 200].map((d) => f3(recall(qs, eitherLeg, d))),
    f3(mean(qs.map((q) => q.candidates))),
    f3(mean(qs.map((q) => q.members))),
  ]);
  console.log('\n(a) Recall of evidence turns (question-averaged). final: the default search (MMR included). cand@N: the default');
  console.log('    candidate list (search raw, k 50: legs pool 50 → fuse → neighbours → filter → adjust, before MMR) at depth N;');
  console.log('    oracle R@10 (pool 50): the R@10 a perfect re-ranker of that list would reach (evidence anywhere in it, at most 10');
  console.log('    counted); pool 200 @N: search(raw, k 200), each leg pool 200; whole @N: search(raw, k 1000), every memory; either');
  console.log("    leg ≤ N: in the lexical or the vector leg's own top N; list length: trace `adjust` out, and the members rebuilt.\n");
  console.log(table(['questions', 'final R@10', 'final R@20', 'cand@10', 'cand@20', 'cand@50', 'oracle R@10 (pool 50)', 'pool 200 @100', 'pool 200 @200', 'whole @100', 'whole @200', 'either leg ≤ 50', 'either leg ≤ 200', 'mean list length (pool 50)', 'mean members rebuilt'], a));

  const b = groups(rows).map(([name, qs]) => {
    const all = qs.flatMap((q) => q.evidence);
    const missed = all.filter((e) => e.finalRank > 20);
    const noTerm = missed.filter((e) => e.informative.length === 0);
    const someTerm = missed.filter((e) => e.informative.length > 0);
    return [
      name, String(all.length), share(all, (e) => e.shared.length === 0), share(all, (e) => e.informative.length === 0),
      String(missed.length), share(missed, (e) => e.shared.length === 0), pct(noTerm.length / missed.length),
      rank(median(noTerm.map((e) => e.vectorRank))), share(noTerm, (e) => e.vectorRank <= 50), share(noTerm, (e) => e.inCandidates), share(noTerm, (e) => e.threadDistanceToTop10 <= 2),
      String(someTerm.length), rank(median(someTerm.map((e) => e.lexicalRank))), rank(median(someTerm.map((e) => e.vectorRank))), share(someTerm, (e) => e.inCandidates),
    ];
  });
  console.log('\n(b) Evidence turns missed at final rank 20. shared term: a question term (engine stop words + Porter2) in the turn;');
  console.log(`    informative: held by ≤ ${INFORMATIVE_DF * 100}% of the conversation's memories (a speaker's name is not); session dist: places`);
  console.log('    to the nearest final top-10 hit in the same session; in candidates: in the default (pool 50) candidate list, as in (a).\n');
  console.log(table(['category', 'evidence turns', 'no shared term', 'no informative shared term', 'missed @20', 'missed: no shared term', 'missed: no informative term (A)', 'A: median vector rank', 'A: vector rank ≤ 50', 'A: in candidates', 'A: session dist ≤ 2', 'missed with informative term (B)', 'B: median lexical rank', 'B: median vector rank', 'B: in candidates'], b));

  const d = groups(rows).map(([name, qs]) => {
    const missedA = qs.flatMap((q) => q.evidence).filter((e) => e.finalRank > 20 && e.informative.length === 0);
    return [name, String(missedA.length), ...[1, 2, 5].map((w) => share(missedA, (e) => e.contextDistance <= w)), share(missedA, (e) => Number.isFinite(e.contextDistance))];
  });
  console.log('\n(d) Missed evidence with no informative shared term (A): does a session neighbour hold an informative question term?\n');
  console.log(table(['category', 'A', 'within ±1', 'within ±2', 'within ±5', 'anywhere in its session'], d));

  const multi = rows.filter((r) => r.category === 'multi-hop');
  const bucket = (key: (q: QuestionRow) => string) => (k: string) => multi.filter((q) => key(q) === k);
  const byCount = bucket((q) => (q.evidence.length >= 4 ? '4+' : String(q.evidence.length)));
  const bySessions = bucket((q) => (q.sessions >= 3 ? '3+' : String(q.sessions)));
  const line = (label: string, qs: QuestionRow[]) => [
    label, String(qs.length), f3(recall(qs, (e) => e.finalRank, 10)),
    pct(mean(qs.map((q) => (q.evidence.every((e) => e.finalRank <= 10) ? 1 : 0)))),
    pct(mean(qs.map((q) => (q.evidence.some((e) => e.finalRank <= 10) ? 1 : 0)))),
    f3(recall(qs, (e) => (e.inCandidates ? 1 : Infinity), 1)),
    share(qs.flatMap((q) => q.evidence), (e) => e.informative.length === 0),
  ];
  console.log(`\n(c) Multi-hop: ${multi.filter((q) => q.sessions >= 2).length} of ${multi.length} questions have evidence in 2+ sessions.\n`);
  console.log(table(['', 'questions', 'R@10', 'all evidence @10', 'any evidence @10', 'in candidates (pool 50)', 'evidence w/o informative shared term'], [
    ...['1', '2', '3', '4+'].filter((k) => byCount(k).length > 0).map((k) => line(`${k} evidence turns`, byCount(k))),
    ...['1', '2', '3+'].filter((k) => bySessions(k).length > 0).map((k) => line(`${k} sessions`, bySessions(k))),
  ]));
  for (const category of Object.values(CATEGORY_NAMES)) {
    const qs = rows.filter((r) => r.category === category);
    console.log(`    ${category}: mean evidence turns ${mean(qs.map((q) => q.evidence.length)).toFixed(2)}, 2+ sessions ${pct(mean(qs.map((q) => (q.sessions >= 2 ? 1 : 0))))}`);
  }

  const missed = rows.flatMap((r) => r.evidence).filter((e) => e.finalRank > 20);
  const kinds: [string, (e: EvidenceRow) => boolean][] = [
    ['no informative shared term, vector leg far', (e) => e.informative.length === 0 && e.vectorRank > 50],
    ['no informative shared term, but a session neighbour of a top-10 hit', (e) => e.informative.length === 0 && e.threadDistanceToTop10 <= 3],
    ['shares an informative term, lost in ranking (in candidates)', (e) => e.informative.length > 0 && e.inCandidates],
    ['multi-hop, second session', (e) => e.category === 'multi-hop' && e.threadDistanceToTop10 === Infinity],
    ['open-domain', (e) => e.category === 'open-domain'],
  ];
  console.log('\nExample misses (evidence not in the final top 20):');
  for (const [kind, test] of kinds.slice(0, examples)) {
    const pool = missed.filter(test);
    const e = pool[Math.floor(pool.length / 2)]; // deterministic: the middle of the list
    if (!e) continue;
    const candidates = Number.isFinite(e.candidateRank) ? String(e.candidateRank) : e.inCandidates ? '> 50' : '∞';
    console.log(`\n- ${kind} [${e.category}, ${e.conversation} ${e.id}] (${pool.length} such)`);
    console.log(`  Q: ${e.question}\n  evidence: ${e.text.slice(0, 240)}`);
    console.log(`  query terms [${e.questionTerms.join(' ')}], shared [${e.shared.join(' ')}], informative [${e.informative.join(' ')}]`);
    console.log(`  ranks: final ${rank(e.finalRank)}, candidates ${candidates}, lexical ${rank(e.lexicalRank)}, vector ${rank(e.vectorRank)}, session distance to a top-10 hit ${rank(e.threadDistanceToTop10)}`);
    console.log(`  top hit: ${e.topHitText.slice(0, 160)}`);
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const conversations = loadOrSkip(args.data, 'limits');
  if (!conversations) return;
  const embedder = await createEmbedder();
  const rows: QuestionRow[] = [];
  for (const conversation of conversations) rows.push(...(await analyseConversation(conversation, embedder)));
  console.log(`limits: ${rows.length} questions from ${conversations.length} conversations, embedder ${embedder.id}, default options`);
  report(rows, args.examples);
  await embedder.dispose?.();
}

await main();
