/**
 * The demo's second view (sync.html): two devices in one page, each a Memory of its own (its own worker and
 * database, in memory), syncing through the bucket the dev server answers under this origin
 * (scripts/demo-bucket.ts). Every text shown is set as text, never as markup (the page requires Trusted Types).
 */
import { createMemory, isEngramError, type Memory, type MemoryStatus, type MemorySyncOptions, type SearchResult } from '../src/index.js';
import { describeError } from './database.js';
import { byId, h } from './dom.js';

/** scripts/demo-bucket.ts's DEMO_BUCKET and credentials (that file runs in Node, so it is not imported here). */
const TRANSPORT: MemorySyncOptions['transport'] = {
  kind: 's3',
  endpoint: location.origin,
  bucket: 'engram-demo-bucket',
  region: 'us-east-1',
  accessKeyId: 'S3RVER',
  secretAccessKey: 'S3RVER',
};
/** A demo's sync secret, shared by its two devices. A real app asks the user for one (or hands over a random key). */
const PASSPHRASE = 'engram demo sync passphrase';
const STATUS_POLL_MS = 1500;
const TIME = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

interface Panel {
  section: HTMLElement;
  count: HTMLElement;
  lastSync: HTMLElement;
  pending: HTMLElement;
  error: HTMLElement;
  model: HTMLElement;
  message: HTMLElement;
  hits: HTMLOListElement;
  controls: (HTMLButtonElement | HTMLInputElement)[];
}

function mountPanel(id: string, label: string): { panel: Panel; addForm: HTMLFormElement; searchForm: HTMLFormElement; syncButton: HTMLButtonElement; text: HTMLInputElement; query: HTMLInputElement } {
  const field = (name: string) => h('span', { id: `${id}-${name}` }, '…');
  const text = h('input', { id: `${id}-text`, autocomplete: 'off', spellcheck: 'false', maxlength: '2000', required: true, disabled: true, placeholder: 'something to remember' });
  const query = h('input', { id: `${id}-query`, type: 'search', autocomplete: 'off', spellcheck: 'false', required: true, disabled: true, placeholder: 'search this device' });
  const addButton = h('button', { type: 'submit', id: `${id}-add`, disabled: true }, 'Add');
  const syncButton = h('button', { type: 'button', id: `${id}-sync`, class: 'primary', disabled: true }, 'Sync now');
  const searchButton = h('button', { type: 'submit', id: `${id}-search`, disabled: true }, 'Search');
  const addForm = h('form', { class: 'device-row', autocomplete: 'off' }, h('label', { for: `${id}-text` }, 'New memory'), text, addButton);
  const searchForm = h('form', { class: 'device-row', role: 'search', autocomplete: 'off' }, h('label', { for: `${id}-query` }, 'Query'), query, searchButton);
  const panel: Panel = {
    section: h('section', { id: `device-${id}`, class: 'panel device', 'aria-labelledby': `${id}-heading` }),
    count: field('count'),
    lastSync: field('last-sync'),
    pending: field('pending'),
    error: field('error'),
    model: field('model'),
    message: h('p', { id: `${id}-message`, class: 'device-message', role: 'status', 'aria-live': 'polite' }),
    hits: h('ol', { id: `${id}-hits`, class: 'device-hits', 'aria-label': `${label}: results` }),
    controls: [text, query, addButton, syncButton, searchButton],
  };
  const fact = (name: string, value: HTMLElement) => [h('dt', {}, name), h('dd', {}, value)];
  panel.section.append(
    h('h2', { id: `${id}-heading` }, label),
    h('dl', { class: 'device-status' }, ...fact('memories', panel.count), ...fact('model', panel.model), ...fact('last sync', panel.lastSync), ...fact('pending', panel.pending), ...fact('sync error', panel.error)),
    addForm,
    h('div', { class: 'device-row' }, syncButton),
    panel.message,
    searchForm,
    panel.hits,
  );
  byId('devices').append(panel.section);
  return { panel, addForm, searchForm, syncButton, text, query };
}

