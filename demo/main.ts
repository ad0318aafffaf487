/**
 * The demo page: a real Engram memory (worker, SQLite on OPFS, built-in model) behind a search box, every
 * search option as a control, and the explain/trace/context of each search laid out so a ranking can be read.
 */
import { createMemory, type Memory, type MemoryInput, type MemoryStatus, type MemoryRecord, type Progress, type SearchResult } from '../src/index.js';
import type { AssociationSource } from './associations.js';
import { defaultState, localDate, mountControls, toSearchOptions, type ControlState } from './controls.js';
import { mountConversation } from './conversation.js';
import { download, parseImport, serialise } from './data.js';
import { describeError, mountDatabasePanel } from './database.js';
import { byId, debounce, h } from './dom.js';
import { editMemory, type EditorFields } from './editor.js';
import { renderContext, renderFacts, renderTrace } from './inspect.js';
import { mountLlmPicker } from './llm-picker.js';
import { mountReplay } from './replay.js';
import { queryWordsFirst } from './reranker.js';
import { renderHits, type Ranking } from './results.js';
import { SAMPLE_QUERIES, sampleMemories } from './sample-memories.js';

const SETTINGS_KEY = 'engram-demo:settings:v1';
// Listing projects and kinds reads every record; past this size the demo stops offering them.
const SUGGESTION_SCAN_LIMIT = 20_000;
const EMPTY_STORE = 'The store is empty: load the sample, import a file or add a memory.';

const queryInput = byId<HTMLInputElement>('query');
const hitsList = byId<HTMLOListElement>('hits');
const droppedList = byId<HTMLUListElement>('dropped');
const summary = byId('results-summary');
const empty = byId('empty');
const questionSelect = byId<HTMLSelectElement>('locomo-questions');

let memory: Memory | null = null;
let previous: Ranking | null = null;
let searchSeq = 0;
/** Embedder id and whether its vectors are complete: when either changes, the ranking can change. */
let lastLegs = '';
let suggestions = { projects: [] as string[], kinds: [] as string[] };
/** True while a data operation (load, import, clear) owns the progress bar. */
let operationRunning = false;
let lastStatusError = '';
const questions = new Map<string, string[]>();
/** Hits whose association view is open: it stays open across re-renders. */
const openAssociations = new Set<string>();
/** True while "Replay questions" runs: it owns the results, and the data actions wait. */
let replaying = false;
const associationSource: AssociationSource = {
  related: (id) => opened().related(id),
  get: (id) => opened().get(id),
};

// ---- settings ------------------------------------------------------------------------------------------

interface Saved {
  query: string;
  controls: Partial<ControlState>;
}

function loadSaved(): Saved {
  try {
    const saved = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? 'null') as Saved | null;
    // "Now" is not restored: a reload should rank as of today unless the user picks another day again.
    if (saved) return { query: saved.query ?? '', controls: { ...saved.controls, now: undefined } };
  } catch {
    // Unreadable settings are not worth an error: start from the defaults.
  }
  return { query: '', controls: {} };
}

function save(): void {
  localStorage.setItem(SETTINGS_KEY, JSON.stringify({ query: queryInput.value, controls: controls.state() } satisfies Saved));
}

const saved = loadSaved();
const initial: ControlState = { ...defaultState(), ...Object.fromEntries(Object.entries(saved.controls).filter(([, v]) => v !== undefined)) };
const controls = mountControls(byId('controls'), initial, () => {
  updateChangedCount();
  scheduleSearch();
});
queryInput.value = saved.query;
// A new backend changes what the language-model stages answer: search again.
const llmPicker = mountLlmPicker(byId('llm-picker'), () => scheduleSearch());
const replay = mountReplay(byId('replay'), SAMPLE_QUERIES, {
  memory: () => memory,
  current: () => {
    const state = controls.state();
    return { state, options: toSearchOptions(state) };
  },
  show: (query, result, now) => {
    queryInput.value = query;
    void showResult(query, result, now, ++searchSeq);
  },
  running: (on) => {
    replaying = on;
    enableDataActions(!on && memory !== null && !operationRunning);
    conversation.setReady(!on && memory !== null && !operationRunning);
  },
  done: () => void afterDataChange(),
  message,
});

// Remembering writes as an edit does: the status, the suggestions and the search are refreshed after it.
const conversation = mountConversation(byId('conversation'), {
  memory: () => memory,
  model: () => llmPicker.picked().label,
  changed: afterDataChange,
  message,
});

