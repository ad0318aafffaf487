/**
 * The conversation pane: a chat typed or pasted as lines, given to `memory.remember` with the model picked in the
 * language-model picker, and each decision shown with its reason (docs/formation.md); "Consolidate" runs
 * `memory.consolidate` and shows what it folded and summarised.
 *
 * The format, one message a line: `user: …`, `assistant: …` or `system: …`; any other line is a user message; a line
 * `at: 2026-11-20` (or `at: 2026-11-20T18:30`) dates the messages after it, until the next `at:` (without one they
 * are said now). Blank lines are skipped.
 */
import type { ConsolidateResult, ConversationMessage, FormationFallback, FormationTokens, Memory, RememberResult } from '../src/index.js';
import { describeError } from './database.js';
import { h } from './dom.js';

const ROLE_LINE = /^(user|assistant|system)\s*:\s*(.*)$/i;
const AT_LINE = /^at\s*:\s*(\S.*)$/i;

export interface ConversationDeps {
  /** The open memory, or null. */
  memory(): Memory | null;
  /** The label of the model picked now, shown with each result. */
  model(): string;
  /** After a call that wrote: the page refreshes its status and searches again, as after an edit. */
  changed(): Promise<void>;
  message(text: string, kind?: 'info' | 'error'): void;
}

export interface ConversationPane {
  /** Enables the buttons once a memory is open. */
  setReady(ready: boolean): void;
}

/** The pane's text as messages (the format above); `at` stays the text typed, for the library to read. */
function parseConversation(text: string): ConversationMessage[] {
  const messages: ConversationMessage[] = [];
  let at: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const date = AT_LINE.exec(line);
    if (date) {
      at = date[1]!.trim();
      continue;
    }
    const said = ROLE_LINE.exec(line);
    const content = said ? said[2]!.trim() : line;
    if (!content) continue;
    messages.push({ role: said ? said[1]!.toLowerCase() : 'user', content, ...(at !== undefined ? { at } : {}) });
  }
  return messages;
}

/** A sample chat about the demo's sample user, dated today, with an update, a repeat and something new. */
function sampleConversation(): string {
  return [
    `at: ${new Date().toISOString().slice(0, 10)}`,
    'user: I moved from Lisbon to Porto last month.',
    'assistant: Big change! How is Porto treating you?',
    'user: Good. I still take my coffee black, no sugar.',
    'assistant: Noted.',
    'user: I started learning the cello on Saturdays.',
  ].join('\n');
}

const tokensText = (t: FormationTokens) =>
  `${t.calls} model ${t.calls === 1 ? 'call' : 'calls'} · tokens ${t.promptTokens} prompt + ${t.completionTokens} completion = ${t.promptTokens + t.completionTokens}`;

