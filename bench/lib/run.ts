/** Runs rankers over LoCoMo conversations and aggregates the metrics per category and per conversation. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readLocomoConversation, type LocomoConversation, type LocomoQuestion } from './locomo.js';
import type { Embedder } from '../../src/index.js';
import { MetricAccumulator, type MetricRow } from './metrics.js';

export const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };
/** Ranked ids kept per question: enough for recall@20. */
export const DEPTH = 20;
/** Questions each ranker answers untimed before its timed run, so JIT compilation is not billed to it. */
const WARMUP_QUESTIONS = 20;

export interface Conversation extends LocomoConversation {
  /** File name, e.g. `26.json`. */
  name: string;
}

/** A ranker answers a question with up to k ranked memory ids, given a conversation prepared once. */
export interface Ranker {
  name: string;
  prepare(conversation: Conversation, embedder: Embedder): Promise<(query: string, k: number) => Promise<string[]>>;
}

export interface RankerReport {
  name: string;
  overall: MetricRow;
  byCategory: Record<string, MetricRow>;
  byConversation: Record<string, MetricRow>;
  /** Wall-clock time of one query, embedding included. */
  meanQueryMs: number;
  /** CPU time of one query (all threads of this process): steadier than wall time on a busy machine. */
  meanQueryCpuMs: number;
}

/** The questions the retrieval task scores: categories 1-4 with at least one evidence turn. */
export function scoredQuestions(conversation: LocomoConversation): LocomoQuestion[] {
  return conversation.questions.filter((q) => q.category in CATEGORY_NAMES && q.evidence.length > 0);
}

export async function evaluateRanker(ranker: Ranker, conversations: readonly Conversation[], embedder: Embedder): Promise<RankerReport> {
  const overall = new MetricAccumulator();
  const byCategory = new Map<string, MetricAccumulator>();
  const byConversation = new Map<string, MetricAccumulator>();
  const bucket = (map: Map<string, MetricAccumulator>, key: string) => {
    let acc = map.get(key);
    if (!acc) map.set(key, (acc = new MetricAccumulator()));
    return acc;
  };
  let queryMs = 0;
  let queryCpuMicros = 0;
  let queries = 0;
  for (const [index, conversation] of conversations.entries()) {
    const ask = await ranker.prepare(conversation, embedder);
    if (index === 0) for (const question of scoredQuestions(conversation).slice(0, WARMUP_QUESTIONS)) await ask(question.question, 10);
    for (const question of scoredQuestions(conversation)) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      const at10 = (await ask(question.question, 10)).slice(0, 10);
      const used = process.cpuUsage(cpu);
      queryMs += performance.now() - started;
      queryCpuMicros += used.user + used.system;
      queries++;
      const ranked = { 5: (await ask(question.question, 5)).slice(0, 5), 10: at10, 20: (await ask(question.question, DEPTH)).slice(0, DEPTH) };
      overall.addAtCutoffs(ranked, question.evidence);
      bucket(byCategory, CATEGORY_NAMES[question.category]!).addAtCutoffs(ranked, question.evidence);
      bucket(byConversation, conversation.name).addAtCutoffs(ranked, question.evidence);
    }
  }
  const rows = (map: Map<string, MetricAccumulator>, order: string[]) =>
    Object.fromEntries(order.filter((key) => map.has(key)).map((key) => [key, map.get(key)!.row()]));
  return {
    name: ranker.name,
    overall: overall.row(),
    byCategory: rows(byCategory, Object.values(CATEGORY_NAMES)),
    byConversation: rows(byConversation, conversations.map((c) => c.name)),
    meanQueryMs: queryMs / Math.max(1, queries),
    meanQueryCpuMs: queryCpuMicros / 1000 / Math.max(1, queries),
  };
}

/** Every `*.json` conversation in `dir`, in file-name order. */
export function loadConversations(dir: string): Conversation[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((name) => ({ name, ...readLocomoConversation(JSON.parse(readFileSync(join(dir, name), 'utf8'))) }));
}

/** Where the LoCoMo dev split lives unless `--data <folder>` says otherwise: `../shared/data/locomo-dev` beside the repo. */
export const DEV_SPLIT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../shared/data/locomo-dev');

/** The folder `--data` names in `argv`, or the dev split. */
export function dataFolder(argv: readonly string[]): string {
  const at = argv.indexOf('--data');
  return at >= 0 ? resolve(argv[at + 1] ?? '') : DEV_SPLIT;
}

/** The conversations in `folder`, or null after saying that `tool` is skipped because the folder is absent. */
export function loadOrSkip(folder: string, tool: string): Conversation[] | null {
  if (existsSync(folder)) return loadConversations(folder);
  console.log(`${tool}: skipped, no data at ${folder} (LoCoMo dev split lives in ../shared/data/locomo-dev)`);
  return null;
}
