/**
 * BEAM conversations (../shared/data/beam-dev/<n>/, its README): every message one memory, dated by its session,
 * and the probing questions' texts. Several conversations can be read as one long chat, in folder order.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BeamMessage {
  /** `c<conversation>-<message id>`: unique over conversations read together. */
  id: string;
  role: 'user' | 'assistant';
  text: string;
  createdAt: number;
  /** `<conversation>/<session>`. */
  thread: string;
}

export interface BeamChat {
  conversations: string[];
  messages: BeamMessage[];
  questions: string[];
}

interface RawMessage {
  role: 'user' | 'assistant';
  id: number;
  content: string;
  time_anchor?: string;
}
interface RawSession {
  batch_number: number;
  turns: RawMessage[][];
}

const DAY_MS = 86_400_000;
/** A user message's position marker, `->-> 1,1`, which is not part of what was said. */
const MARKER = /\s*->->\s*\d+,\d+\s*$/;

/** `March-15-2024` as UTC midnight, or NaN. */
export function beamDate(anchor: string): number {
  const match = /^([A-Za-z]+)-(\d{1,2})-(\d{4})$/.exec(anchor.trim());
  if (!match) return NaN;
  const month = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'].indexOf(match[1]!.toLowerCase());
  return month < 0 ? NaN : Date.UTC(Number(match[3]), month, Number(match[2]));
}

/** Conversation folders under `root`, in numeric order. */
export function beamConversations(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(a) - Number(b));
}

/**
 * Conversations of `root` in order, until at least `minMessages` messages are read. A message longer than
 * `maxLength` is cut there (one BEAM message is 348,480 characters; the engine takes 100,000 by default).
 * Within a session messages are a minute apart; a session without a date comes a day after the one before.
 */
export function readBeamChat(root: string, minMessages: number, maxLength = 100_000): BeamChat {
  const chat: BeamChat = { conversations: [], messages: [], questions: [] };
  let last = Date.UTC(2024, 0, 1) - DAY_MS;
  for (const name of beamConversations(root)) {
    if (chat.messages.length >= minMessages) break;
    const folder = join(root, name);
    const file = ['chat_trunecated.json', 'chat.json'].map((f) => join(folder, f)).find((f) => existsSync(f));
    if (!file) continue;
    chat.conversations.push(name);
    for (const session of JSON.parse(readFileSync(file, 'utf8')) as RawSession[]) {
      const messages = session.turns.flat();
      const dated = messages.map((m) => (m.time_anchor ? beamDate(m.time_anchor) : NaN)).find((d) => Number.isFinite(d));
      const day = dated !== undefined && dated > last ? dated : last + DAY_MS;
      last = day;
      messages.forEach((m, i) => {
        const text = m.content.replace(MARKER, '').slice(0, maxLength);
        if (text.trim() === '') return;
        chat.messages.push({ id: `c${name}-${m.id}`, role: m.role, text, createdAt: day + i * 60_000, thread: `${name}/${session.batch_number}` });
      });
    }
    const questions = JSON.parse(readFileSync(join(folder, 'probing_questions.json'), 'utf8')) as Record<string, { question: string }[]>;
    for (const list of Object.values(questions)) for (const q of list) chat.questions.push(q.question);
  }
  return chat;
}
