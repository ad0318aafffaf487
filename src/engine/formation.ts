/**
 * `remember`: a conversation becomes lasting memories (docs/formation.md). The app's model lists the facts worth
 * keeping (one call), then decides for each fact, against the stored memories a search finds closest to it, whether
 * it is new, updates or contradicts one of them (which it supersedes: deep recall still finds the old one) or is
 * already known (that memory is reinforced, nothing added): one more call for every fact that has candidates. Each
 * new fact links `derives_from` to the turns it came from. Without a model, or when the model fails, is too slow or
 * answers off the JSON shape, the turns themselves are stored and the result says why: nothing said is lost.
 * The model is called outside the write queue (it may take seconds); the write is one atomic commit.
 */
import { invalidInput } from '../errors.js';
import { askLlm, errorText, type LlmFailure, type TokenUsage } from '../search/llm-stage.js';
import type { LanguageModel } from '../llm/types.js';
import { checkSignal, type CallAbort } from '../util/abort.js';
import type {
  ConversationMessage, FormationDecision, FormationFallback, FormationSkip, FormationTokens, Link, MemoryRecord, RememberOptions, RememberResult,
} from '../types.js';
import { toEpochMs } from '../util/dates.js';
import { describeValue } from '../util/describe.js';
import { relativeDateFinder, resolveRelativeDates } from '../util/relative-dates.js';
import {
  DECIDE_SCHEMA, EXTRACT_SCHEMA, decidePrompt, extractPrompt, parseDecisions, parseFacts, type Decision, type ExtractedFact, type PromptTurn,
} from './formation-prompts.js';
import { recordFromInput, type RecordLimits } from './validate.js';

/** The kind of a memory that holds one turn of a conversation as said. */
export const TURN_KIND = 'turn';
/** The kind of a fact `remember` drew from a conversation, and of a summary `consolidate` wrote. */
export const FACT_KIND = 'fact';
export const SUMMARY_KIND = 'summary';
/** Default most facts kept from one `remember` call (RememberOptions.maxFacts). */
export const MAX_FACTS = 20;
/** Default time limit of one model call in formation: extraction answers a list, longer than a search stage's. */
export const FORMATION_TIMEOUT_MS = 30_000;
/** Completion tokens allowed for the fact list and for the decisions. */
const EXTRACT_MAX_TOKENS = 1024;
const DECIDE_MAX_TOKENS = 1024;
/** Stored memories shown to the model per fact. */
const CANDIDATES_PER_FACT = 5;

/** One atomic change of memory formation (formation-write.ts applies it). */
export interface FormationWrite {
  /** New memories (fresh ids), added as `add` adds them (supersede on add included). */
  created: MemoryRecord[];
  /**
   * Stored memory id → the id that supersedes it. Refused for memories gone or already superseded by then, of
   * another project or scope than the memory superseding them, or pinned (unless `supersedePinned`).
   */
  supersede: Map<string, string>;
  supersedePinned?: boolean;
  /** Provenance links between the new memories and stored ones. */
  links: Link[];
  /** Stored memories counted as retrieved again (a fact already known). */
  reinforce: string[];
  /** The calling method's signal: honoured until the write's commit (ABORTED then, with nothing written). */
  abort?: CallAbort;
}

/** What formation needs of the engine. */
export interface FormationHost {
  llm: LanguageModel | null;
  clock(): number;
  limits: RecordLimits;
  /** The live stored memories closest to `text` of the project and scope of `home` (turns left out), best first. */
  closest(text: string, k: number, home: Home): Promise<MemoryRecord[]>;
  /** Applies the change in one commit. */
  write(change: FormationWrite): Promise<FormationWritten>;
  /** Runs `task` after every formation task before it: a fact is decided against what earlier calls wrote. */
  exclusive<T>(task: () => Promise<T>, abort?: CallAbort): Promise<T>;
}

/** What a formation write did with the supersede marks asked for: those made (old id → new id) and those refused. */
export interface FormationWritten {
  superseded: Map<string, string>;
  refused: Map<string, FormationSkip>;
}

/** Where a memory belongs: its project and its scope. */
export type Home = Pick<MemoryRecord, 'project' | 'scope'>;

/** Same project (none matches none) and same scope (none counts as 'personal', as filter.scope reads it). */
export function sameHome(a: Home, b: Home): boolean {
  return a.project === b.project && (a.scope ?? 'personal') === (b.scope ?? 'personal');
}

