/**
 * A scripted language model for memory formation: it reads Engram's real formation prompts (the conversation's
 * numbered turns, the facts with their candidate memories, the memories to summarise) and answers JSON that the
 * test's script computes from what it read. No real model runs here: extraction quality is not what is tested.
 */
import { DECIDE_PROMPT, EXTRACT_PROMPT, SUMMARIZE_PROMPT } from '../../../src/engine/formation-prompts.js';
import type { LanguageModel, LlmCallOptions } from '../../../src/llm/types.js';

export type FormationCall = 'extract' | 'decide' | 'summarize';
export interface ScriptTurn {
  index: number;
  role: string;
  content: string;
}
export interface ScriptFact {
  index: number;
  text: string;
  candidates: { label: string; text: string }[];
}
export interface ScriptDecision {
  fact: number;
  action: 'add' | 'update' | 'contradict' | 'same';
  memory: string | null;
  reason: string;
}

export interface FormationScript {
  extract?(turns: ScriptTurn[]): { text: string; turns: number[] }[];
  decide?(facts: ScriptFact[]): ScriptDecision[];
  summarize?(memories: string[]): string | null;
  /** Replaces the answer to a call (a raw string, a thrown error, a promise that never settles…). */
  raw?(call: FormationCall, prompt: string, options: LlmCallOptions): unknown;
}

export interface FormationModel extends LanguageModel {
  calls: { call: FormationCall; prompt: string; options: LlmCallOptions }[];
}

const firstLine = (text: string) => text.slice(0, text.indexOf('\n'));

export function callOf(prompt: string): FormationCall {
  if (prompt.startsWith(firstLine(EXTRACT_PROMPT))) return 'extract';
  if (prompt.startsWith(firstLine(DECIDE_PROMPT))) return 'decide';
  if (prompt.startsWith(firstLine(SUMMARIZE_PROMPT))) return 'summarize';
  throw new Error(`not a formation prompt: ${prompt.slice(0, 80)}`);
}

export function readTurns(prompt: string): ScriptTurn[] {
  const body = prompt.slice(prompt.indexOf('Conversation:\n') + 'Conversation:\n'.length);
  return body.split('\n').flatMap((line) => {
    const m = /^\[(\d+)\] \([^)]*\) ([^:]+): (.*)$/.exec(line);
    return m ? [{ index: Number(m[1]), role: m[2]!, content: m[3]! }] : [];
  });
}

export function readFacts(prompt: string): ScriptFact[] {
  const facts: ScriptFact[] = [];
  for (const line of prompt.split('\n')) {
    const fact = /^Fact (\d+): (.*)$/.exec(line);
    if (fact) facts.push({ index: Number(fact[1]), text: fact[2]!, candidates: [] });
    const candidate = /^ {2}(M\d+): (.*)$/.exec(line);
    if (candidate) facts.at(-1)!.candidates.push({ label: candidate[1]!, text: candidate[2]! });
  }
  return facts;
}

export function readMemories(prompt: string): string[] {
  return prompt.split('\n').flatMap((line) => {
    const m = /^\d+\. \([^)]*\) (.*)$/.exec(line);
    return m ? [m[1]!] : [];
  });
}

export function formationModel(script: FormationScript): FormationModel {
  const calls: FormationModel['calls'] = [];
  return {
    calls,
    async complete(prompt, options) {
      const call = callOf(prompt);
      calls.push({ call, prompt, options });
      if (script.raw) {
        const raw = script.raw(call, prompt, options);
        if (raw !== undefined) return (await raw) as string;
      }
      if (call === 'extract') return JSON.stringify({ facts: script.extract ? script.extract(readTurns(prompt)) : [] });
      if (call === 'decide') {
        const facts = readFacts(prompt);
        return JSON.stringify({ decisions: script.decide ? script.decide(facts) : facts.map((f) => ({ fact: f.index, action: 'add', memory: null, reason: 'new' })) });
      }
      return JSON.stringify({ summary: script.summarize ? script.summarize(readMemories(prompt)) : null });
    },
  };
}
