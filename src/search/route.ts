/**
 * Which legs run. The rule:
 * - A blank query runs the lexical leg only (which finds nothing): no embedding of empty text.
 * - `mode: 'lexical' | 'vector' | 'hybrid'` is obeyed when it can be; a leg that needs vectors falls back
 *   to lexical when there is no embedder or its vectors are still being built (the note says why).
 * - `mode: 'auto'`: lexical when the query is a single identifier-like token (see `isIdentifierQuery`:
 *   exact strings such as paths, hashes and error codes match by their characters, and embeddings of them
 *   are noise), or when vectors are unavailable; hybrid otherwise.
 */
import type { SearchOptions } from './options.js';

export type Mode = 'lexical' | 'vector' | 'hybrid';

export interface Route {
  mode: Mode;
  note: string;
}

interface RouteContext {
  /** Embedder id, or null for lexical-only engines. */
  embedder: string | null;
  /** False while stored vectors are missing for some memories (re-indexing). */
  vectorsReady: boolean;
}

const PATH = /[/\\]/;
const HEX_HASH = /^[0-9a-f]{7,}$/i;
const DOTTED_OR_SCOPED = /\w(\.|::|#|@)\w/;
const CODE_LIKE = /^(?=.*[A-Za-z])(?=.*[\d_]).+$/; // letters mixed with digits or underscores: E0308, ERR_X, v2

/**
 * True for one whitespace-free token of ≥ 3 characters that looks like an identifier: contains a path
 * separator, is a hex hash of ≥ 7 digits with at least one digit, has a dot/`::`/`#`/`@` between word
 * characters, or mixes letters with digits or underscores. Plain words ("hello", "auth-middleware") are not.
 */
export function isIdentifierQuery(query: string): boolean {
  const token = query.trim();
  if (token.length < 3 || /\s/.test(token)) return false;
  if (PATH.test(token) || DOTTED_OR_SCOPED.test(token)) return true;
  if (HEX_HASH.test(token) && /\d/.test(token)) return true;
  return CODE_LIKE.test(token);
}

export function route(query: string, mode: SearchOptions['mode'], context: RouteContext): Route {
  const unavailable =
    context.embedder === null ? 'no embedder: lexical only'
    : !context.vectorsReady ? `vectors for ${context.embedder} are still being built: lexical only`
    : null;
  if (query.trim() === '') return { mode: 'lexical', note: 'empty query: nothing to search for' };
  if (mode === 'lexical') return { mode, note: 'lexical (asked)' };
  if (unavailable) return { mode: 'lexical', note: unavailable };
  if (mode !== 'auto') return { mode, note: `${mode} (asked)` };
  if (isIdentifierQuery(query)) return { mode: 'lexical', note: 'identifier-like query: lexical' };
  return { mode: 'hybrid', note: `hybrid: ${context.embedder}` };
}