export function mountConversation(root: HTMLElement, deps: ConversationDeps): ConversationPane {
  const textarea = h('textarea', {
    id: 'conversation-text',
    rows: 6,
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: 'at: 2026-11-20\nuser: I moved to Porto last week.\nassistant: How do you like it?',
  });
  const sampleButton = h('button', { type: 'button', id: 'conversation-sample' }, 'Sample chat');
  const rememberButton = h('button', { type: 'button', id: 'conversation-remember', class: 'primary', disabled: true }, 'Remember');
  const consolidateButton = h('button', { type: 'button', id: 'conversation-consolidate', disabled: true }, 'Consolidate');
  const summary = h('p', { id: 'conversation-summary', role: 'status', 'aria-live': 'polite' });
  const decisions = h('ol', { id: 'conversation-decisions', class: 'decisions', 'aria-label': 'Decisions' });
  root.append(
    h('h2', { id: 'conversation-heading' }, 'Remember a conversation'),
    h(
      'p',
      { class: 'muted' },
      'One message a line: “user: …” or “assistant: …” (other lines are the user’s); a line “at: 2026-11-20” dates the messages after it. ',
      'The model picked under Search options → Language model draws the facts; with none, the turns are stored as said.',
    ),
    h('label', { for: 'conversation-text' }, 'Conversation'),
    textarea,
    h('div', { class: 'replay-row' }, sampleButton, rememberButton, consolidateButton),
    summary,
    decisions,
  );
  root.setAttribute('aria-labelledby', 'conversation-heading');

  let ready = false;
  let running = false;
  const refreshButtons = () => {
    rememberButton.disabled = consolidateButton.disabled = !ready || running;
  };
  sampleButton.addEventListener('click', () => (textarea.value = sampleConversation()));
  rememberButton.addEventListener('click', () => void run('Remembering', rememberNow));
  consolidateButton.addEventListener('click', () => void run('Consolidating', consolidateNow));

  async function run(label: string, call: (memory: Memory) => Promise<boolean>): Promise<void> {
    const memory = deps.memory();
    if (!memory || running) return;
    running = true;
    refreshButtons();
    summary.textContent = `${label} with ${deps.model()}…`;
    let wrote = false;
    try {
      wrote = await call(memory);
    } catch (error) {
      summary.textContent = `${label} failed: ${describeError(error)}`;
      deps.message(summary.textContent, 'error');
    } finally {
      running = false;
      refreshButtons();
    }
    if (wrote) await deps.changed();
  }

  /** The stored text of `id`, for a decision that names a memory by id only. */
  const textOf = async (memory: Memory, id: string, known: Map<string, string>) => known.get(id) ?? (await memory.get(id))?.text ?? `(memory ${id} is gone)`;

  async function rememberNow(memory: Memory): Promise<boolean> {
    const messages = parseConversation(textarea.value);
    if (messages.length === 0) {
      summary.textContent = 'Nothing to remember: type or paste a conversation, or take the sample chat.';
      decisions.replaceChildren();
      return false;
    }
    const result = await memory.remember(messages);
    const known = new Map(result.added.map((a) => [a.id, a.text]));
    const items: HTMLLIElement[] = [];
    if (result.fallback) items.push(fallbackItem(result.fallback, 'the turns were stored as said'));
    for (const { id, text, reason } of result.added) items.push(decision('added', id, [h('span', { class: 'decision-text' }, text)], reason));
    for (const { id, by, reason } of result.superseded) {
      const [old, next] = await Promise.all([textOf(memory, id, known), textOf(memory, by, known)]);
      items.push(decision('superseded', id, [h('del', { class: 'decision-text' }, old), ' → ', h('ins', { class: 'decision-text' }, next)], reason));
    }
    for (const { id, fact, reason } of result.unchanged) {
      const stored = await textOf(memory, id, known);
      items.push(decision('unchanged', id, [h('span', { class: 'decision-text' }, fact), h('small', { class: 'reinforced' }, `reinforced: ${stored}`)], reason));
    }
    decisions.replaceChildren(...items);
    summary.textContent = rememberSummary(result, deps.model());
    deps.message(`Remembered: ${result.added.length} added, ${result.superseded.length} superseded, ${result.unchanged.length} unchanged`);
    return true;
  }

  async function consolidateNow(memory: Memory): Promise<boolean> {
    const result: ConsolidateResult = await memory.consolidate();
    const known = new Map(result.summaries.map((s) => [s.id, s.text]));
    const items: HTMLLIElement[] = [];
    if (result.fallback) items.push(fallbackItem(result.fallback, 'no summaries; near-duplicates were still folded'));
    for (const { id, into } of result.folded) {
      const [old, next] = await Promise.all([textOf(memory, id, known), textOf(memory, into, known)]);
      items.push(decision('folded', id, [h('del', { class: 'decision-text' }, old), ' → ', h('ins', { class: 'decision-text' }, next)], 'a near-duplicate of a newer memory'));
    }
    for (const { id, text, from } of result.summaries) {
      items.push(decision('summary', id, [h('span', { class: 'decision-text' }, text)], `supersedes ${from.length} memories, which deep recall still finds`));
    }
    decisions.replaceChildren(...items);
    summary.textContent = [
      `${result.folded.length} folded`,
      `${result.summaries.length} ${result.summaries.length === 1 ? 'summary' : 'summaries'}`,
      tokensText(result.tokens),
      `${result.ms.toFixed(0)} ms`,
      `model: ${deps.model()}`,
    ].join(' · ');
    deps.message(`Consolidated: ${result.folded.length} folded, ${result.summaries.length} summarised`);
    return result.folded.length + result.summaries.length > 0;
  }

  return {
    setReady(on) {
      ready = on;
      refreshButtons();
    },
  };
}

function rememberSummary(result: RememberResult, model: string): string {
  return [
    `${result.turns.length} ${result.turns.length === 1 ? 'turn' : 'turns'} stored`,
    `${result.added.length} added`,
    `${result.superseded.length} superseded`,
    `${result.unchanged.length} unchanged`,
    tokensText(result.tokens),
    `${result.ms.toFixed(0)} ms`,
    `model: ${model}`,
  ].join(' · ');
}

function decision(action: string, id: string, what: (Node | string)[], reason: string): HTMLLIElement {
  return h(
    'li',
    { class: `decision decision-${action}`, dataset: { action, id } },
    h('span', { class: 'decision-action' }, action),
    ...what,
    h('small', { class: 'decision-reason' }, reason),
  );
}

function fallbackItem(fallback: FormationFallback, consequence: string): HTMLLIElement {
  return h(
    'li',
    { class: 'decision decision-fallback', dataset: { action: 'fallback', code: fallback.code } },
    h('span', { class: 'decision-action' }, fallback.code),
    h('span', { class: 'decision-text' }, `model not used: ${consequence}`),
    h('small', { class: 'decision-reason' }, fallback.reason),
  );
}
