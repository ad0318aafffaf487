/**
 * BEAM (Tavakoli et al., 2025): long user–assistant chats whose facts change. Each message becomes one memory,
 * dated by its session (a minute apart within it), `meta.thread` = its session; each question's ranked ids are
 * scored against its gold messages, and for knowledge updates whether the updated message comes first.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { invalidInput } from '../../src/errors.js';
import type { Embedder, MemoryInput } from '../../src/index.js';
import type { Conversation, Ranker } from './run.js';

export const BEAM_TYPES = [
  'abstention',
  'contradiction_resolution',
  'event_ordering',
  'information_extraction',
  'instruction_following',
  'knowledge_update',
  'multi_session_reasoning',
  'preference_following',
  'summarization',
  'temporal_reasoning',
] as const;

/** Messages of one session are stamped this far apart after the session's date, in order. */
export const MESSAGE_STEP_MS = 60_000;
const CUTOFF = 10;
/** Questions the first chat answers untimed per ranker, so JIT compilation is not billed to it. */
const WARMUP = 20;

export interface BeamQuestion {
  question: string;
  type: string;
  /** Every gold message id (ids naming no message dropped); empty for abstention. */
  gold: string[];
  /** knowledge_update only: the messages stating the fact before and after it changed. */
  original?: string[];
  updated?: string[];
}