function updateChangedCount(): void {
  const changed = byId('controls').querySelectorAll('.control.changed').length;
  byId('options-changed').textContent = changed ? `${changed} changed` : 'defaults';
}

// ---- messages and progress -----------------------------------------------------------------------------

function message(text: string, kind: 'info' | 'error' = 'info'): void {
  const slot = byId('status-message');
  slot.textContent = text;
  slot.title = text;
  slot.className = kind;
}

/** Data actions stay disabled until the memory is open, and while one of them runs. */
function enableDataActions(enabled: boolean): void {
  for (const control of document.querySelectorAll<HTMLButtonElement | HTMLInputElement>('.data-actions button, .data-actions input')) {
    control.disabled = !enabled;
  }
}

/** Shows the progress bar of a data operation or of background re-indexing (indeterminate without a count). */
function showProgress(label: string, progress: Progress | null): void {
  const bar = byId<HTMLProgressElement>('indexing-progress');
  byId('status-indexing').hidden = false;
  byId('status-indexing-label').textContent = progress ? `${label} ${progress.done}/${progress.total}` : label;
  if (progress) {
    bar.max = progress.total;
    bar.value = progress.done;
  } else {
    bar.removeAttribute('value');
  }
}

/** Runs a data operation with the progress bar showing how far it got. */
async function busy(label: string, run: (onProgress: (p: Progress) => void) => Promise<unknown>): Promise<void> {
  operationRunning = true;
  enableDataActions(false);
  replay.setReady(false);
  conversation.setReady(false);
  showProgress(label, null);
  message(`${label}…`);
  try {
    await run((progress) => showProgress(label, progress));
    message(`${label}: done`);
  } catch (error) {
    message(`${label} failed: ${describeError(error)}`, 'error');
  } finally {
    operationRunning = false;
    byId('status-indexing').hidden = true;
    enableDataActions(memory !== null);
    replay.setReady(memory !== null);
    conversation.setReady(memory !== null);
    await afterDataChange();
  }
}

// ---- status --------------------------------------------------------------------------------------------

async function refreshStatus(): Promise<void> {
  const current = memory;
  if (!current) return;
  let status: MemoryStatus;
  try {
    status = await current.status();
  } catch (error) {
    // A memory closed meanwhile (another database being opened) has nothing to report.
    if (memory !== current) return;
    throw error;
  }
  if (memory !== current) return;
  byId('status-count').textContent = `${status.memories.toLocaleString()} ${status.memories === 1 ? 'memory' : 'memories'}`;
  byId('status-storage').textContent = `storage: ${status.storage}${status.persisted ? ' (persisted)' : ''}`;
  const encryption = byId('status-encryption');
  encryption.textContent = status.encrypted ? 'encrypted at rest' : 'not encrypted';
  encryption.dataset.encrypted = String(status.encrypted);
  const learning = byId('status-learning');
  learning.textContent = `${status.core} core · ${status.associations.toLocaleString()} ${status.associations === 1 ? 'association' : 'associations'} · ${status.links} ${status.links === 1 ? 'link' : 'links'}`;
  Object.assign(learning.dataset, { core: String(status.core), associations: String(status.associations), links: String(status.links) });
  const modelBar = byId<HTMLProgressElement>('model-progress');
  const modelLabel = byId('status-model-label');
  if (status.embedder) modelLabel.textContent = `model: ${status.embedder}`;
  else if (status.error) modelLabel.textContent = `model: unavailable (${status.error.code}), lexical search only`;
  else if (!modelBar.hasAttribute('value')) modelLabel.textContent = 'model: loading';
  modelBar.hidden = status.embedder !== null || status.error !== null;
  const statusError = status.error ? `${status.error.code}: ${status.error.message}` : '';
  if (statusError && statusError !== lastStatusError) message(statusError, 'error');
  lastStatusError = statusError;
  if (!operationRunning) {
    if (status.indexing) showProgress('re-indexing', status.indexing);
    else byId('status-indexing').hidden = true;
  }
  renderFacts(byId('facts'), { embedder: status.embedder, storage: status.storage, persisted: status.persisted });
  const legs = `${status.embedder}|${status.indexing ? 'indexing' : 'ready'}`;
  if (legs !== lastLegs) {
    // The vector leg just became available (or complete): show its ranking without waiting for a keystroke.
    lastLegs = legs;
    void runSearch();
  }
}