function showStatus(panel: Panel, status: MemoryStatus): void {
  const sync = status.sync;
  panel.count.textContent = String(status.memories);
  panel.model.textContent = typeof status.ready === 'string' ? status.ready : `${status.ready.code}`;
  panel.section.dataset.ready = typeof status.ready === 'string' ? status.ready : 'failed';
  panel.lastSync.textContent = sync?.lastSyncAt ? TIME.format(sync.lastSyncAt) : 'never';
  panel.pending.textContent = String(sync?.pending ?? 0);
  panel.error.textContent = sync?.error ? sync.error.code : 'none';
  panel.error.title = sync?.error?.message ?? '';
  if (sync?.error) panel.error.dataset.code = sync.error.code;
  else delete panel.error.dataset.code;
}

function say(panel: Panel, text: string, error?: unknown): void {
  panel.message.textContent = error === undefined ? text : `${text}: ${describeError(error)}`;
  panel.message.className = error === undefined ? 'device-message' : 'device-message form-error';
  if (isEngramError(error)) panel.message.dataset.code = error.code;
  else delete panel.message.dataset.code;
}

/** Each hit's text and which legs found it: both, on a device whose model is ready, is the hybrid search. */
function showHits(panel: Panel, result: SearchResult): void {
  panel.hits.replaceChildren(
    ...result.hits.map((hit) => {
      const legs = [hit.explain.bm25Rank !== null ? `lexical #${hit.explain.bm25Rank}` : null, hit.explain.vecRank !== null ? `vector #${hit.explain.vecRank}` : null].filter((leg) => leg !== null);
      return h(
        'li',
        { class: 'device-hit', dataset: { id: hit.id, legs: [hit.explain.bm25Rank !== null ? 'lexical' : '', hit.explain.vecRank !== null ? 'vector' : ''].filter(Boolean).join(' ') } },
        h('span', { class: 'hit-text' }, hit.text),
        h('span', { class: 'muted' }, legs.join(' · ')),
      );
    }),
  );
  if (result.hits.length === 0) panel.hits.append(h('li', { class: 'muted' }, 'no hits on this device'));
}

async function openDevice(id: string, label: string): Promise<void> {
  const { panel, addForm, searchForm, syncButton, text, query } = mountPanel(id, label);
  let memory: Memory;
  try {
    memory = await createMemory({
      name: `engram-demo-device-${id}`,
      storage: 'memory',
      // The page's CSP requires Trusted Types and allows one policy: createMemory makes it once, for its worker's URL only.
      trustedTypes: 'engram-demo',
      sync: { transport: TRANSPORT, passphrase: PASSPHRASE, iterations: 100_000, prefix: 'demo/', intervalMs: 0 },
    });
  } catch (error) {
    say(panel, 'could not open', error);
    return;
  }
  const refresh = () => memory.status().then((status) => showStatus(panel, status), (error: unknown) => say(panel, 'status failed', error));
  await refresh();
  setInterval(() => void refresh(), STATUS_POLL_MS);
  for (const control of panel.controls) control.disabled = false;

  /** Runs one action with the panel's controls disabled, and shows its outcome. */
  const run = async (what: string, action: () => Promise<string>) => {
    for (const control of panel.controls) control.disabled = true;
    say(panel, `${what}…`);
    try {
      say(panel, await action());
    } catch (error) {
      say(panel, `${what} failed`, error);
    } finally {
      for (const control of panel.controls) control.disabled = false;
      await refresh();
    }
  };
  addForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value) return;
    void run('adding', async () => {
      await memory.add({ text: value });
      text.value = '';
      return 'added: press Sync now to send it';
    });
  });
  syncButton.addEventListener('click', () => {
    void run('syncing', async () => {
      const status = await memory.syncNow();
      return `synced at ${TIME.format(status.lastSyncAt ?? Date.now())}: ${status.pending} pending`;
    });
  });
  searchForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = query.value.trim();
    if (!value) return;
    void run('searching', async () => {
      const result = await memory.search(value);
      showHits(panel, result);
      return `${result.hits.length} hit${result.hits.length === 1 ? '' : 's'}`;
    });
  });
}

void openDevice('a', 'Device A');
void openDevice('b', 'Device B');
