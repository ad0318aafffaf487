// A vault: a second memory, encrypted at rest with the user's passphrase. The passphrase goes to Engram's worker
// with createMemory and this page keeps no copy of it.
import { createMemory, isEngramError } from 'engram';

const unlockForm = document.querySelector('#vault');
const passphraseField = unlockForm.querySelector('input[name=passphrase]');
const unlockButton = unlockForm.querySelector('button');
const addForm = document.querySelector('#vault-add');
const vaultStatus = document.querySelector('#vault-status');

// The open vault's Memory, or null while locked.
let vault = null;

function show(text, state) {
  vaultStatus.textContent = text;
  document.body.dataset.vault = state;
}

function describe(error) {
  return isEngramError(error) ? `${error.code}: ${error.message}` : String(error);
}

async function showCount(memory) {
  // Said from the worker's own status, not assumed from having passed a passphrase.
  const [count, { encrypted }] = await Promise.all([memory.count(), memory.status()]);
  show(`ready: ${count} memories${encrypted ? ' (encrypted)' : ''}`, 'ready');
}

unlockForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const passphrase = passphraseField.value;
  // Cleared at once, whatever the outcome: the field is the only place the page held it.
  passphraseField.value = '';
  if (passphrase === '') return;
  unlockButton.disabled = true;
  show('opening…', 'opening');
  const previous = vault;
  vault = null;
  try {
    await previous?.close();
    vault = await createMemory({ name: 'vault', encryption: { passphrase } });
    await showCount(vault);
  } catch (error) {
    show(describe(error), 'failed');
  } finally {
    unlockButton.disabled = false;
  }
});

addForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const text = new FormData(addForm).get('text');
  if (typeof text !== 'string' || text.trim() === '') return;
  if (!vault) return show('locked: open the vault with its passphrase first', 'failed');
  try {
    await vault.add({ text, tags: ['vault'] });
    addForm.reset();
    await showCount(vault);
  } catch (error) {
    show(describe(error), 'failed');
  }
});