/** transformers.js-style loading events: `{ status: 'progress', file, progress }` per model file. */
function showModelProgress(event: unknown): void {
  const { status, file, progress } = (event ?? {}) as { status?: string; file?: string; progress?: number };
  if (status !== 'progress' || typeof progress !== 'number') return;
  const bar = byId<HTMLProgressElement>('model-progress');
  bar.max = 100;
  bar.value = progress;
  byId('status-model-label').textContent = `model: loading ${file ?? ''} ${Math.round(progress)}%`;
}

async function refreshSuggestions(): Promise<void> {
  if (!memory || (await memory.count()) > SUGGESTION_SCAN_LIMIT) return;
  const records = await memory.export();
  const distinct = (values: (string | undefined)[]) => [...new Set(values.filter((v): v is string => !!v))].sort();
  suggestions = { projects: distinct(records.map((r) => r.project)), kinds: distinct(records.map((r) => r.kind)) };
  controls.setProjects(suggestions.projects);
}

async function afterDataChange(): Promise<void> {
  await Promise.all([refreshStatus(), refreshSuggestions()]);
  await runSearch();
}

// ---- search --------------------------------------------------------------------------------------------

const scheduleSearch = debounce(() => void runSearch(), 120);

async function runSearch(): Promise<void> {
  save();
  // A replay owns the results until it ends (it searches again then).
  if (!memory || replaying) return;
  const query = queryInput.value;
  const seq = ++searchSeq;
  if (!query.trim()) {
    hitsList.replaceChildren();
    droppedList.hidden = true;
    summary.textContent = '';
    empty.textContent = (await memory.count()) === 0 ? EMPTY_STORE : 'Type a query, or pick one above.';
    previous = null;
    return;
  }
  const state = controls.state();
  const options = toSearchOptions(state);
  let result: SearchResult;
  try {
    result = await memory.search(query, options);
  } catch (error) {
    if (seq === searchSeq) message(`Search failed: ${describeError(error)}`, 'error');
    return;
  }
  if (seq !== searchSeq) return;
  await showResult(query, result, options.now ?? Date.now(), seq);
}

/** Renders a search's hits, summary, trace and context; `seq` is the search's place in `searchSeq`. */
async function showResult(query: string, result: SearchResult, now: number, seq: number): Promise<void> {
  if (!memory) return;
  const state = controls.state();
  const evidence = new Set(questions.get(query) ?? []);
  const changes = renderHits(hitsList, droppedList, result, {
    query,
    queries: result.trace.queries,
    options: { fusion: state.fusion, rrfK: state.rrfK, weights: { lexical: state.weightLexical, vector: state.weightVector }, topRankBonus: state.topRankBonus },
    touched: state.touch,
    now,
    previous,
    evidence,
    actions: { pin, edit, remove },
    associations: { source: associationSource, floor: state.associationFloor, open: openAssociations },
  });
  const compared = previous?.query === query;
  const parts = [`${result.hits.length} ${result.hits.length === 1 ? 'hit' : 'hits'}`, result.trace.mode, `${result.trace.totalMs.toFixed(1)} ms`];
  if (compared) parts.push(`vs previous: ${changes.moved} moved, ${changes.added} new, ${changes.dropped.length} dropped`);
  if (evidence.size) {
    const found = result.hits.filter((hit) => evidence.has(hit.id)).length;
    parts.push(`evidence ${found}/${evidence.size} in the hits`);
  }
  const associative = result.hits.filter((hit) => hit.explain.associative).length;
  if (associative) parts.push(`${associative} associative`);
  summary.textContent = parts.join(' · ');
  empty.textContent = result.hits.length ? '' : (await memory.count()) === 0 ? EMPTY_STORE : 'No hits. Try another query, or loosen the filters.';
  renderTrace(byId('trace'), result.trace, llmPicker.picked().label);
  renderContext(byId('context-meter'), byId('context-text'), result.context);
  previous = { query, hits: result.hits.map(({ id, text }) => ({ id, text })) };
  hitsList.dataset.generation = String(seq);
}

// ---- memory actions ------------------------------------------------------------------------------------

/** The open memory: every action below is enabled only once it is. */
function opened(): Memory {
  if (!memory) throw new Error('demo: the memory is not open yet');
  return memory;
}

