/**
 * Retrieval-quality harness: `npm run eval -- [--data <folder>] [--json out.json] [--no-doc]`.
 * Replays each LoCoMo conversation into a fresh engine with the built-in model and default options,
 * asks every category 1-4 question, and scores the ranked turn ids against the evidence, next to its peers.
 */
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, insertMultiple, search as oramaSearch } from '@orama/orama';
import MiniSearch from 'minisearch';
import { createEmbedder, createEngine, type Embedder, type Engine, type SearchOptions } from '../src/index.js';
import { readLocomoConversation, type LocomoConversation } from '../src/formats/locomo.js';
import { MetricAccumulator, type MetricRow } from './lib/metrics.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
const DEPTH = 20;

interface Args {
  data: string;
  json: string | undefined;
  writeDoc: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { data: resolve(root, '../shared/data/locomo-dev'), json: undefined, writeDoc: true };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--data') args.data = resolve(argv[++i] ?? '');
    else if (argv[i] === '--json') args.json = resolve(argv[++i] ?? '');
    else if (argv[i] === '--no-doc') args.writeDoc = false;
  }
  return args;
}

/** A ranker answers a question with ranked memory ids, given a conversation prepared once. */
interface Ranker {
  name: string;
  prepare(conversation: LocomoConversation, embedder: Embedder): Promise<(query: string) => Promise<string[]>>;
}

const pureLegOptions: Partial<SearchOptions> = { decay: false, diversity: false, touch: false, k: DEPTH };

function engineRanker(name: string, options: Partial<SearchOptions>, withEmbedder = true): Ranker {
  return {
    name,
    async prepare(conversation, embedder) {
      const engine: Engine = await createEngine({ embedder: withEmbedder ? embedder : null, clock: () => conversation.lastSessionAt });
      await engine.add(conversation.memories);
      return async (query) => (await engine.search(query, { k: DEPTH, ...options })).hits.map((hit) => hit.id);
    },
  };
}

const minisearchDefaults: Ranker = {
  name: 'MiniSearch BM25 (defaults)',
  async prepare(conversation) {
    const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'] });
    index.addAll(conversation.memories.map((m) => ({ id: m.id!, text: m.text })));
    return async (query) => index.search(query).slice(0, DEPTH).map((r) => String(r.id));
  },
};

const oramaHybrid: Ranker = {
  name: 'Orama hybrid (same vectors)',
  async prepare(conversation, embedder) {
    const vectors = await embedder.embed(conversation.memories.map((m) => m.text));
    const db = create({ schema: { mid: 'string', text: 'string', embedding: `vector[${embedder.dim}]` } as const });
    await insertMultiple(
      db,
      conversation.memories.map((m, i) => ({ mid: m.id!, text: m.text, embedding: Array.from(vectors[i]!) })),
    );
    return async (query) => {
      const [vector] = await embedder.embed([query]);
      const result = await oramaSearch(db, {
        mode: 'hybrid',
        term: query,
        vector: { value: Array.from(vector!), property: 'embedding' },
        similarity: 0,
        limit: DEPTH,
      });
      return result.hits.map((hit) => (hit.document as { mid: string }).mid);
    };
  },
};

const rankers: Ranker[] = [
  engineRanker('Engram (defaults)', {}),
  minisearchDefaults,
  engineRanker('BM25, engine lexical settings', { ...pureLegOptions, mode: 'lexical' }, false),
  engineRanker('Vector leg alone (built-in model)', { ...pureLegOptions, mode: 'vector' }),
  oramaHybrid,
];

interface RankerReport {
  name: string;
  overall: MetricRow;
  byCategory: Record<string, MetricRow>;
  meanQueryMs: number;
}

