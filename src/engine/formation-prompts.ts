/**
 * The prompts of memory formation (docs/formation.md reproduces them; test/unit/docs/formation-doc.test.ts keeps the
 * two equal), the JSON each answer must be, as a JSON schema (the Prompt API's `responseConstraint`), and the
 * strict readers of those answers: anything off the shape throws, and the call falls back (formation.ts).
 */

/** Extraction: the facts worth keeping in a conversation. `{{conversation}}` is replaced by its numbered turns. */
export const EXTRACT_PROMPT = `You keep the long-term memory of the user in the conversation below.
List the facts worth remembering about the user and their world: preferences, plans, people, places, events,
decisions. One fact per item, in the third person ("The user ..."), self-contained, keeping any date words as said.
Leave out greetings, questions and what the assistant merely suggested. No facts: an empty list.
For each fact give the numbers of the turns it comes from.
Answer with JSON only, exactly: {"facts":[{"text":"...","turns":[0]}]}

Conversation:
{{conversation}}`;

/**
 * Decision: for each new fact, what to do given the stored memories closest to it. `{{facts}}` is replaced by the
 * facts with their candidates (labelled M1, M2, … across all facts).
 */
export const DECIDE_PROMPT = `You keep the long-term memory of a user. Each new fact below is followed by the stored memories closest to it.
For each fact choose one action:
- "add": it is new information.
- "update": it changes or refines one stored memory (name it), which it replaces.
- "contradict": it says the opposite of one stored memory (name it), which it replaces.
- "same": one stored memory (name it) already says it.
Answer with JSON only, one decision per fact, exactly:
{"decisions":[{"fact":0,"action":"add","memory":null,"reason":"..."}]}
("memory" is the stored memory's label, such as "M1", or null for "add".)

{{facts}}`;

/** Summary: one memory for a cluster of related memories. `{{memories}}` is replaced by the numbered memories. */
export const SUMMARIZE_PROMPT = `Below are memories about a user that seem to be about one subject.
If they are, write one memory that keeps every fact in them (names, dates, numbers), in the third person, at most
three sentences. If they are not about one subject, answer null.
Answer with JSON only, exactly: {"summary":"..."} or {"summary":null}

{{memories}}`;

export const EXTRACT_SCHEMA = {
  type: 'object',
  properties: {
    facts: {
      type: 'array',
      items: { type: 'object', properties: { text: { type: 'string' }, turns: { type: 'array', items: { type: 'integer' } } }, required: ['text', 'turns'], additionalProperties: false },
    },
  },
  required: ['facts'],
  additionalProperties: false,
} as const;

export const DECIDE_SCHEMA = {
  type: 'object',
  properties: {
    decisions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          fact: { type: 'integer' },
          action: { enum: ['add', 'update', 'contradict', 'same'] },
          memory: { type: ['string', 'null'] },
          reason: { type: 'string' },
        },
        required: ['fact', 'action', 'memory', 'reason'],
        additionalProperties: false,
      },
    },
  },
  required: ['decisions'],
  additionalProperties: false,
} as const;

export const SUMMARIZE_SCHEMA = {
  type: 'object',
  properties: { summary: { type: ['string', 'null'] } },
  required: ['summary'],
  additionalProperties: false,
} as const;

export interface PromptTurn {
  role: string;
  content: string;
  at: number;
}

export function extractPrompt(turns: readonly PromptTurn[]): string {
  const lines = turns.map((t, i) => `[${i}] (${dateOf(t.at)}) ${t.role}: ${t.content}`);
  return EXTRACT_PROMPT.replace('{{conversation}}', () => lines.join('\n'));
}

/** The facts, each with its candidates' texts; candidate j of fact i is labelled by `labels[i][j]`. */
export function decidePrompt(facts: readonly { text: string; candidates: readonly { label: string; text: string }[] }[]): string {
  const blocks = facts.map((fact, i) => [`Fact ${i}: ${fact.text}`, ...fact.candidates.map((c) => `  ${c.label}: ${c.text}`)].join('\n'));
  return DECIDE_PROMPT.replace('{{facts}}', () => blocks.join('\n\n'));
}

export function summarizePrompt(memories: readonly { text: string; createdAt: number }[]): string {
  return SUMMARIZE_PROMPT.replace('{{memories}}', () => memories.map((m, i) => `${i + 1}. (${dateOf(m.createdAt)}) ${m.text}`).join('\n'));
}

export interface ExtractedFact {
  text: string;
  turns: number[];
}

