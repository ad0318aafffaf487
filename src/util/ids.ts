/** Memory ids: made (UUID v7) and checked. */
import { invalidInput } from '../errors.js';
import { describeValue } from './describe.js';

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix time in ms, then random bits. Ids made later sort later, so the
 * store's indexes on ids grow at their end; random (v4) ids put each new memory on a random index page, so a
 * large write rewrites most of the index (docs/worker.md).
 */
/** Lowercase hex of `bytes`, two digits per byte. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export function newId(): string {
  const bytes = new Uint8Array(16);
  const c = globalThis.crypto;
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  for (let i = 5, ms = Date.now(); i >= 0; i--, ms = Math.floor(ms / 256)) bytes[i] = ms % 256;
  bytes[6] = 0x70 | (bytes[6]! & 0x0f); // version 7
  bytes[8] = 0x80 | (bytes[8]! & 0x3f); // RFC 9562 variant
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Ids are non-empty, at most 512 UTF-16 code units, and well-formed UTF-16: SQLite stores UTF-8, where a lone
 * surrogate cannot be written, so two ids differing only in one would read back as one id.
 */
export function checkId(id: unknown, where: string): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > 512) {
    throw invalidInput(`${where}: id must be a non-empty string of at most 512 characters, got ${describeValue(id)}`);
  }
  if (!isWellFormed(id)) throw invalidInput(`${where}: id ${describeValue(id)} is not well-formed UTF-16 (it holds a lone surrogate)`);
  return id;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** String.prototype.isWellFormed (ES2024: Node 20, Chrome 111, Safari 16.4, Firefox 119), else the same test by regex. */
export function isWellFormed(text: string): boolean {
  const native = (text as string & { isWellFormed?: () => boolean }).isWellFormed;
  return typeof native === 'function' ? native.call(text) : !LONE_SURROGATE.test(text);
}