async function evaluate(conversations: LocomoConversation[], embedder: Embedder): Promise<RankerReport[]> {
  const reports: RankerReport[] = [];
  for (const ranker of rankers) {
    const overall = new MetricAccumulator();
    const byCategory = new Map<number, MetricAccumulator>();
    let queryMs = 0;
    let queries = 0;
    for (const conversation of conversations) {
      const ask = await ranker.prepare(conversation, embedder);
      for (const question of conversation.questions) {
        if (!(question.category in CATEGORY_NAMES) || question.evidence.length === 0) continue;
        const started = performance.now();
        const ranked = await ask(question.question);
        queryMs += performance.now() - started;
        queries++;
        overall.add(ranked, question.evidence);
        if (!byCategory.has(question.category)) byCategory.set(question.category, new MetricAccumulator());
        byCategory.get(question.category)!.add(ranked, question.evidence);
      }
    }
    const categories: Record<string, MetricRow> = {};
    for (const [category, acc] of [...byCategory].sort((a, b) => a[0] - b[0])) categories[CATEGORY_NAMES[category]!] = acc.row();
    reports.push({ name: ranker.name, overall: overall.row(), byCategory: categories, meanQueryMs: queryMs / Math.max(1, queries) });
    console.error(`  ${ranker.name}: R@10 ${overall.row().r10.toFixed(3)}`);
  }
  return reports;
}

const f3 = (x: number) => x.toFixed(3);

function markdown(reports: RankerReport[], questions: number, embedderId: string): string {
  const lines = [
    `${questions} questions (categories 1-4), built-in model \`${embedderId}\`, default options.`,
    '',
    '| ranker | R@5 | R@10 | R@20 | nDCG@10 | mean query ms |',
    '|---|---|---|---|---|---|',
    ...reports.map((r) => `| ${r.name} | ${f3(r.overall.r5)} | ${f3(r.overall.r10)} | ${f3(r.overall.r20)} | ${f3(r.overall.ndcg10)} | ${r.meanQueryMs.toFixed(2)} |`),
    '',
    'Per category, R@10 / nDCG@10:',
    '',
    `| ranker | ${Object.values(CATEGORY_NAMES).join(' | ')} |`,
    `|---|${Object.values(CATEGORY_NAMES).map(() => '---').join('|')}|`,
    ...reports.map((r) => `| ${r.name} | ${Object.values(CATEGORY_NAMES).map((c) => (r.byCategory[c] ? `${f3(r.byCategory[c]!.r10)} / ${f3(r.byCategory[c]!.ndcg10)} (n=${r.byCategory[c]!.n})` : '—')).join(' | ')} |`),
  ];
  return lines.join('\n');
}

function commitLabel(): string {
  try {
    const sha = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
    const dirty = execSync('git status --porcelain -- src bench', { cwd: root }).toString().trim() !== '';
    return dirty ? `${sha} + uncommitted changes` : sha;
  } catch {
    return 'unknown commit';
  }
}

const QUALITY_DOC = join(root, 'docs/quality.md');
const TABLE_START = '<!-- eval:start -->';
const TABLE_END = '<!-- eval:end -->';

function updateQualityDoc(table: string): void {
  const block = `${TABLE_START}\nLatest \`npm run eval\` (commit ${commitLabel()}, ${new Date().toISOString().slice(0, 10)}):\n\n${table}\n${TABLE_END}`;
  const current = existsSync(QUALITY_DOC) ? readFileSync(QUALITY_DOC, 'utf8') : `# Retrieval quality\n\n${TABLE_START}\n${TABLE_END}\n`;
  const start = current.indexOf(TABLE_START);
  const end = current.indexOf(TABLE_END);
  const next = start >= 0 && end > start ? current.slice(0, start) + block + current.slice(end + TABLE_END.length) : `${current}\n${block}\n`;
  writeFileSync(QUALITY_DOC, next);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (!existsSync(args.data)) {
    console.log(`eval: skipped, no data at ${args.data} (LoCoMo dev split lives in ../shared/data/locomo-dev)`);
    return;
  }
  const files = readdirSync(args.data).filter((f) => f.endsWith('.json')).sort();
  const conversations = files.map((f) => readLocomoConversation(JSON.parse(readFileSync(join(args.data, f), 'utf8'))));
  const questions = conversations.reduce((n, c) => n + c.questions.filter((q) => q.category in CATEGORY_NAMES && q.evidence.length > 0).length, 0);
  const embedder = await createEmbedder();
  console.error(`eval: ${files.length} conversations, ${questions} questions, embedder ${embedder.id}`);
  const reports = await evaluate(conversations, embedder);
  const table = markdown(reports, questions, embedder.id);
  console.log(table);
  if (args.json) writeFileSync(args.json, JSON.stringify({ commit: commitLabel(), embedder: embedder.id, questions, reports }, null, 2));
  if (args.writeDoc) updateQualityDoc(table);
  await embedder.dispose?.();
}

await main();