/** A BEAM chat in the shape the rankers take (`questions` is LoCoMo's and stays empty; BEAM's are `probes`). */
export interface BeamChat extends Conversation {
  probes: BeamQuestion[];
  /** Gold ids that named no message of the chat (dropped). */
  unknownGold: number;
  /** Messages cut to the engine's text limit. */
  cut: number;
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** BEAM's session dates: `"March-15-2024"`, read as midnight UTC. */
export function parseBeamDate(text: string): number {
  const match = /^([A-Za-z]+)-(\d{1,2})-(\d{4})$/.exec(text.trim());
  const month = match ? MONTHS.indexOf(match[1]!.toLowerCase()) : -1;
  if (!match || month < 0) throw invalidInput(`unrecognised BEAM session date "${text}"`);
  return Date.UTC(Number(match[3]), month, Number(match[2]));
}

/** The position markers BEAM appends to user messages (`->-> 1,1`, once `->-> 2,22, 24`). */
const MARKER = /\s*->->\s*\d+(?:\s*,\s*\d+)*/g;

/**
 * The message as a memory's text: markers stripped, trimmed, and cut to `maxLength` (one BEAM message runs to
 * 348,853 characters; cutting keeps one memory per message, so gold ids stay whole). A cut never splits a
 * surrogate pair.
 */
export function beamMessageText(content: string, maxLength: number): string {
  let text = content.replace(MARKER, '').trim();
  if (text.length > maxLength) {
    const end = /[\uD800-\uDBFF]/.test(text[maxLength - 1]!) ? maxLength - 1 : maxLength;
    text = text.slice(0, end).trimEnd();
  }
  return text;
}

function flatIds(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(flatIds);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(flatIds);
  return value === null || value === undefined ? [] : [value];
}

interface RawMessage {
  role?: unknown;
  id?: unknown;
  content?: unknown;
  time_anchor?: unknown;
}

/**
 * One BEAM conversation: `chat` is the parsed chat file (a list of sessions `{ batch_number, turns }`),
 * `probes` the parsed probing_questions.json. `maxTextLength` is the engine's text limit.
 */
export function readBeamChat(name: string, chat: unknown, probes: unknown, maxTextLength: number): BeamChat {
  if (!Array.isArray(chat)) throw invalidInput(`BEAM chat ${name}: expected a list of sessions`);
  const memories: MemoryInput[] = [];
  let cut = 0;
  for (const [s, session] of (chat as Record<string, unknown>[]).entries()) {
    const turns = session?.turns;
    if (!Array.isArray(turns)) throw invalidInput(`BEAM chat ${name}: session ${s + 1} has no turns`);
    const messages = (turns as unknown[]).flatMap((turn) => (Array.isArray(turn) ? (turn as RawMessage[]) : []));
    const anchor = messages.find((m) => typeof m.time_anchor === 'string')?.time_anchor as string | undefined;
    if (anchor === undefined) throw invalidInput(`BEAM chat ${name}: session ${s + 1} has no dated message (time_anchor)`);
    const start = parseBeamDate(anchor);
    const thread = `session_${typeof session.batch_number === 'number' ? session.batch_number : s + 1}`;
    for (const [i, message] of messages.entries()) {
      if (typeof message.content !== 'string' || (typeof message.id !== 'number' && typeof message.id !== 'string')) {
        throw invalidInput(`BEAM chat ${name}: message ${i + 1} of session ${s + 1} lacks a string content or an id`);
      }
      const text = beamMessageText(message.content, maxTextLength);
      if (text === '') throw invalidInput(`BEAM chat ${name}: message ${String(message.id)} is blank`);
      if (message.content.replace(MARKER, '').trim().length > text.length) cut++;
      memories.push({ id: String(message.id), text, createdAt: start + i * MESSAGE_STEP_MS, kind: 'turn', meta: { role: String(message.role), thread } });
    }
  }
  if (memories.length === 0) throw invalidInput(`BEAM chat ${name}: no messages`);
  const known = new Set(memories.map((m) => m.id!));
  let unknownGold = 0;
  const ids = (value: unknown) => {
    const all = [...new Set(flatIds(value).map(String))];
    const kept = all.filter((id) => known.has(id));
    unknownGold += all.length - kept.length;
    return kept;
  };
  const questions: BeamQuestion[] = [];
  if (probes === null || typeof probes !== 'object') throw invalidInput(`BEAM chat ${name}: probing questions must be an object by type`);
  for (const [type, list] of Object.entries(probes as Record<string, unknown>)) {
    for (const raw of Array.isArray(list) ? (list as Record<string, unknown>[]) : []) {
      if (typeof raw?.question !== 'string') continue;
      const source = raw.source_chat_ids;
      const question: BeamQuestion = { question: raw.question, type, gold: ids(source) };
      if (type === 'knowledge_update' && source !== null && typeof source === 'object' && !Array.isArray(source)) {
        const parts = source as Record<string, unknown>;
        question.original = ids(parts.original_info);
        question.updated = ids(parts.updated_info);
      }
      questions.push(question);
    }
  }
  const lastSessionAt = Math.max(...memories.map((m) => Number(m.createdAt)));
  return { name, memories, questions: [], lastSessionAt, probes: questions, unknownGold, cut };
}

/** Every conversation folder `<n>/` under `dir`, in numeric order; `chat_trunecated.json` where present (the authors' loaders prefer it). */
export function loadBeam(dir: string, maxTextLength: number): BeamChat[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'probing_questions.json')))
    .map((e) => e.name)
    .sort((a, b) => Number(a) - Number(b) || a.localeCompare(b))
    .map((n) => {
      const folder = join(dir, n);
      const file = existsSync(join(folder, 'chat_trunecated.json')) ? 'chat_trunecated.json' : 'chat.json';
      const read = (f: string) => JSON.parse(readFileSync(join(folder, f), 'utf8')) as unknown;
      return readBeamChat(`beam/${n}`, read(file), read('probing_questions.json'), maxTextLength);
    });
}

/** The chats in `folder`, or null after saying that `tool` skips them because the folder is absent. */
export function loadBeamOrSkip(folder: string, maxTextLength: number, tool: string): BeamChat[] | null {
  if (existsSync(folder)) return loadBeam(folder, maxTextLength);
  console.log(`${tool}: BEAM skipped, no data at ${folder} (the dev split lives in ../shared/data/beam-dev)`);
  return null;
}

