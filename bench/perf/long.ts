/**
 * Long memories section (issue 45): the suite of the Node section (naive reference, Engram's hybrid and both legs
 * with the stage breakdown, recall, `add` at N, MiniSearch, Orama) on real long texts with the built-in model's
 * vectors (100-d), top 10:
 * - documents: BEIR NFCorpus, every abstract (title + text) a memory, its dev queries;
 * - a chat: BEAM conversations read as one assistant chat (user and assistant messages, dated by session) until
 *   it holds CHAT_MESSAGES memories, asked its probing questions.
 * The last ADD_PROBE memories of each are the `add` probe, so the store is the rest. Vectors (documents and
 * queries) are computed once and cached per model build. Run as its own process by bench/perf/run.ts; writes
 * bench/results/long.json. Skipped, with a note, where the data or the model is absent.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from './args.js';
import { BENCH_NOW, type BenchQuery, type Corpus } from './data.js';
import { PrecomputedEmbedder } from './engram.js';
import type { LoopOptions, SectionResult } from './measure.js';
import { loadBuiltInModel, modelVectors } from './model.js';
import { isEntry, repoRoot, resultsDir } from './paths.js';
import { ADD_PROBE, benchSize } from './suite.js';
import { readBeamChat } from './beam-chat.js';
import { readBeir } from '../lib/beir.js';
import { createEngine, type Embedder } from '../../src/index.js';

const BEIR = resolve(repoRoot, '../shared/data/beir-nfcorpus');
const BEAM = resolve(repoRoot, '../shared/data/beam-dev');
/** Memories of the chat store, besides the add probe (issue 45's "1,100-message assistant chat"). */
export const CHAT_MESSAGES = 1_100;
/** Queries asked of each corpus (every system, every round). */
export const LONG_QUERIES = 60;

export interface LongResults {
  documents: SectionResult | null;
  chat: SectionResult | null;
  env: Record<string, unknown>;
}

function log(message: string): void {
  console.log(`[bench long ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

export interface LongCorpus {
  label: string;
  /** Cache name of its vectors. */
  stem: string;
  items: { id: string; text: string; createdAt: number }[];
  questions: string[];
}

export function documentsCorpus(folder = BEIR): LongCorpus | null {
  if (!existsSync(join(folder, 'corpus.jsonl.gz'))) return null;
  const set = readBeir(folder, 'dev');
  return {
    label: `BEIR NFCorpus: ${set.documents.length} abstracts`,
    stem: `long-nfcorpus-${set.documents.length}`,
    items: set.documents.map((d) => ({ id: d.id, text: `${d.title}\n${d.text}`, createdAt: BENCH_NOW })),
    questions: set.queries.map((q) => q.text),
  };
}

export function chatCorpus(root = BEAM, messages = CHAT_MESSAGES): LongCorpus | null {
  const chat = readBeamChat(root, messages + ADD_PROBE);
  if (chat.messages.length < ADD_PROBE + 1) return null;
  // The last conversation read is cut where the chat reaches its length.
  const items = chat.messages.slice(0, messages + ADD_PROBE);
  return {
    label: `BEAM conversations ${chat.conversations.join(', ')} as one chat: its first ${items.length} messages`,
    stem: `long-beam-${chat.conversations.join('_')}-${items.length}`,
    items,
    questions: chat.questions,
  };
}

/** One long corpus through the suite, with `embedder`'s vectors (cached under `stem`). */
export async function benchLong(source: LongCorpus, model: { embedder: Embedder; hash: string }, loop: LoopOptions, queryCount = LONG_QUERIES): Promise<SectionResult> {
  const out: SectionResult = { latency: [], figures: [], stages: [], notes: [source.label], env: {} };
  const { embedder } = model;
  const items = source.items;
  const corpus: Corpus = {
    n: items.length,
    dim: embedder.dim,
    ids: items.map((m) => m.id),
    texts: items.map((m) => m.text),
    createdAt: Float64Array.from(items, (m) => m.createdAt),
    topics: new Uint16Array(items.length),
    vectors: new Float32Array(0),
  };
  log(`${source.label}: vectors`);
  // The texts' own hash in the cache name: a different cut of the same conversations never reads stale vectors.
  const textsHash = createHash('sha1').update(corpus.texts.join('\u0000')).digest('hex').slice(0, 12);
  corpus.vectors = (await modelVectors(model, corpus, `${source.stem}-${textsHash}`)).vectors;
  const texts = source.questions.slice(0, queryCount);
  const vectors = await embedder.embed(texts, 'query');
  const queries: BenchQuery[] = texts.map((text, i) => ({ name: `q${i}`, kind: 'question', text, vector: vectors[i]!, set: 'standard' }));
  const n = corpus.n - ADD_PROBE;
  const precomputed = new PrecomputedEmbedder(`bench-long-${embedder.dim}d`, embedder.dim, embedder).addCorpus(corpus).addQueries(queries);
  await benchSize(out, {
    section: 'node',
    corpus,
    n,
    queries,
    loop,
    heapBytes: async () => null,
    log: (m) => log(`${source.stem}: ${m}`),
    engram: [{ system: 'Engram', open: () => createEngine({ embedder: precomputed, clock: () => BENCH_NOW }) }],
  });
  return out;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const loop: LoopOptions = { rounds: args.rounds, budgetMs: args.budgetMs };
  const results: LongResults = { documents: null, chat: null, env: { node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown' } };
  const model = await loadBuiltInModel();
  if ('reason' in model) {
    results.env.skipped = model.reason;
  } else {
    const documents = documentsCorpus();
    if (documents) results.documents = await benchLong(documents, model, loop);
    else results.env.documents = `no BEIR data at ${BEIR}`;
    const chat = chatCorpus();
    if (chat) results.chat = await benchLong(chat, model, loop);
    else results.env.chat = `no BEAM data at ${BEAM}`;
  }
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'long.json'), JSON.stringify(results, null, 1));
  log('wrote bench/results/long.json');
}

if (isEntry(import.meta.url)) await main();
