/**
 * The `understand` stage (CEMS's query understanding): what kind of question this is, which later stages read.
 *
 * Rules (always available, no model): the query's words are matched against cue lists.
 * - `identifier`: one identifier-like token (route.ts `isIdentifierQuery`).
 * - `preference`: CEMS's list: recommend, suggest, advice, resources, tools, accessories, "what should",
 *   "would you", "based on my", "given my".
 * - `aggregation`: a question over many memories: "how many", "how often", "list", "all (the)", "every",
 *   "what are some", "what kinds/types/sorts of" (plural), "which ones", "in total", "so far", "number of", a leading
 *   list/name/count/summarize, or a plural noun after what/which then an auxiliary ("what books has…").
 * - `temporal`: when, "what time/date/year/month/day", "how long", ago, before, after, since, until, first, last,
 *   earliest, latest, recently, during.
 * The type is the first that matches in that order, else `factual`. Complexity: `complex` with two or more
 * signals or more than 14 words, `simple` with none and at most 6 words, else `moderate`.
 *
 * With `understand: 'llm'` and a language model, the model classifies instead (prompt below); an answer that is
 * not one of the types falls back to the rules, and the trace says so. The dates a query names (dates.ts) are read
 * by rules either way.
 */
import { askLlm, type LlmAccess, type StageOutcome } from './llm-stage.js';
import { queryDates } from './dates.js';
import { isIdentifierQuery } from './route.js';
import type { QueryType, Understanding } from '../types.js';

export type { QueryType, Understanding };
type QueryComplexity = Understanding['complexity'];

const QUERY_TYPES: readonly QueryType[] = ['identifier', 'preference', 'aggregation', 'temporal', 'factual'];

const CUES: Record<Exclude<QueryType, 'identifier' | 'factual'>, RegExp[]> = {
  preference: [
    /\brecommend/,
    /\bsuggest/,
    /\badvice\b/,
    /\badvise\b/,
    /\bresources\b/,
    /\btools\b/,
    /\baccessories\b/,
    /\bwhat should\b/,
    /\bwould you\b/,
    /\bbased on my\b/,
    /\bgiven my\b/,
  ],
  aggregation: [
    /\bhow many\b/,
    /\bhow often\b/,
    /\blist\b/,
    /\ball (?:the|of)\b/,
    /\bevery\b/,
    /\bwhat are some\b/,
    /\bwhat (?:kinds|types|sorts) of\b/,
    /\bwhich ones\b/,
    /\bin total\b/,
    /\bso far\b/,
    /\bnumber of\b/,
    /^(?:list|name|enumerate|count|summari[sz]e)\b/,
    // "what books has…", "which activities does…": a plural noun after what/which, then an auxiliary.
    /\b(?:what|which)\s+(?:[a-z]+\s+){0,2}?[a-z]{3,}s\s+(?:has|have|had|did|does|do|is|are|was|were)\b/,
  ],
  temporal: [
    /\bwhen\b/,
    /\bwhat (?:time|date|year|month|day)\b/,
    /\bhow long\b/,
    /\bago\b/,
    /\bbefore\b/,
    /\bafter\b/,
    /\bsince\b/,
    /\buntil\b/,
    /\bfirst\b/,
    /\blast\b/,
    /\bearliest\b/,
    /\blatest\b/,
    /\brecently\b/,
    /\bduring\b/,
  ],
};

export function understandByRules(query: string): Understanding {
  const text = query.toLowerCase().replace(/\s+/g, ' ').trim();
  const words = text === '' ? 0 : text.split(' ').length;
  if (isIdentifierQuery(query)) return { type: 'identifier', complexity: 'simple', signals: ['identifier'], by: 'rules' };
  const signals: string[] = [];
  let type: QueryType = 'factual';
  for (const [kind, patterns] of Object.entries(CUES) as [keyof typeof CUES, RegExp[]][]) {
    for (const pattern of patterns) {
      const match = pattern.exec(text);
      if (!match) continue;
      signals.push(`${kind}:${match[0]}`);
      if (type === 'factual') type = kind;
    }
  }
  const complexity: QueryComplexity = signals.length >= 2 || words > 14 ? 'complex' : signals.length === 0 && words <= 6 ? 'simple' : 'moderate';
  return { type, complexity, signals, by: 'rules' };
}

export function understandPrompt(query: string): string {
  return [
    'Classify a question someone asks their own long-term memory (notes, chats, facts about themselves).',
    'Types:',
    '- identifier: an exact string such as a file path, an error code or a hash',
    '- preference: asks for a recommendation or advice based on what they like or own',
    '- aggregation: needs several memories at once (how many, list, all, what kinds)',
    '- temporal: asks when something happened, or what came first or last',
    '- factual: anything else',
    'Complexity: simple, moderate or complex.',
    'Answer with one line of JSON and nothing else, for example {"type":"temporal","complexity":"simple"}.',
    '',
    `Question: ${query}`,
  ].join('\n');
}

/** Reads the model's classification; throws when it is not one line of JSON with a known type. */
function parseUnderstanding(answer: string, query: string): Understanding {
  const json = /\{[^{}]*\}/.exec(answer)?.[0];
  if (!json) throw new Error('no JSON object in the answer');
  const parsed = JSON.parse(json) as { type?: unknown; complexity?: unknown };
  if (typeof parsed.type !== 'string' || !QUERY_TYPES.includes(parsed.type as QueryType)) throw new Error(`unknown type ${JSON.stringify(parsed.type)}`);
  const complexity = ['simple', 'moderate', 'complex'].includes(parsed.complexity as string)
    ? (parsed.complexity as QueryComplexity)
    : understandByRules(query).complexity;
  return { type: parsed.type as QueryType, complexity, signals: [`llm:${parsed.type}`], by: 'llm' };
}

/** Completion tokens allowed: one line of JSON. */
const UNDERSTAND_MAX_TOKENS = 40;

/** The stage: rules, or the model when asked and available (rules on any failure, and the note says why). */
export async function understand(query: string, by: 'rules' | 'llm', access: LlmAccess): Promise<{ understanding: Understanding } & StageOutcome> {
  const outcome = await classify(query, by, access);
  // Dates are read by rules whoever classifies.
  const dates = queryDates(query);
  if (dates.length > 0) outcome.understanding.dates = dates;
  return outcome;
}

async function classify(query: string, by: 'rules' | 'llm', access: LlmAccess): Promise<{ understanding: Understanding } & StageOutcome> {
  const rules = understandByRules(query);
  if (by !== 'llm') return { understanding: rules };
  if (!access.llm) return { understanding: rules, note: `rules: ${access.unavailable}` };
  const answer = await askLlm(access.llm, { prompt: understandPrompt(query), maxTokens: UNDERSTAND_MAX_TOKENS, timeoutMs: access.timeoutMs, parse: (text) => parseUnderstanding(text, query) });
  return answer.ok ? { understanding: answer.value, usage: answer.usage } : { understanding: rules, usage: answer.usage, note: `rules: ${answer.note}` };
}