export interface BeamScore {
  /** At least one gold message in the top `CUTOFF`. */
  any: boolean;
  recall: number;
  /** knowledge_update with both versions given: an updated message ranks above every original one (absent = below all). */
  currentFirst?: boolean;
  updatedFound?: boolean;
  originalFound?: boolean;
}

/** Scores one question's ranked ids (the first `CUTOFF` are read). */
export function scoreBeamQuestion(ranked: readonly string[], q: BeamQuestion): BeamScore {
  const top = ranked.slice(0, CUTOFF);
  const rank = new Map(top.map((id, i) => [id, i] as const));
  const found = q.gold.filter((id) => rank.has(id)).length;
  const score: BeamScore = { any: found > 0, recall: q.gold.length === 0 ? 0 : found / q.gold.length };
  const versions = currentFirstVersions(q);
  if (versions) {
    const best = (ids: readonly string[]) => Math.min(...ids.map((id) => rank.get(id) ?? Infinity));
    const updated = best(versions.updated);
    const original = best(versions.original);
    score.currentFirst = updated < original;
    score.updatedFound = updated < Infinity;
    score.originalFound = original < Infinity;
  }
  return score;
}

/** A knowledge update whose two versions are given and distinct (BEAM has two naming one message as both, one with no update). */
function currentFirstVersions(q: BeamQuestion): { original: string[]; updated: string[] } | null {
  if (!q.original?.length || !q.updated?.length) return null;
  const updated = new Set(q.updated);
  return q.original.some((id) => updated.has(id)) ? null : { original: q.original, updated: q.updated };
}

export interface BeamRow {
  n: number;
  any10: number;
  r10: number;
}

export interface BeamCurrent {
  /** Knowledge updates with two distinct versions. */
  n: number;
  currentFirst: number;
  updatedFound: number;
  originalFound: number;
  /** Updates with both versions in the 10 (a count), and of those, how many rank the updated one first: order alone. */
  bothFound: number;
  firstWhenBoth: number;
}

export interface BeamReport {
  name: string;
  /** Over every question with gold messages. */
  overall: BeamRow;
  byType: Record<string, BeamRow>;
  current: BeamCurrent;
  meanQueryMs: number;
}

/** Running sums per type, and the knowledge-update version counts. */
export class BeamAccumulator {
  private readonly types = new Map<string, { n: number; any: number; recall: number }>();
  private readonly all = { n: 0, any: 0, recall: 0 };
  private readonly versions = { n: 0, currentFirst: 0, updatedFound: 0, originalFound: 0, bothFound: 0, firstWhenBoth: 0 };

  /** Questions without gold (abstention) are not scored. */
  add(q: BeamQuestion, ranked: readonly string[]): void {
    if (q.gold.length === 0) return;
    const score = scoreBeamQuestion(ranked, q);
    let sums = this.types.get(q.type);
    if (!sums) this.types.set(q.type, (sums = { n: 0, any: 0, recall: 0 }));
    for (const s of [sums, this.all]) {
      s.n++;
      s.any += Number(score.any);
      s.recall += score.recall;
    }
    if (score.currentFirst !== undefined) {
      this.versions.n++;
      this.versions.currentFirst += Number(score.currentFirst);
      this.versions.updatedFound += Number(score.updatedFound);
      this.versions.originalFound += Number(score.originalFound);
      if (score.updatedFound && score.originalFound) {
        this.versions.bothFound++;
        this.versions.firstWhenBoth += Number(score.currentFirst);
      }
    }
  }

