/**
 * The `rerank` stage: re-orders the best `inputLimit` candidates (default 40, CEMS's limit), after `adjust` and
 * before `diversify`. Three re-rankers:
 * - `'llm'`: the language model reads the numbered candidates and answers with their numbers, most useful first
 *   (prompt below);
 * - `'hook'`: the app's own `reranker(query, candidates)` (engine option), answering with ids;
 * - `'rules'`: a deterministic re-ranker (search/rerank-rules.ts).
 * An order names some candidates; the others keep their relative order after them. The candidates keep the
 * scores they had, handed out again in the new order (the first gets the best score, and so on), so a re-ranker
 * changes the order and never the scale that `minScore`, MMR and the caller read. `explain.rerank` has each hit's
 * place before and after.
 */
import type { ScoredCandidate } from './adjust.js';
import { askLlm, errorText, settleWithin, type LlmAccess, type StageOutcome } from './llm-stage.js';
import type { RerankOptions } from './options.js';
import { DEFAULT_RULE_WEIGHTS, rerankByRules } from './rerank-rules.js';
import type { LexicalIndex } from '../lexical/lexical-index.js';
import { checkRankedIds } from '../llm/completion.js';
import type { Reranker } from '../llm/types.js';

/** Completion tokens allowed: a list of numbers. */
const RERANK_MAX_TOKENS = 200;

/** What the re-rankers read besides the candidates. */
interface RerankContext {
  access: LlmAccess;
  /** The engine's hook, or null. */
  reranker: Reranker | null;
  /** For the rules re-ranker's terms and idf. */
  lexical: LexicalIndex;
}

/** The new order of `head` (positions, best first), or none and a note saying why the stage was skipped. */
export async function rerankOrder(
  query: string,
  head: readonly ScoredCandidate[],
  { by, weights }: RerankOptions,
  { access, reranker, lexical }: RerankContext,
): Promise<{ order?: number[] } & StageOutcome> {
  if (head.length < 2) return { note: 'nothing to re-order' };
  if (by === 'llm') {
    if (!access.llm) return { note: `skipped: ${access.unavailable}` };
    const answer = await askLlm(access.llm, {
      prompt: rerankPrompt(query, head.map((s) => s.record)),
      maxTokens: RERANK_MAX_TOKENS,
      timeoutMs: access.timeoutMs,
      parse: (text) => parseRerank(text, head.length),
    });
    return answer.ok ? { order: answer.value, usage: answer.usage } : { usage: answer.usage, note: `skipped: ${answer.note}` };
  }
  if (by === 'hook') {
    if (!reranker) return { note: 'skipped: no reranker (engine option reranker)' };
    const candidates = head.map((s) => ({ id: s.record.id, text: s.record.text, score: s.score }));
    const settled = await settleWithin(() => reranker(query, candidates), access.timeoutMs);
    if (settled.kind === 'timeout' || settled.kind === 'aborted') return { note: `skipped: the reranker did not answer within ${access.timeoutMs} ms` };
    if (settled.kind === 'error') return { note: `skipped: the reranker failed: ${errorText(settled.error)}` };
    try {
      return { order: positionsOf(checkRankedIds(settled.value, 'the reranker'), head) };
    } catch (error) {
      return { note: `skipped: ${errorText(error)}` };
    }
  }
  const bound = lexical.scoreBound(query);
  if (!bound) return { note: 'skipped: no term weights (prefix or fuzzy lexical matching)' };
  const terms = { sequence: lexical.textTerms(query), idf: bound.idf };
  const candidates = head.map((s) => ({ id: s.record.id, terms: lexical.textTerms(`${s.record.text} ${s.record.tags.join(' ')}`), score: s.score }));
  const ranked = rerankByRules(terms, candidates, weights ? { ...DEFAULT_RULE_WEIGHTS, ...weights } : DEFAULT_RULE_WEIGHTS);
  return { order: positionsOf(ranked.map((r) => r.id), head) };
}

/** Characters of each candidate's text shown to the model: enough to judge it, bounded for long memories. */
const RERANK_TEXT_CHARS = 400;

export function rerankPrompt(query: string, candidates: readonly { text: string }[]): string {
  const lines = candidates.map(({ text }, i) => {
    const flat = text.replace(/\s+/g, ' ').trim();
    return `[${i + 1}] ${flat.length > RERANK_TEXT_CHARS ? `${flat.slice(0, RERANK_TEXT_CHARS)}…` : flat}`;
  });
  return [
    'Someone searches their own long-term memory with the question below. Rank the memories by how much each helps',
    'answer it. Answer with the numbers of the useful memories, most useful first, separated by commas, and nothing else.',
    '',
    `Question: ${query}`,
    '',
    'Memories:',
    ...lines,
  ].join('\n');
}

/** Candidate positions (0-based) in the model's order; numbers out of range and repeats are ignored. */
function parseRerank(answer: string, count: number): number[] {
  const order: number[] = [];
  const seen = new Set<number>();
  for (const match of answer.matchAll(/\d+/g)) {
    const position = Number(match[0]) - 1;
    if (position < 0 || position >= count || seen.has(position)) continue;
    seen.add(position);
    order.push(position);
  }
  if (order.length === 0) throw new Error('no candidate number in the answer');
  return order;
}

/** Positions in `ids`' order for a hook's answer; unknown ids and repeats are ignored. */
function positionsOf(ids: readonly string[], head: readonly ScoredCandidate[]): number[] {
  const index = new Map(head.map((s, i) => [s.record.id, i]));
  const seen = new Set<number>();
  const order: number[] = [];
  for (const id of ids) {
    const position = index.get(id);
    if (position === undefined || seen.has(position)) continue;
    seen.add(position);
    order.push(position);
  }
  return order;
}

/**
 * Applies an order to the first `head.length` candidates of `all` (see the top of this file). `order` holds
 * positions in the head, best first; the head's other candidates follow in their previous order.
 */
export function applyOrder(all: readonly ScoredCandidate[], headLength: number, order: readonly number[], by: RerankOptions['by']): ScoredCandidate[] {
  const head = all.slice(0, headLength);
  const named = new Set(order);
  const positions = [...order, ...head.map((_, i) => i).filter((i) => !named.has(i))];
  const reordered = positions.map((from, to) =>
    Object.assign({}, head[from] as ScoredCandidate, { score: (head[to] as ScoredCandidate).score, rerank: { by, from: from + 1, to: to + 1 } }),
  );
  return [...reordered, ...all.slice(headLength)];
}