/** Token and call counts across a formation call's model calls. */
export class TokenTally {
  readonly tokens: FormationTokens = { calls: 0, promptTokens: 0, completionTokens: 0 };
  add(usage: TokenUsage | undefined): void {
    if (!usage) return;
    this.tokens.calls++;
    this.tokens.promptTokens += usage.promptTokens;
    this.tokens.completionTokens += usage.completionTokens;
  }
}

/** The fallback code of a failed model call. */
export function fallbackOf(failure: LlmFailure, note: string): FormationFallback {
  const code = ({ unavailable: 'NO_MODEL', timeout: 'MODEL_TIMEOUT', failed: 'MODEL_FAILED', unreadable: 'MODEL_UNREADABLE' } as const)[failure];
  return { code, reason: note };
}

export const NO_MODEL: FormationFallback = { code: 'NO_MODEL', reason: 'the engine has no language model (the llm option)' };

export async function remember(host: FormationHost, conversation: unknown, options: unknown = {}): Promise<RememberResult> {
  const started = performance.now();
  const now = host.clock();
  const opts = checkRememberOptions(options, now, host.limits);
  const abort: CallAbort = { signal: opts.signal, method: 'remember' };
  const turns = readConversation(conversation, opts.at, host.limits);
  const tally = new TokenTally();
  const done = (partial: Omit<RememberResult, 'tokens' | 'ms'>): RememberResult => ({ ...partial, tokens: tally.tokens, ms: performance.now() - started });
  const home = { ...(opts.project === undefined ? {} : { project: opts.project }), ...(opts.scope === undefined ? {} : { scope: opts.scope }) };
  const turnRecords = turns.map((t, i) => recordFromInput({ ...home, text: t.content, createdAt: t.at, kind: TURN_KIND, meta: { role: t.role } }, now, host.limits, `remember: messages[${i}]`));

  const storeTurnsOnly = async (fallback: FormationFallback): Promise<RememberResult> => {
    await host.write({ created: turnRecords, supersede: new Map(), links: [], reinforce: [], abort });
    const added = turnRecords.map((r) => ({ id: r.id, text: r.text, reason: `stored as said: ${fallback.reason}` }));
    return done({ added, superseded: [], unchanged: [], decisions: [], turns: turnRecords.map((r) => r.id), fallback });
  };

  if (!host.llm) return storeTurnsOnly(NO_MODEL);
  const extracted = await askLlm(host.llm, {
    prompt: extractPrompt(turns),
    maxTokens: EXTRACT_MAX_TOKENS,
    timeoutMs: opts.timeoutMs,
    responseConstraint: EXTRACT_SCHEMA,
    parse: (text) => parseFacts(text, turns.length),
    abort,
  });
  tally.add(extracted.usage);
  if (!extracted.ok) return storeTurnsOnly(fallbackOf(extracted.failure, extracted.note));

  // A fact is dated by the latest turn it comes from, and its relative dates are resolved against that time.
  const findDates = await relativeDateFinder();
  const dated = extracted.value.map((fact) => {
    const at = Math.max(...fact.turns.map((t) => turns[t]!.at));
    return { ...fact, at, text: resolveRelativeDates(fact.text, at, findDates) };
  });
  // Past maxFacts, facts are reported and not stored (nor checked: an over-long one there does not fail the call).
  const overLimit: FormationDecision[] = dated.slice(opts.maxFacts).map((fact) => ({
    fact: fact.text, outcome: 'skipped', skipped: 'over the limit', reason: `the model listed ${dated.length} facts; maxFacts is ${opts.maxFacts}`,
  }));
  let facts: (ExtractedFact & { record: MemoryRecord })[];
  try {
    facts = dated.slice(0, opts.maxFacts).map(({ at, ...fact }) => ({
      ...fact,
      record: recordFromInput({ ...home, text: fact.text, createdAt: at, kind: FACT_KIND, meta: { formation: 'fact' } }, now, host.limits, 'fact'),
    }));
  } catch (error) {
    // A fact no memory can hold (past limits.maxTextLength, a lone surrogate) is an unreadable answer, not a caller error.
    return storeTurnsOnly(fallbackOf('unreadable', `the language model's answer could not be read: ${errorText(error)}`));
  }
  // Decided and written one call at a time: two calls deciding at once would both add the same new fact.
  return host.exclusive(async () => {
    const decided = await decide(host, facts, home, opts.timeoutMs, tally, abort);

    const stored = opts.storeTurns ? turnRecords : [];
    const change: FormationWrite = { created: [...stored], supersede: new Map(), links: [], reinforce: [], supersedePinned: opts.supersedePinned, abort };
    const decisions: FormationDecision[] = [];
    facts.forEach((fact, i) => {
      const { action, target, reason, invalid } = decided[i]!;
      const asked = action === undefined ? {} : { action };
      if (action === 'same' && target) {
        change.reinforce.push(target.id);
        decisions.push({ fact: fact.text, outcome: 'reinforced', memory: target.id, ...asked, reason });
        return;
      }
      change.created.push(fact.record);
      for (const t of opts.storeTurns ? fact.turns : []) {
        change.links.push({ from: fact.record.id, to: turnRecords[t]!.id, kind: 'derives_from', confidence: 1, createdAt: now });
      }
      const decision: FormationDecision = { fact: fact.text, outcome: 'added', id: fact.record.id, ...asked, reason };
      decisions.push(decision);
      if (invalid) Object.assign(decision, { outcome: 'skipped', skipped: 'invalid' });
      if (!target) return;
      decision.memory = target.id;
      // Checked again in the write: the memory may be pinned, moved or superseded meanwhile.
      const refused: FormationSkip | undefined = target.pinned && !opts.supersedePinned ? 'pinned' : change.supersede.has(target.id) ? 'gone' : undefined;
      if (refused) Object.assign(decision, { outcome: 'skipped', skipped: refused });
      else change.supersede.set(target.id, fact.record.id);
    });
    const written = await host.write(change);
    for (const decision of decisions) {
      if (decision.outcome !== 'added' || decision.memory === undefined) continue;
      if (written.superseded.get(decision.memory) === decision.id) decision.outcome = 'superseded';
      else Object.assign(decision, { outcome: 'skipped', skipped: written.refused.get(decision.memory) ?? 'gone' });
    }
    decisions.push(...overLimit);
    const reasons = new Map(decisions.flatMap((d) => (d.outcome === 'superseded' ? [[d.memory!, d.reason] as const] : [])));
    const superseded = [...written.superseded].map(([id, by]) => ({ id, by, reason: reasons.get(id) ?? 'a near-duplicate (supersede on add)' }));
    const added = decisions.flatMap((d) => (d.id === undefined ? [] : [{ id: d.id, text: d.fact, reason: d.reason }]));
    const unchanged = decisions.flatMap((d) => (d.outcome === 'reinforced' ? [{ id: d.memory!, fact: d.fact, reason: d.reason }] : []));
    return done({ added, superseded, unchanged, decisions, turns: stored.map((r) => r.id) });
  }, abort);
}

