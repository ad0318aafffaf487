/**
 * The `hyde` stage (Hypothetical Document Embeddings, Gao et al. 2022; CEMS): the model writes the memory that
 * would answer the question, in the first person ("I use Adobe Premiere Pro…"); its embedding is searched as one
 * more vector list, weight 1 in the list fusion. A question and its answer rarely share words, but a made-up
 * answer and the real one often do.
 */
import { askLlm, type LlmAccess, type StageOutcome } from './llm-stage.js';

/** Completion tokens allowed: one or two sentences. */
const HYDE_MAX_TOKENS = 120;

/** The stage: the hypothetical answer, or none and a note saying why. */
export async function writeHypothetical(query: string, access: LlmAccess): Promise<{ text?: string } & StageOutcome> {
  if (!access.llm) return { note: `skipped: ${access.unavailable}` };
  const answer = await askLlm(access.llm, { prompt: hydePrompt(query), maxTokens: HYDE_MAX_TOKENS, timeoutMs: access.timeoutMs, parse: parseHyde });
  return answer.ok ? { text: answer.value, usage: answer.usage } : { usage: answer.usage, note: `skipped: ${answer.note}` };
}

export function hydePrompt(query: string): string {
  return [
    'Someone searches their own long-term memory (notes, chats, facts about themselves) with the question below.',
    'Write the note they would have saved that answers it: one or two sentences in the first person, with concrete',
    'details (names, places, dates) made up where you must. Write only the note.',
    '',
    `Question: ${query}`,
  ].join('\n');
}

function parseHyde(answer: string): string {
  const text = answer.trim().replace(/^(?:note|memory)\s*:\s*/i, '');
  if (text === '') throw new Error('an empty answer');
  return text;
}