  report(name: string, meanQueryMs: number): BeamReport {
    const row = (s: { n: number; any: number; recall: number }): BeamRow => ({ n: s.n, any10: s.any / Math.max(1, s.n), r10: s.recall / Math.max(1, s.n) });
    const share = (x: number) => x / Math.max(1, this.versions.n);
    // BEAM's types in their order, then any other type a data set names.
    const known: readonly string[] = BEAM_TYPES;
    const order = [...known.filter((t) => this.types.has(t)), ...[...this.types.keys()].filter((t) => !known.includes(t))];
    const byType = Object.fromEntries(order.map((t) => [t, row(this.types.get(t)!)]));
    const { n, currentFirst, updatedFound, originalFound, bothFound, firstWhenBoth } = this.versions;
    return {
      name,
      overall: row(this.all),
      byType,
      current: {
        n,
        currentFirst: share(currentFirst),
        updatedFound: share(updatedFound),
        originalFound: share(originalFound),
        bothFound,
        firstWhenBoth,
      },
      meanQueryMs,
    };
  }
}

/** Every ranker over every chat: one fresh engine (or index) per chat, every question with gold asked for the top 10. */
export async function evaluateBeam(ranker: Ranker, chats: readonly BeamChat[], embedder: Embedder): Promise<BeamReport> {
  const acc = new BeamAccumulator();
  let ms = 0;
  let queries = 0;
  for (const [index, chat] of chats.entries()) {
    const ask = await ranker.prepare(chat, embedder);
    const scored = chat.probes.filter((q) => q.gold.length > 0);
    if (index === 0) for (const q of scored.slice(0, WARMUP)) await ask(q.question, CUTOFF);
    for (const q of scored) {
      const started = performance.now();
      const ranked = await ask(q.question, CUTOFF);
      ms += performance.now() - started;
      queries++;
      acc.add(q, ranked);
    }
  }
  return acc.report(ranker.name, ms / Math.max(1, queries));
}

const f3 = (x: number) => x.toFixed(3);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

export function beamTable(reports: readonly BeamReport[]): string {
  const first = reports[0];
  if (!first) return '';
  const types = Object.keys(first.byType);
  const base = first.overall.r10;
  return [
    `| ranker | any@10 | R@10 | Δ R@10 | current first (n=${first.current.n}) | updated in top 10 | original in top 10 | both in top 10: updated first | mean query ms |`,
    '|---|---|---|---|---|---|---|---|---|',
    ...reports.map(
      (r, i) =>
        `| ${r.name} | ${f3(r.overall.any10)} | ${f3(r.overall.r10)} | ${i === 0 ? '' : signed(r.overall.r10 - base)} | ${pct(r.current.currentFirst)} | ${pct(r.current.updatedFound)} | ${pct(r.current.originalFound)} | ${r.current.firstWhenBoth} of ${r.current.bothFound} | ${r.meanQueryMs.toFixed(2)} |`,
    ),
    '',
    'Per question type, any@10 / R@10:',
    '',
    `| ranker | ${types.map((t) => `${t} (n=${first.byType[t]!.n})`).join(' | ')} |`,
    `|---|${types.map(() => '---').join('|')}|`,
    ...reports.map((r) => `| ${r.name} | ${types.map((t) => (r.byType[t] ? `${f3(r.byType[t]!.any10)} / ${f3(r.byType[t]!.r10)}` : '—')).join(' | ')} |`),
  ].join('\n');
}

export const BEAM_TARGET = { currentFirst: 0.75, r10OverBm25: 0.04 };

/** Issue 43's targets for changing facts, each met or missed. */
export function beamTargets(engram: BeamReport, bm25: BeamReport): string {
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  const gain = engram.overall.r10 - bm25.overall.r10;
  return [
    `- updated message above every original in ≥ ${pct(BEAM_TARGET.currentFirst)} of knowledge updates: ${pct(engram.current.currentFirst)}, ${verdict(engram.current.currentFirst >= BEAM_TARGET.currentFirst)}`,
    `- R@10 over all question types ≥ ${bm25.name} + ${BEAM_TARGET.r10OverBm25}: ${f3(engram.overall.r10)} against ${f3(bm25.overall.r10)} (${signed(gain)}), ${verdict(gain >= BEAM_TARGET.r10OverBm25)}`,
  ].join('\n');
}