interface Decided {
  /** Undefined when the model was not asked, or its decision for this fact was invalid. */
  action: Decision['action'] | undefined;
  target: MemoryRecord | undefined;
  reason: string;
  invalid?: boolean;
}

/**
 * Each fact's decision: 'add' without asking when nothing stored is close; else the model's. When that call fails
 * the facts are added (nothing is lost; supersede on add still folds exact repeats) and each reason says why; a
 * fact whose own decision is off the shape is added, its decision skipped as 'invalid'.
 */
async function decide(host: FormationHost, facts: readonly (ExtractedFact & { text: string })[], home: Home, timeoutMs: number, tally: TokenTally, abort: CallAbort): Promise<Decided[]> {
  const candidates = await Promise.all(facts.map((fact) => host.closest(fact.text, CANDIDATES_PER_FACT, home)));
  let next = 1;
  const labelled = candidates.map((list) => list.map((record) => ({ label: `M${next++}`, record })));
  if (next === 1) return facts.map(() => ({ action: undefined, target: undefined, reason: 'nothing stored is close to it' }));
  const asked = labelled.map((list, i) => ({ text: facts[i]!.text, candidates: list.map(({ label, record }) => ({ label, text: record.text })) }));
  const answer = await askLlm(host.llm as LanguageModel, {
    prompt: decidePrompt(asked),
    maxTokens: DECIDE_MAX_TOKENS,
    timeoutMs,
    responseConstraint: DECIDE_SCHEMA,
    parse: (text) => parseDecisions(text, labelled.map((list) => list.map((c) => c.label))),
    abort,
  });
  tally.add(answer.usage);
  if (!answer.ok) return facts.map(() => ({ action: undefined, target: undefined, reason: `added without a decision: ${answer.note}` }));
  return answer.value.map((decision, i) => {
    if ('invalid' in decision) return { action: undefined, target: undefined, reason: `added without a decision: ${decision.invalid}`, invalid: true };
    const target = labelled[i]!.find((c) => c.label === decision.memory)?.record;
    return { action: decision.action, target, reason: decision.reason || decision.action };
  });
}

