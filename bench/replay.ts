/**
 * Does the memory get better or worse with use? `npm run eval:replay -- [--data <folder>] [--passes 4]
 * [--days-per-pass 7]`: each LoCoMo conversation goes into one engine, then its questions are asked in order, the
 * whole list once per pass, with the engine's clock moved `--days-per-pass` days on before each pass (spaced
 * repetition credits a retrieval by the time since the last one, so a replay at machine speed would learn nothing).
 * Each variant below gets engines of its own, so what one variant's searches leave behind (access counts, and with
 * issue 18 associations and stability) shapes only its own later passes. Prints R@10 and nDCG@10 per pass.
 */
import { createEmbedder, createEngine, type Embedder, type SearchOptions } from '../src/index.js';
import { MetricAccumulator, type MetricRow } from './lib/metrics.js';
import { CATEGORY_NAMES, dataFolder, DEPTH, loadOrSkip, scoredQuestions, type Conversation } from './lib/run.js';

const DAY_MS = 86_400_000;

interface Variant {
  name: string;
  /** Over the defaults, for every search of the replay. */
  search: Partial<SearchOptions>;
}

/** Use leaves no trace (the control), against today's bookkeeping with decay measured from the last access. */
const VARIANTS: Variant[] = [
  { name: 'no bookkeeping (touch off)', search: { touch: false } },
  { name: 'defaults (touch on, decay from creation)', search: {} },
  { name: "touch on, decay from the last access (decayFrom: 'accessed')", search: { decayFrom: 'accessed' } },
];

function option(argv: readonly string[], name: string, fallback: number): number {
  const at = argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(argv[at + 1]) : fallback;
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`--${name} must be a positive number`);
  return value;
}

/** One variant over every conversation: per pass, the metrics over all scored questions. */
async function replay(variant: Variant, conversations: readonly Conversation[], embedder: Embedder, passes: number, daysPerPass: number): Promise<MetricRow[][]> {
  const perPass = Array.from({ length: passes }, () => new MetricAccumulator());
  const perPassCategory = Array.from({ length: passes }, () => new Map<string, MetricAccumulator>());
  for (const conversation of conversations) {
    let now = conversation.lastSessionAt;
    const engine = await createEngine({ embedder, clock: () => now });
    await engine.add(conversation.memories);
    for (let pass = 0; pass < passes; pass++) {
      now = conversation.lastSessionAt + pass * daysPerPass * DAY_MS;
      for (const question of scoredQuestions(conversation)) {
        const ranked = (await engine.search(question.question, { ...variant.search, k: DEPTH })).hits.map((hit) => hit.id);
        perPass[pass]!.add(ranked, question.evidence);
        const category = CATEGORY_NAMES[question.category]!;
        const byCategory = perPassCategory[pass]!;
        if (!byCategory.has(category)) byCategory.set(category, new MetricAccumulator());
        byCategory.get(category)!.add(ranked, question.evidence);
      }
      // Bookkeeping is written in the background: let it land before the next pass reads it.
      await engine.flush();
    }
    await engine.close();
  }
  return perPass.map((overall, pass) => [overall.row(), ...Object.values(CATEGORY_NAMES).map((name) => perPassCategory[pass]!.get(name)?.row() ?? overall.row())]);
}

const argv = process.argv.slice(2);
const conversations = loadOrSkip(dataFolder(argv), 'replay');
if (conversations) {
  const passes = option(argv, 'passes', 4);
  const daysPerPass = option(argv, 'days-per-pass', 7);
  const embedder = await createEmbedder();
  const questions = conversations.reduce((n, c) => n + scoredQuestions(c).length, 0);
  const started = performance.now();
  const f = (x: number) => x.toFixed(3);
  console.log(`Replay: ${conversations.length} conversations, ${questions} questions per pass, ${passes} passes, ${daysPerPass} days apart (${embedder.id})\n`);
  console.log(`| variant | pass | R@10 | nDCG@10 | ${Object.values(CATEGORY_NAMES).map((c) => `${c} R@10`).join(' | ')} |`);
  console.log(`|---|---|---|---|${Object.values(CATEGORY_NAMES).map(() => '---').join('|')}|`);
  for (const variant of VARIANTS) {
    const rows = await replay(variant, conversations, embedder, passes, daysPerPass);
    rows.forEach(([overall, ...categories], pass) => {
      console.log(`| ${variant.name} | ${pass + 1} | ${f(overall!.r10)} | ${f(overall!.ndcg10)} | ${categories.map((c) => f(c.r10)).join(' | ')} |`);
    });
  }
  await embedder.dispose?.();
  const { loadavg } = await import('node:os');
  console.log(`\n${((performance.now() - started) / 1000).toFixed(0)} s; 1-minute load average ${loadavg()[0]!.toFixed(1)}`);
}
