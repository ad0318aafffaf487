/**
 * The popup: notes about one tab's page. Opened from the toolbar it works on the active tab. Opened as
 * popup.html?tab=<id> (in a tab of its own, as the test does) it works on that tab.
 */
import type { Answers, Envelope, Reply, Request, VaultState } from './messages.js';

const status = document.querySelector<HTMLParagraphElement>('#status')!;
const page = document.querySelector<HTMLElement>('#page')!;
const mode = document.querySelector<HTMLParagraphElement>('#mode')!;
const list = document.querySelector<HTMLOListElement>('#hits')!;
const vaultStatus = document.querySelector<HTMLParagraphElement>('#vault-status')!;
const passphraseField = document.querySelector<HTMLInputElement>('#vault input[name=passphrase]')!;

async function ask<R extends Request>(request: R): Promise<Answers[R['type']]> {
  const envelope: Envelope = { target: 'background', request };
  const reply = (await chrome.runtime.sendMessage(envelope)) as Reply<Answers[R['type']]> | undefined;
  if (!reply) throw new Error('the background gave no answer');
  if (!reply.ok) throw new Error(reply.error.code ? `${reply.error.code}: ${reply.error.message}` : reply.error.message);
  return reply.value;
}

async function targetTab(): Promise<chrome.tabs.Tab> {
  const id = new URLSearchParams(location.search).get('tab');
  if (id !== null) return chrome.tabs.get(Number(id));
  const [active] = await chrome.tabs.query({ active: true, currentWindow: true });
  if (!active) throw new Error('no active tab');
  return active;
}

async function showStatus(): Promise<void> {
  const { count, storage, embedder, error } = await ask({ type: 'status' });
  const model = embedder ?? (error ? `failed (${error.code}: ${error.message})` : 'loading');
  status.textContent = `ready: ${count} memories, ${storage}, model ${model}`;
}

/** Runs a form's action on submit and shows its failure in the status line. */
function onSubmit(selector: string, action: (form: HTMLFormElement) => Promise<void>): void {
  const form = document.querySelector<HTMLFormElement>(selector)!;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    action(form).catch((error: unknown) => {
      status.textContent = `error: ${error instanceof Error ? error.message : String(error)}`;
    });
  });
}

/** The vault's line, and body[data-vault] for a script driving the popup: locked, opening, open or failed. */
function showVault(state: VaultState | { failed: string } | 'opening'): void {
  if (state === 'opening') {
    vaultStatus.textContent = 'opening…';
    document.body.dataset.vault = 'opening';
  } else if ('failed' in state) {
    vaultStatus.textContent = state.failed;
    document.body.dataset.vault = 'failed';
  } else {
    vaultStatus.textContent = state.open ? `unlocked: ${state.count} notes${state.encrypted ? ' (encrypted)' : ''}` : 'locked';
    document.body.dataset.vault = state.open ? 'open' : 'locked';
  }
}

/** Runs a vault action and shows its outcome; a failure (WRONG_KEY, …) is shown in the vault's line. */
function onVault(selector: string, event: 'submit' | 'click', action: () => Promise<VaultState>): void {
  document.querySelector(selector)!.addEventListener(event, (submitted) => {
    submitted.preventDefault();
    action().then(showVault, (error: unknown) => showVault({ failed: error instanceof Error ? error.message : String(error) }));
  });
}

try {
  const tab = await targetTab();
  const title = tab.title ?? '';
  page.textContent = title;
  await showStatus();
  showVault(await ask({ type: 'vault-status' }));
  document.body.dataset.state = 'ready';

  onSubmit('#add', async (form) => {
    const note = new FormData(form).get('note');
    if (typeof note !== 'string' || note.trim() === '') return;
    await ask({ type: 'add', note, title, url: tab.url ?? '' });
    form.reset();
    await showStatus();
  });

  let searches = 0;
  onSubmit('#search', async (form) => {
    const query = new FormData(form).get('query');
    if (typeof query !== 'string') return;
    const found = await ask({ type: 'search', query, k: 5 });
    mode.textContent = found.mode;
    list.replaceChildren(...found.hits.map((hit) => Object.assign(document.createElement('li'), { textContent: hit.text })));
    await showStatus();
    // Counts answered searches, so a script driving the popup knows when #mode and #hits are fresh.
    document.body.dataset.searches = String(++searches);
  });

  onVault('#vault', 'submit', async () => {
    const passphrase = passphraseField.value;
    // Cleared before it is sent, whatever the outcome: the field was the only place the popup held it. It goes
    // nowhere else (no chrome.storage, no localStorage); the vault asks for it again after a lock or a restart.
    passphraseField.value = '';
    if (passphrase === '') throw new Error('type the vault passphrase first');
    showVault('opening');
    return ask({ type: 'vault-unlock', passphrase });
  });
  onVault('#vault-add', 'submit', async () => {
    const form = document.querySelector<HTMLFormElement>('#vault-add')!;
    const note = new FormData(form).get('note');
    if (typeof note !== 'string' || note.trim() === '') return ask({ type: 'vault-status' });
    const state = await ask({ type: 'vault-add', note });
    form.reset();
    return state;
  });
  onVault('#vault-lock', 'click', () => ask({ type: 'vault-lock' }));
} catch (error) {
  status.textContent = `error: ${error instanceof Error ? error.message : String(error)}`;
  document.body.dataset.state = 'failed';
}
