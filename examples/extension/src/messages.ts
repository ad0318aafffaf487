/**
 * The messages the three parts exchange through chrome.runtime. chrome.runtime.sendMessage reaches every extension
 * page and the service worker at once, so each message names its target and everyone else ignores it.
 */
import type { MemoryStatus } from 'engram';

export type Request =
  | { type: 'add'; note: string; title: string; url: string }
  | { type: 'search'; query: string; k: number }
  | { type: 'status' };

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

export type Target = 'service-worker' | 'offscreen';

export interface Envelope {
  target: Target;
  request: Request;
}

export function isFor(target: Target, message: unknown): message is Envelope {
  return typeof message === 'object' && message !== null && (message as Partial<Envelope>).target === target;
}