async function mutate(label: string, change: () => Promise<unknown>): Promise<void> {
  // Re-rendering replaces the hit cards: put keyboard focus back on the same button of the same memory.
  const focused = document.activeElement instanceof HTMLButtonElement ? document.activeElement : null;
  const id = focused?.closest<HTMLElement>('li.hit')?.dataset.id;
  const action = focused?.classList[0];
  try {
    await change();
    message(label);
  } catch (error) {
    message(`${label} failed: ${describeError(error)}`, 'error');
  }
  await afterDataChange();
  if (id && action) hitsList.querySelector<HTMLButtonElement>(`li.hit[data-id="${CSS.escape(id)}"] button.${action}`)?.focus();
}

function pin(record: MemoryRecord): void {
  void mutate(record.pinned ? 'Unpinned' : 'Pinned', () => opened().pin(record.id, !record.pinned));
}

async function edit(record: MemoryRecord): Promise<void> {
  const fields = await editMemory(record, suggestions);
  if (fields) await mutate('Saved', () => opened().update(record.id, fields));
}

function remove(record: MemoryRecord): void {
  if (!confirm(`Delete this memory?\n\n${record.text}`)) return;
  void mutate('Deleted', () => opened().remove(record.id));
}

function toInput(fields: EditorFields): MemoryInput {
  const { kind, project, quality, ...rest } = fields;
  return { ...rest, ...(kind ? { kind } : {}), ...(project ? { project } : {}), ...(quality !== null ? { quality } : {}) };
}

async function addMemory(): Promise<void> {
  const fields = await editMemory(null, suggestions);
  if (fields) await mutate('Added', () => opened().add(toInput(fields)));
}

async function clearStore(): Promise<void> {
  const ids = (await opened().export()).map((r) => r.id);
  if (ids.length) await opened().remove(ids);
}

async function askAndClear(): Promise<void> {
  const count = await opened().count();
  if (count > 0 && confirm(`Delete all ${count} memories from this browser?`)) await busy('Clearing', clearStore);
}

async function loadSample(): Promise<void> {
  const count = await opened().count();
  if (count > 0 && !confirm(`Replace the ${count} memories in the store with the sample?`)) return;
  questions.clear();
  showQuestions();
  await busy('Loading the sample', async (onProgress) => {
    await clearStore();
    await opened().add(sampleMemories(), { onProgress });
  });
  if (!queryInput.value.trim()) {
    queryInput.value = SAMPLE_QUERIES[0] ?? '';
    await runSearch();
  }
}

async function importFiles(files: FileList): Promise<void> {
  for (const file of files) {
    await busy(`Importing ${file.name}`, async (onProgress) => {
      const batch = parseImport(await file.text(), file.name);
      if (batch.records.length) await opened().import(batch.records, { onProgress });
      if (batch.inputs.length) await opened().add(batch.inputs, { onProgress });
      for (const q of batch.questions) questions.set(q.question, q.evidence);
      if (batch.lastSessionAt !== undefined) {
        // Replay the conversation as of its last session, so decay sees the ages its speakers saw.
        controls.set({ ...controls.state(), now: localDate(batch.lastSessionAt) });
        updateChangedCount();
      }
    });
  }
  showQuestions();
}

function showQuestions(): void {
  questionSelect.replaceChildren(
    h('option', { value: '' }, `LoCoMo questions (${questions.size})…`),
    ...[...questions.keys()].map((q) => h('option', { value: q }, q)),
  );
  questionSelect.hidden = questions.size === 0;
  replay.offer(`LoCoMo questions (${questions.size})`, [...questions.keys()]);
}

async function exportAs(format: 'json' | 'ndjson'): Promise<void> {
  const records = await opened().export();
  const stamp = new Date().toISOString().slice(0, 10);
  download(serialise(records, format), `engram-${stamp}.${format}`, format === 'json' ? 'application/json' : 'application/x-ndjson');
  message(`Exported ${records.length} memories as ${format.toUpperCase()}`);
}

// ---- wiring --------------------------------------------------------------------------------------------