/** `{"facts":[{"text","turns"}]}` with non-blank texts and turn numbers of this conversation; throws otherwise. */
export function parseFacts(answer: string, turnCount: number): ExtractedFact[] {
  const value = readJson(answer, ['facts']);
  const facts = value.facts;
  if (!Array.isArray(facts)) throw new Error('"facts" is not an array');
  return facts.map((fact: unknown, i) => {
    const item = objectWith(fact, ['text', 'turns'], `facts[${i}]`);
    if (typeof item.text !== 'string' || item.text.trim() === '') throw new Error(`facts[${i}].text is not a non-blank string`);
    const turns = item.turns;
    if (!Array.isArray(turns) || turns.length === 0 || !turns.every((t) => Number.isInteger(t) && t >= 0 && t < turnCount)) {
      throw new Error(`facts[${i}].turns is not a non-empty list of turn numbers from 0 to ${turnCount - 1}`);
    }
    return { text: item.text.trim(), turns: [...new Set(turns as number[])] };
  });
}

export type DecisionAction = 'add' | 'update' | 'contradict' | 'same';

export interface Decision {
  action: DecisionAction;
  /** The candidate's label, null for 'add'. */
  memory: string | null;
  reason: string;
}

/** A fact whose decision was missing, twice or off the shape: what was wrong with it. */
export interface InvalidDecision {
  invalid: string;
}

/**
 * One decision per fact, in fact order, each naming one of that fact's candidates unless it adds. The answer must be
 * `{"decisions":[…]}` (else this throws); a fact whose own entry is missing, given twice or off the shape (another
 * action, a memory not among its own) gets an InvalidDecision, and the others keep theirs.
 */
export function parseDecisions(answer: string, labelsPerFact: readonly (readonly string[])[]): (Decision | InvalidDecision)[] {
  const value = readJson(answer, ['decisions']);
  const list = value.decisions;
  if (!Array.isArray(list)) throw new Error('"decisions" is not an array');
  const out: (Decision | InvalidDecision | undefined)[] = labelsPerFact.map(() => undefined);
  const twice = new Set<number>();
  list.forEach((entry: unknown) => {
    const fact = typeof entry === 'object' && entry !== null ? (entry as { fact?: unknown }).fact : undefined;
    // An entry that names no fact of this call belongs to none: the facts it may have meant show as missing.
    if (!Number.isInteger(fact) || (fact as number) < 0 || (fact as number) >= labelsPerFact.length) return;
    const i = fact as number;
    if (out[i]) twice.add(i);
    out[i] = readDecision(entry, i, labelsPerFact[i]!);
  });
  return out.map((d, i) => (twice.has(i) ? { invalid: `fact ${i} is decided twice` } : (d ?? { invalid: `fact ${i} has no decision` })));
}

function readDecision(entry: unknown, fact: number, labels: readonly string[]): Decision | InvalidDecision {
  let item: Record<string, unknown>;
  try {
    item = objectWith(entry, ['fact', 'action', 'memory', 'reason'], `the decision of fact ${fact}`);
  } catch (error) {
    return { invalid: (error as Error).message };
  }
  const action = item.action;
  if (action !== 'add' && action !== 'update' && action !== 'contradict' && action !== 'same') return { invalid: `the action of fact ${fact} is not add, update, contradict or same` };
  if (typeof item.reason !== 'string') return { invalid: `the reason of fact ${fact} is not a string` };
  const memory = item.memory;
  if (action === 'add' ? memory !== null : !labels.includes(memory as string)) {
    return { invalid: `the memory of fact ${fact} must be ${action === 'add' ? 'null for add' : `one of its own (${labels.join(', ') || 'it has none'})`}` };
  }
  return { action, memory: memory as string | null, reason: item.reason };
}

/** `{"summary": string | null}`: the summary text, or null when the memories are not about one subject. */
export function parseSummary(answer: string): string | null {
  const { summary } = readJson(answer, ['summary']);
  if (summary === null) return null;
  if (typeof summary !== 'string' || summary.trim() === '') throw new Error('"summary" is neither null nor a non-blank string');
  return summary.trim();
}

/** The answer as one JSON object with exactly `keys` (a ```json fence around it is allowed: models add one). */
function readJson(answer: string, keys: readonly string[]): Record<string, unknown> {
  const text = answer.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('the answer is not JSON');
  }
  return objectWith(value, keys, 'the answer');
}

function objectWith(value: unknown, keys: readonly string[], where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where} is not an object`);
  const own = Object.keys(value);
  const extra = own.filter((k) => !keys.includes(k));
  const missing = keys.filter((k) => !own.includes(k));
  if (extra.length > 0 || missing.length > 0) throw new Error(`${where} must have exactly the keys ${keys.join(', ')}`);
  return value as Record<string, unknown>;
}

function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}