/** The conversation as turns: plain text is one user turn; INVALID_INPUT for anything else than the documented shapes. */
function readConversation(conversation: unknown, defaultAt: number, limits: RecordLimits): PromptTurn[] {
  if (typeof conversation === 'string') {
    if (conversation.trim() === '') throw invalidInput('remember: the conversation is blank');
    return [{ role: 'user', content: conversation, at: defaultAt }];
  }
  if (!Array.isArray(conversation)) throw invalidInput(`remember takes a string or an array of { role, content, at? }, got ${describeValue(conversation)}`);
  if (conversation.length === 0) throw invalidInput('remember: the conversation has no messages');
  if (conversation.length > limits.maxRecordsPerCall) throw invalidInput(`remember: ${conversation.length} messages, more than limits.maxRecordsPerCall (${limits.maxRecordsPerCall})`);
  return conversation.map((message: unknown, i) => {
    const where = `remember: messages[${i}]`;
    if (typeof message !== 'object' || message === null || Array.isArray(message)) throw invalidInput(`${where} must be { role, content, at? }, got ${describeValue(message)}`);
    const { role, content, at } = message as ConversationMessage;
    if (typeof role !== 'string' || role.trim() === '' || role.length > limits.maxLabelLength) {
      throw invalidInput(`${where}.role must be a non-blank string of at most ${limits.maxLabelLength} characters, got ${describeValue(role)}`);
    }
    if (typeof content !== 'string' || content.trim() === '') throw invalidInput(`${where}.content must be a non-blank string, got ${describeValue(content)}`);
    return { role, content, at: at === undefined ? defaultAt : toEpochMs(at, `${where}.at`) };
  });
}

interface ResolvedRemember {
  storeTurns: boolean;
  at: number;
  timeoutMs: number;
  project: string | undefined;
  scope: string | undefined;
  supersedePinned: boolean;
  maxFacts: number;
  signal: AbortSignal | undefined;
}

function checkRememberOptions(options: unknown, now: number, limits: RecordLimits): ResolvedRemember {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput(`remember options must be an object, got ${describeValue(options)}`);
  const { storeTurns = true, at, timeoutMs = FORMATION_TIMEOUT_MS, project, scope, supersedePinned = false, maxFacts = MAX_FACTS, signal } = options as RememberOptions;
  if (typeof storeTurns !== 'boolean') throw invalidInput(`remember option storeTurns must be a boolean, got ${describeValue(storeTurns)}`);
  if (typeof supersedePinned !== 'boolean') throw invalidInput(`remember option supersedePinned must be a boolean, got ${describeValue(supersedePinned)}`);
  if (!Number.isInteger(maxFacts) || maxFacts < 0 || maxFacts > 1000) throw invalidInput(`remember option maxFacts must be an integer from 0 to 1000, got ${describeValue(maxFacts)}`);
  // The labels are checked as a memory's are (type, length, well-formed).
  recordFromInput({ text: 'x', ...(project === undefined ? {} : { project }), ...(scope === undefined ? {} : { scope }) }, now, limits, 'remember options');
  return { storeTurns, at: at === undefined ? now : toEpochMs(at, 'remember option at'), timeoutMs: checkTimeout(timeoutMs, 'remember'), project, scope, supersedePinned, maxFacts, signal: checkSignal(signal, 'remember') };
}

/** A model call's time limit: a positive number of ms that setTimeout can hold. */
export function checkTimeout(value: unknown, call: string): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 2 ** 31 - 1)) {
    throw invalidInput(`${call} option timeoutMs must be a positive number of milliseconds up to ${2 ** 31 - 1}, got ${describeValue(value)}`);
  }
  return value;
}
