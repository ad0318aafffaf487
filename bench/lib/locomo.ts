import { invalidInput } from '../../src/errors.js';
import type { MemoryInput } from '../../src/index.js';

/**
 * LoCoMo-format conversations (Maharana et al., 2024): `session_N` turn lists with
 * `session_N_date_time` stamps. Each turn becomes one memory: speaker, text and image caption,
 * dated by its session. The same reader serves the demo's importer and the evaluation harness.
 */
export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

export interface LocomoQuestion {
  question: string;
  evidence: string[];
  category: number;
}

export interface LocomoConversation {
  memories: MemoryInput[];
  questions: LocomoQuestion[];
  /** Time of the last session: "now" for a replay. */
  lastSessionAt: number;
}

const SESSION_KEY = /^session_(\d+)$/;
// "1:56 pm on 8 May, 2023"
const LOCOMO_DATE = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export function parseLocomoDate(text: string): number {
  const match = LOCOMO_DATE.exec(text.trim());
  const month = match ? MONTHS.indexOf(match[5]!.slice(0, 3).toLowerCase()) : -1;
  if (!match || month < 0) throw invalidInput(`unrecognised LoCoMo session date "${text}"`);
  const hour12 = Number(match[1]) % 12;
  const hour = match[3]!.toLowerCase() === 'pm' ? hour12 + 12 : hour12;
  return Date.UTC(Number(match[6]), month, Number(match[4]), hour, Number(match[2]));
}

export function locomoTurnText(turn: LocomoTurn): string {
  const caption = turn.blip_caption ? ` [shares an image: ${turn.blip_caption}]` : '';
  return `${turn.speaker}: ${turn.text}${caption}`;
}

/** Evidence ids in the source are sometimes malformed ("D8:6; D9:17", "D:11:26", "D30:05"). */
export function normaliseEvidenceIds(evidence: string[], known: ReadonlySet<string>): string[] {
  const ids = new Set<string>();
  for (const raw of evidence) {
    for (const part of raw.split(/[;,\s]+/)) {
      const match = /^D:?(\d+):(\d+)$/.exec(part.trim());
      if (!match) continue;
      const id = `D${Number(match[1])}:${Number(match[2])}`;
      if (known.has(id)) ids.add(id);
    }
  }
  return [...ids];
}

/** Reads one LoCoMo conversation object (a parsed file of the dataset, or its `conversation` field). */
export function readLocomoConversation(data: unknown, options: { idPrefix?: string } = {}): LocomoConversation {
  if (typeof data !== 'object' || data === null) throw invalidInput('a LoCoMo conversation must be an object');
  const root = data as Record<string, unknown>;
  const sessions = (typeof root.conversation === 'object' && root.conversation !== null ? root.conversation : root) as Record<string, unknown>;
  const prefix = options.idPrefix ?? '';
  const memories: MemoryInput[] = [];
  let lastSessionAt = -Infinity;
  const sessionNumbers = Object.keys(sessions)
    .map((key) => SESSION_KEY.exec(key)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  for (const n of sessionNumbers) {
    const turns = sessions[`session_${n}`];
    const stamp = sessions[`session_${n}_date_time`];
    if (!Array.isArray(turns) || typeof stamp !== 'string') continue;
    const createdAt = parseLocomoDate(stamp);
    lastSessionAt = Math.max(lastSessionAt, createdAt);
    for (const turn of turns as LocomoTurn[]) {
      if (typeof turn?.text !== 'string' || typeof turn.dia_id !== 'string') continue;
      memories.push({
        id: prefix + turn.dia_id,
        text: locomoTurnText(turn),
        createdAt,
        kind: 'turn',
        // A conversation session is a thread: turns in it are neighbours in time.
        meta: { speaker: turn.speaker, thread: `${prefix}session_${n}` },
      });
    }
  }
  if (memories.length === 0) throw invalidInput('no LoCoMo sessions with turns found');
  const known = new Set(memories.map((m) => m.id!.slice(prefix.length)));
  const questions: LocomoQuestion[] = [];
  for (const qa of Array.isArray(root.qa) ? (root.qa as Record<string, unknown>[]) : []) {
    if (typeof qa.question !== 'string' || !Array.isArray(qa.evidence)) continue;
    const evidence = normaliseEvidenceIds(qa.evidence as string[], known).map((id) => prefix + id);
    questions.push({ question: qa.question, evidence, category: Number(qa.category) });
  }
  return { memories, questions, lastSessionAt };
}
