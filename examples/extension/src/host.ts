/**
 * The extension page that owns the Engram worker: Chrome's offscreen document (src/offscreen.ts) or Firefox's event
 * page (src/event-page.ts). Either one answers the popup's requests with this module; a service worker cannot.
 */
import { createMemory, isEngramError, type Memory } from 'engram';
import { isVaultRequest, replyError, type Answers, type Reply, type Request, type VaultRequest, type VaultState } from './messages.js';

let opening: Promise<Memory> | null = null;

/** Opens the memory once; after a failure the next request tries again. */
export function memory(): Promise<Memory> {
  opening ??= createMemory({ name: 'page-notes' }).catch((error: unknown) => {
    opening = null;
    throw error;
  });
  return opening;
}

/**
 * The private notes vault: open only between an unlock and a lock (or until the browser closes this document, which
 * ends the worker and its key with it). Its passphrase goes straight to createMemory and is not kept here.
 */
let vault: Memory | null = null;
/** Vault requests run one at a time, so an add never lands in a vault that an unlock is closing. */
let vaultTurn: Promise<unknown> = Promise.resolve();

function inVaultTurn<T>(step: () => Promise<T>): Promise<T> {
  const result = vaultTurn.then(step);
  vaultTurn = result.catch(() => undefined);
  return result;
}

async function vaultState(): Promise<VaultState> {
  if (!vault) return { open: false };
  // Said by the worker's own status, not assumed from having passed a passphrase.
  const [count, { encrypted }] = await Promise.all([vault.count(), vault.status()]);
  return { open: true, count, encrypted };
}

async function lockVault(): Promise<void> {
  const previous = vault;
  vault = null;
  await previous?.close();
}

async function answerVault(request: VaultRequest): Promise<VaultState> {
  switch (request.type) {
    case 'vault-unlock':
      // Close whatever vault is open first: a failed unlock leaves the vault locked, never the old one open.
      await lockVault();
      vault = await createMemory({ name: 'vault', encryption: { passphrase: request.passphrase } });
      return vaultState();
    case 'vault-add':
      if (!vault) throw new Error('the vault is locked: unlock it with its passphrase first');
      await vault.add({ text: request.note, tags: ['vault'] });
      return vaultState();
    case 'vault-lock':
      await lockVault();
      return vaultState();
    case 'vault-status':
      return vaultState();
  }
}

async function answer(request: Request): Promise<Answers[Request['type']]> {
  if (isVaultRequest(request)) return inVaultTurn(() => answerVault(request));
  const notes = await memory();
  switch (request.type) {
    case 'add': {
      const [id] = await notes.add({
        text: `${request.title}: ${request.note}`,
        tags: ['page-note'],
        meta: { title: request.title, url: request.url },
      });
      return { id: id!, count: await notes.count() };
    }
    case 'search': {
      const { hits, trace } = await notes.search(request.query, { k: request.k });
      return {
        mode: trace.mode,
        hits: hits.map((hit) => ({ id: hit.id, text: hit.text })),
      };
    }
    case 'status':
      return notes.status();
  }
}


/** Answers one request as a JSON reply: an error travels as its Engram code (or null) and its message. */
export function reply(request: Request): Promise<Reply<unknown>> {
  return answer(request).then(
    (value): Reply<unknown> => ({ ok: true, value }),
    (error: unknown): Reply<unknown> => ({ ok: false, error: replyError(error, isEngramError(error) ? error.code : null) }),
  );
}
