/**
 * The messages the three parts exchange through chrome.runtime. chrome.runtime.sendMessage reaches every extension
 * page and the service worker at once, so each message names its target and everyone else ignores it.
 */
import type { MemoryStatus } from 'engram';

export type Request =
  | { type: 'add'; note: string; title: string; url: string }
  | { type: 'search'; query: string; k: number }
  | { type: 'status' }
  | VaultRequest;

/**
 * The vault: a second memory, encrypted at rest. The passphrase rides in the unlock message to the offscreen
 * document, which hands it to Engram's worker; no part of the extension keeps it.
 */
export type VaultRequest =
  | { type: 'vault-unlock'; passphrase: string }
  | { type: 'vault-add'; note: string }
  | { type: 'vault-lock' }
  | { type: 'vault-status' };

export function isVaultRequest(request: Request): request is VaultRequest {
  return request.type.startsWith('vault-');
}

/** The vault as the offscreen document holds it: locked, or open with its count and the worker's `encrypted`. */
export type VaultState = { open: false } | { open: true; count: number; encrypted: boolean };

/** A search hit as the popup shows it: the text is the page's title, a colon and the note. */
export interface Found {
  id: string;
  text: string;
}

/** What each request answers with. */
export interface Answers {
  add: { id: string; count: number };
  search: { mode: string; hits: Found[] };
  status: MemoryStatus;
  'vault-unlock': VaultState;
  'vault-add': VaultState;
  'vault-lock': VaultState;
  'vault-status': VaultState;
}

/**
 * chrome.runtime messages are JSON, so an Error object would arrive as `{}`: errors travel as their code (Engram's
 * stable code, or null for the relay's own failures) and message, and the popup can still switch on the code.
 */
export type ReplyError = { code: string | null; message: string };
export type Reply<T> = { ok: true; value: T } | { ok: false; error: ReplyError };

export function replyError(error: unknown, code: string | null = null): ReplyError {
  return { code, message: error instanceof Error ? error.message : String(error) };
}

/** 'background': Chrome's service worker or Firefox's event page; 'offscreen': Chrome's offscreen document. */
export type Target = 'background' | 'offscreen';

export interface Envelope {
  target: Target;
  request: Request;
}

/**
 * A message for `target`, sent by one of this extension's own pages (popup, service worker, offscreen document).
 * Nothing else can reach onMessage today (no content script, no `externally_connectable`); the check keeps it so if
 * a content script is added, since content scripts run inside web pages and a page can drive them.
 */
export function isFor(target: Target, message: unknown, sender: chrome.runtime.MessageSender): message is Envelope {
  const ownPage = sender.id === chrome.runtime.id && typeof sender.url === 'string' && sender.url.startsWith(chrome.runtime.getURL(''));
  return ownPage && typeof message === 'object' && message !== null && (message as Partial<Envelope>).target === target;
}
