/**
 * Does the memory get better or worse with use? `npm run eval:replay -- [--data <folder>] [--passes 6]
 * [--days-per-pass 7]`: each LoCoMo conversation goes into one engine, then its questions are asked in order, the
 * whole list once per pass, with the engine's clock moved `--days-per-pass` days on before each pass (spaced
 * repetition credits a retrieval by the time since the last one, so a replay at machine speed would learn nothing).
 * Each variant below gets engines of its own, so what one variant's searches leave behind (access counts, and with
 * issue 18 associations and stability) shapes only its own later passes. Prints R@10 and nDCG@10 per pass.
 */
import { createEmbedder, createEngine, type Embedder, type SearchOptions } from '../src/index.js';
import { MetricAccumulator, type MetricRow } from './lib/metrics.js';
import { CATEGORY_NAMES, dataFolder, loadOrSkip, scoredQuestions, type Conversation } from './lib/run.js';

const DAY_MS = 86_400_000;

interface Variant {
  name: string;
  /** Over the defaults, for every search of the replay. */
  search: Partial<SearchOptions>;
}

/**
 * Use leaves no trace (the control); access counts only; the defaults (reinforcement: stability, sessions,
 * associations formed but not read); and each reader of what reinforcement leaves: the `associate` stage, the
 * stability decay, both.
 */
const ALL_VARIANTS: Variant[] = [
  { name: 'no bookkeeping (touch off)', search: { touch: false } },
  { name: 'access counts only (reinforce off)', search: { reinforce: false } },
  { name: 'defaults (reinforce on)', search: {} },
  { name: 'reinforce + associations', search: { associations: {} as SearchOptions['associations'] } },
  { name: 'reinforce + associations, no bridges', search: { associations: { bridges: false } as SearchOptions['associations'] } },
  { name: "reinforce + decay: { kind: 'stability' }", search: { decay: { kind: 'stability' } } },
  { name: 'reinforce + associations + stability decay', search: { associations: {} as SearchOptions['associations'], decay: { kind: 'stability' } } },
];

const only = process.env.REPLAY_ONLY;
const VARIANTS = only ? ALL_VARIANTS.filter((v) => v.name.includes(only)) : ALL_VARIANTS;

function option(argv: readonly string[], name: string, fallback: number): number {
  const at = argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(argv[at + 1]) : fallback;
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`--${name} must be a positive number`);
  return value;
}

/** One variant over every conversation: per pass, the metrics over all scored questions. */
interface Replayed {
  rows: MetricRow[][];
  /** Hits that came in through associations, per search, per pass. */
  associativePerSearch: number[];
  /** Associations held at the end, per 1,000 searches made. */
  associationsPer1000: number;
  core: number;
}

/** The hits each replayed search asks for: R@10 and nDCG@10 read them whole. */
const REPLAY_K = 10;

async function replay(variant: Variant, conversations: readonly Conversation[], embedder: Embedder, passes: number, daysPerPass: number): Promise<Replayed> {
  const associative = Array.from({ length: passes }, () => 0);
  let searches = 0;
  let associations = 0;
  let core = 0;
  const perPass = Array.from({ length: passes }, () => new MetricAccumulator());
  const perPassCategory = Array.from({ length: passes }, () => new Map<string, MetricAccumulator>());
  for (const conversation of conversations) {
    let now = conversation.lastSessionAt;
    const engine = await createEngine({ embedder, clock: () => now });
    await engine.add(conversation.memories);
    for (let pass = 0; pass < passes; pass++) {
      now = conversation.lastSessionAt + pass * daysPerPass * DAY_MS;
      for (const question of scoredQuestions(conversation)) {
        // One session per pass, as a person coming back each week would be; k = 10, the cutoff it reports (hits
        // reinforce, so one search per question, not one per cutoff as the eval does).
        const { hits } = await engine.search(question.question, { ...variant.search, k: REPLAY_K, session: `pass ${pass + 1}` });
        const ranked = hits.map((hit) => hit.id);
        associative[pass]! += hits.filter((hit) => hit.explain.associative).length;
        searches++;
        perPass[pass]!.add(ranked, question.evidence);
        const category = CATEGORY_NAMES[question.category]!;
        const byCategory = perPassCategory[pass]!;
        if (!byCategory.has(category)) byCategory.set(category, new MetricAccumulator());
        byCategory.get(category)!.add(ranked, question.evidence);
      }
      // Bookkeeping is written in the background: let it land before the next pass reads it.
      await engine.flush();
    }
    const stats = await engine.stats();
    associations += stats.associations;
    core += stats.core;
    await engine.close();
  }
  const perPassSearches = searches / passes;
  const rows = perPass.map((overall, pass) => [overall.row(), ...Object.values(CATEGORY_NAMES).map((name) => perPassCategory[pass]!.get(name)?.row() ?? overall.row())]);
  return { rows, associativePerSearch: associative.map((n) => n / perPassSearches), associationsPer1000: (associations / searches) * 1000, core };
}

const argv = process.argv.slice(2);
const conversations = loadOrSkip(dataFolder(argv), 'replay');
if (conversations) {
  const passes = option(argv, 'passes', 6);
  const daysPerPass = option(argv, 'days-per-pass', 7);
  const embedder = await createEmbedder();
  const questions = conversations.reduce((n, c) => n + scoredQuestions(c).length, 0);
  const started = performance.now();
  const f = (x: number) => x.toFixed(3);
  console.log(`Replay: ${conversations.length} conversations, ${questions} questions per pass, ${passes} passes, ${daysPerPass} days apart (${embedder.id})\n`);
  console.log(`| variant | pass | R@10 | nDCG@10 | ${Object.values(CATEGORY_NAMES).map((c) => `${c} R@10`).join(' | ')} | associative hits per search |`);
  console.log(`|---|---|---|---|${Object.values(CATEGORY_NAMES).map(() => '---').join('|')}|---|`);
  const totals: string[] = [];
  for (const variant of VARIANTS) {
    const { rows, associativePerSearch, associationsPer1000, core } = await replay(variant, conversations, embedder, passes, daysPerPass);
    rows.forEach(([overall, ...categories], pass) => {
      console.log(`| ${variant.name} | ${pass + 1} | ${f(overall!.r10)} | ${f(overall!.ndcg10)} | ${categories.map((c) => f(c.r10)).join(' | ')} | ${associativePerSearch[pass]!.toFixed(2)} |`);
    });
    totals.push(`| ${variant.name} | ${associationsPer1000.toFixed(0)} | ${core} |`);
  }
  console.log(`\n| variant | associations held per 1,000 searches | core memories at the end |\n|---|---|---|\n${totals.join('\n')}`);
  await embedder.dispose?.();
  const { loadavg } = await import('node:os');
  console.log(`\n${((performance.now() - started) / 1000).toFixed(0)} s; 1-minute load average ${loadavg()[0]!.toFixed(1)}`);
}
