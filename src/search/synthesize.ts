/**
 * The `synthesize` stage (CEMS's query synthesis): a few more search queries for one question, each run through
 * both legs and fused with the original by weighted RRF (search/fuse-lists.ts: the original query's list counts
 * `originalQueryWeight`, default 2, each synthesized one 1).
 *
 * With a language model, the count follows the question's type: 4–5 for preference questions, 3–4 for temporal
 * ones, 2–3 otherwise (the prompt below asks for the upper bound; fewer are accepted, more are cut).
 */
import { askLlm, type LlmAccess, type StageOutcome } from './llm-stage.js';
import type { QueryType } from './understand.js';

/** Completion tokens allowed: a few short lines. */
const SYNTHESIZE_MAX_TOKENS = 200;

/** The stage with a model: the extra queries, or none and a note saying why. */
export async function synthesizeByLlm(query: string, type: QueryType, access: LlmAccess): Promise<{ queries: string[] } & StageOutcome> {
  if (!access.llm) return { queries: [], note: `skipped: ${access.unavailable}` };
  const { max } = synthesisCount(type);
  const answer = await askLlm(access.llm, {
    prompt: synthesizePrompt(query, type),
    maxTokens: SYNTHESIZE_MAX_TOKENS,
    timeoutMs: access.timeoutMs,
    parse: (text) => parseSynthesized(text, query, max),
  });
  return answer.ok ? { queries: answer.value, usage: answer.usage } : { queries: [], usage: answer.usage, note: `skipped: ${answer.note}` };
}

interface SynthesisCount {
  min: number;
  max: number;
}

function synthesisCount(type: QueryType): SynthesisCount {
  if (type === 'preference') return { min: 4, max: 5 };
  if (type === 'temporal') return { min: 3, max: 4 };
  return { min: 2, max: 3 };
}

export function synthesizePrompt(query: string, type: QueryType): string {
  const { max } = synthesisCount(type);
  const aim =
    type === 'preference'
      ? 'Cover what they own, use, like and dislike that bears on it.'
      : type === 'temporal'
        ? 'Name the events involved, so their dates can be found.'
        : 'Use other words for the same thing, and the facts that would answer it.';
  return [
    'Someone searches their own long-term memory (notes, chats, facts about themselves) with the question below.',
    `Write ${max} short search queries, each on its own line, that would find the memories answering it. ${aim}`,
    'Write only the queries: no numbering, no explanation.',
    '',
    `Question: ${query}`,
  ].join('\n');
}

/** The model's lines as queries: bullets and numbering removed, blanks, repeats and the question itself dropped, at most `max`. */
function parseSynthesized(answer: string, query: string, max: number): string[] {
  const seen = new Set([normalise(query)]);
  const queries: string[] = [];
  for (const line of answer.split(/\r?\n/)) {
    const text = line
      .replace(/^\s*(?:[-*•]|\d+[.):])\s*/, '')
      .replace(/^["'“”]+|["'“”]+$/g, '')
      .trim();
    const key = normalise(text);
    if (text === '' || seen.has(key)) continue;
    seen.add(key);
    queries.push(text);
    if (queries.length === max) break;
  }
  if (queries.length === 0) throw new Error('no query in the answer');
  return queries;
}

function normalise(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}