function wire(): void {
  byId('search-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void runSearch();
  });
  byId('controls').addEventListener('submit', (event) => event.preventDefault());
  queryInput.addEventListener('input', scheduleSearch);
  byId('sample-queries').replaceChildren(
    ...SAMPLE_QUERIES.map((q) =>
      h('button', { type: 'button', class: 'chip', on: { click: () => ((queryInput.value = q), void runSearch()) } }, q),
    ),
  );
  questionSelect.addEventListener('change', () => {
    if (!questionSelect.value) return;
    queryInput.value = questionSelect.value;
    void runSearch();
  });
  byId('reset-options').addEventListener('click', () => {
    controls.set(defaultState());
    updateChangedCount();
    void runSearch();
  });
  byId('load-sample').addEventListener('click', () => void loadSample());
  byId('add-memory').addEventListener('click', () => void addMemory());
  byId('export-json').addEventListener('click', () => void exportAs('json'));
  byId('export-ndjson').addEventListener('click', () => void exportAs('ndjson'));
  byId('clear-store').addEventListener('click', () => void askAndClear());
  const fileInput = byId<HTMLInputElement>('import-file');
  fileInput.addEventListener('change', () => {
    if (fileInput.files?.length) void importFiles(fileInput.files).finally(() => (fileInput.value = ''));
  });
  document.addEventListener('keydown', (event) => {
    const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLSelectElement;
    if (event.key === '/' && !typing) {
      event.preventDefault();
      queryInput.focus();
      queryInput.select();
    }
  });
  const panel = byId<HTMLDetailsElement>('options-panel');
  panel.open = window.matchMedia('(min-width: 900px)').matches;
}

/** Closes the open memory, if any, and forgets what the page showed of it. */
async function closeMemory(): Promise<void> {
  const closing = memory;
  memory = null;
  // Searches still running on the closed memory must not render over the next one.
  searchSeq++;
  replay.stop();
  replay.setReady(false);
  conversation.setReady(false);
  openAssociations.clear();
  enableDataActions(false);
  hitsList.replaceChildren();
  droppedList.hidden = true;
  summary.textContent = '';
  empty.textContent = '';
  previous = null;
  lastLegs = '';
  questions.clear();
  showQuestions();
  suggestions = { projects: [], kinds: [] };
  controls.setProjects([]);
  for (const id of ['status-database', 'status-encryption', 'status-storage', 'status-learning']) byId(id).textContent = '';
  try {
    await closing?.close();
  } catch (error) {
    message(`Closing the memory failed: ${describeError(error)}`, 'error');
  }
}

/**
 * Opens database `name`, encrypted with `passphrase` when one is given, in place of the open one. On a refusal
 * (WRONG_KEY, KEY_REQUIRED, NOT_ENCRYPTED, …) nothing is open and the error goes to the caller, which shows it.
 */
async function openMemory(name: string, passphrase: string | null): Promise<{ encrypted: boolean }> {
  await closeMemory();
  byId('status-count').textContent = 'opening…';
  message(`Opening “${name}”…`);
  let opened: Memory;
  try {
    // The memory's `llm` delegates to the backend picked at each call (llm-picker.ts), and its `reranker` is the
    // demo's own hook, used only by searches with `rerank: { by: 'hook' }`.
    opened = await createMemory({
      name,
      // The demo's CSP requires Trusted Types and allows one policy: createMemory makes it, for its worker's URL only.
      trustedTypes: 'engram-demo',
      embedder: { onProgress: showModelProgress },
      llm: llmPicker.model,
      reranker: (query, candidates) => queryWordsFirst(query, candidates),
      ...(passphrase !== null ? { encryption: { passphrase } } : {}),
    });
  } catch (error) {
    message(`Could not open “${name}”: ${describeError(error)}`, 'error');
    byId('status-count').textContent = 'not open';
    throw error;
  }
  memory = opened;
  const { encrypted } = await opened.status();
  byId('status-database').textContent = `database: ${name}`;
  message(`Opened “${name}”${encrypted ? ', encrypted' : ''}`);
  enableDataActions(true);
  replay.setReady(true);
  conversation.setReady(true);
  // Not awaited: the database panel remembers the choice as soon as it is open, not after the first search
  // (which may wait for the model), so a reload right after "Opened" opens it again.
  void afterDataChange().catch((error) => message(describeError(error), 'error'));
  return { encrypted };
}

async function start(): Promise<void> {
  wire();
  updateChangedCount();
  const database = mountDatabasePanel({
    open: openMemory,
    changePassphrase: async (current, next) => {
      try {
        await opened().changePassphrase(current, next);
        message('Passphrase changed');
      } catch (error) {
        message(`Changing the passphrase failed: ${describeError(error)}`, 'error');
        throw error;
      }
    },
  });
  setInterval(() => void refreshStatus().catch((error) => message(describeError(error), 'error')), 1000);
  if (!database.start()) byId('status-count').textContent = 'not open';
}

void start();
