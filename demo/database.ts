/**
 * Which database the demo opens, and how: the open form (a name, and a passphrase when "Encrypt with a passphrase"
 * is ticked), the choice remembered between visits, and the passphrase change of an open encrypted database.
 *
 * A passphrase lives only in its field: it is read once per submit and the field is cleared at once. It is never
 * saved (localStorage keeps only the name and whether it was encrypted), never put in a URL (no field has a `name`
 * and every submit is handled here, so the browser never serialises the form), and never logged.
 */
import { isEngramError } from '../src/index.js';
import { byId } from './dom.js';

const CHOICE_KEY = 'engram-demo:database:v1';
export const DEFAULT_DATABASE = 'engram-demo';
/** The name proposed when "Encrypt" is ticked on the default one: that one already exists unencrypted (NOT_ENCRYPTED). */
const DEFAULT_ENCRYPTED_DATABASE = 'engram-demo-encrypted';

/** What the demo remembers between visits: never the passphrase. */
export interface DatabaseChoice {
  name: string;
  /** It was encrypted when last opened: the demo then waits for the passphrase instead of opening by itself. */
  encrypted: boolean;
}

export function loadChoice(): DatabaseChoice {
  try {
    const saved = JSON.parse(localStorage.getItem(CHOICE_KEY) ?? 'null') as Partial<DatabaseChoice> | null;
    if (saved && typeof saved.name === 'string' && saved.name) return { name: saved.name, encrypted: saved.encrypted === true };
  } catch {
    // Unreadable: start from the default database.
  }
  return { name: DEFAULT_DATABASE, encrypted: false };
}

function saveChoice(choice: DatabaseChoice): void {
  localStorage.setItem(CHOICE_KEY, JSON.stringify({ name: choice.name, encrypted: choice.encrypted } satisfies DatabaseChoice));
}

/** `CODE: message` for Engram's errors, so the page always says which refusal it was. */
export function describeError(error: unknown): string {
  if (isEngramError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Shows an outcome as text (never markup) and its error code, if any, as `data-code` for scripts and styles. */
function showOutcome(slot: HTMLElement, outcome: { ok: true; text: string } | { ok: false; error: unknown }): void {
  slot.textContent = outcome.ok ? outcome.text : describeError(outcome.error);
  slot.title = slot.textContent;
  slot.className = outcome.ok ? 'form-result ok' : 'form-error';
  if (!outcome.ok && isEngramError(outcome.error)) slot.dataset.code = outcome.error.code;
  else delete slot.dataset.code;
}

export interface DatabaseHandlers {
  /** Closes the open memory (if any) and opens `name`; rejects with the refusal. Resolves with whether it is encrypted. */
  open(name: string, passphrase: string | null): Promise<{ encrypted: boolean }>;
  changePassphrase(current: string, next: string): Promise<void>;
}

export interface DatabasePanel {
  /** Opens the remembered database at once if it was unencrypted (true); otherwise asks for its passphrase (false). */
  start(): boolean;
}

export function mountDatabasePanel(handlers: DatabaseHandlers): DatabasePanel {
  const openForm = byId<HTMLFormElement>('open-form');
  const nameInput = byId<HTMLInputElement>('db-name');
  const encryptBox = byId<HTMLInputElement>('db-encrypt');
  const passphraseSlot = byId('db-passphrase-slot');
  const passphraseInput = byId<HTMLInputElement>('db-passphrase');
  const openButton = byId<HTMLButtonElement>('db-open');
  const openError = byId('open-error');
  const changeForm = byId<HTMLFormElement>('passphrase-form');
  const [current, next, repeat] = ['pp-current', 'pp-next', 'pp-repeat'].map((id) => byId<HTMLInputElement>(id)) as [HTMLInputElement, HTMLInputElement, HTMLInputElement];
  const changeButton = byId<HTMLButtonElement>('pp-change');
  const changeResult = byId('passphrase-result');

  const choice = loadChoice();
  nameInput.value = choice.name;
  encryptBox.checked = choice.encrypted;

  const showPassphrase = () => {
    passphraseSlot.hidden = !encryptBox.checked;
    passphraseInput.required = encryptBox.checked;
    if (!encryptBox.checked) passphraseInput.value = '';
  };
  showPassphrase();
  encryptBox.addEventListener('change', () => {
    showPassphrase();
    const proposed = encryptBox.checked ? [DEFAULT_DATABASE, DEFAULT_ENCRYPTED_DATABASE] : [DEFAULT_ENCRYPTED_DATABASE, DEFAULT_DATABASE];
    if (nameInput.value.trim() === proposed[0]) nameInput.value = proposed[1]!;
    if (encryptBox.checked) passphraseInput.focus();
  });

  const setOpening = (opening: boolean) => {
    for (const control of [nameInput, encryptBox, passphraseInput, openButton]) control.disabled = opening;
  };

  async function open(name: string, passphrase: string | null): Promise<void> {
    setOpening(true);
    openError.textContent = '';
    delete openError.dataset.code;
    changeForm.hidden = true;
    try {
      const { encrypted } = await handlers.open(name, passphrase);
      saveChoice({ name, encrypted });
      changeForm.hidden = !encrypted;
    } catch (error) {
      showOutcome(openError, { ok: false, error });
      setOpening(false);
      // Try again without reloading: the field that most likely needs retyping has the focus.
      (encryptBox.checked ? passphraseInput : nameInput).focus();
      return;
    }
    setOpening(false);
  }

  openForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const passphrase = encryptBox.checked ? passphraseInput.value : null;
    passphraseInput.value = '';
    void open(nameInput.value.trim(), passphrase);
  });

  changeForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const [was, wanted, again] = [current.value, next.value, repeat.value];
    for (const field of [current, next, repeat]) field.value = '';
    if (wanted !== again) {
      showOutcome(changeResult, { ok: false, error: new Error('The two new passphrases differ: nothing was changed.') });
      next.focus();
      return;
    }
    changeButton.disabled = true;
    void handlers
      .changePassphrase(was, wanted)
      .then(
        () => showOutcome(changeResult, { ok: true, text: 'Passphrase changed: use the new one from now on.' }),
        (error: unknown) => showOutcome(changeResult, { ok: false, error }),
      )
      .finally(() => (changeButton.disabled = false));
  });

  return {
    start() {
      if (!choice.encrypted) {
        void open(choice.name, null);
        return true;
      }
      showOutcome(openError, { ok: true, text: `“${choice.name}” is encrypted: type its passphrase and press Open.` });
      passphraseInput.focus();
      return false;
    },
  };
}
