/**
 * A scripted language model for the LLM stages' behaviour tests: it answers each stage's prompt (recognised by the
 * prompt's own wording) with a given answer, records every call, and can fail, hang or answer garbage. No real
 * model runs here; the stages' quality with one cannot be measured offline.
 */
import type { LanguageModel, LlmCallOptions, LlmCompletion } from '../../../src/llm/types.js';

export type StageName = 'understand' | 'synthesize' | 'hyde' | 'rerank';

export type ScriptedAnswer = LlmCompletion | ((prompt: string, options: LlmCallOptions) => Promise<unknown> | unknown);

export function stageOf(prompt: string): StageName {
  if (prompt.startsWith('Classify a question')) return 'understand';
  if (prompt.includes('Rank the memories')) return 'rerank';
  if (prompt.includes('Write the note')) return 'hyde';
  if (/Write \d+ short search queries/.test(prompt)) return 'synthesize';
  throw new Error(`unrecognised prompt: ${prompt.slice(0, 80)}`);
}

export interface ScriptedLlm extends LanguageModel {
  calls: { stage: StageName; prompt: string; options: LlmCallOptions }[];
}

export function scriptedLlm(answers: Partial<Record<StageName, ScriptedAnswer>>): ScriptedLlm {
  const calls: ScriptedLlm['calls'] = [];
  return {
    calls,
    async complete(prompt, options) {
      const stage = stageOf(prompt);
      calls.push({ stage, prompt, options });
      const answer = answers[stage];
      if (answer === undefined) throw new Error(`no scripted answer for ${stage}`);
      return (typeof answer === 'function' ? await answer(prompt, options) : answer) as LlmCompletion;
    },
  };
}
