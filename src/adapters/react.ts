/** `engram/react`: hooks that open a Memory for a component tree and search it as the user types. Needs `react` (a peer). */
import { useEffect, useRef, useState } from 'react';
import { createMemory, type Memory, type MemoryOptions } from '../client/create-memory.js';
import type { RemoteSearchOptions } from '../contract/protocol.js';
import { EngramError, ErrorCode, toEngramError } from '../errors.js';
import type { SearchResult } from '../types.js';
import { keysOf, type KeySet } from '../util/keys.js';
import { checkAdapterOptions, checkMemory, type SearchableMemory } from './searchable.js';

export interface UseMemoryResult {
  /** The open Memory; null while opening, after a failure and after unmount. */
  memory: Memory | null;
  status: 'opening' | 'open' | 'error';
  /** Why opening failed (the coded error `createMemory` rejected with). */
  error: EngramError | null;
}

interface Shared {
  opening: Promise<Memory>;
  users: number;
  closing?: ReturnType<typeof setTimeout>;
}

/** One Memory per name in this page, shared by every component that asks for it and closed when the last lets go. */
const shared = new Map<string, Shared>();

/**
 * A release waits this long before closing: React's StrictMode unmounts and remounts every effect at once, and a
 * remount should find the Memory still open rather than reopen the database.
 */
const CLOSE_DELAY_MS = 100;

function acquire(name: string, options: MemoryOptions): Shared {
  let entry = shared.get(name);
  if (!entry) {
    const opened: Shared = { opening: createMemory(options), users: 0 };
    // A failed open is forgotten, so the next mount tries again.
    opened.opening.catch(() => shared.get(name) === opened && shared.delete(name));
    shared.set(name, opened);
    entry = opened;
  }
  clearTimeout(entry.closing);
  entry.users++;
  return entry;
}

/** Lets go of the entry this component acquired (not whatever now holds the name: a failed one was replaced). */
function release(name: string, entry: Shared): void {
  if (--entry.users > 0) return;
  entry.closing = setTimeout(() => {
    if (entry.users > 0) return;
    if (shared.get(name) === entry) shared.delete(name);
    entry.opening.then((memory) => memory.close()).catch(() => {});
  }, CLOSE_DELAY_MS);
}

/**
 * Opens `createMemory(options)` for as long as the component is mounted. Components asking for the same `name`
 * share one Memory; it closes when the last of them unmounts. Only a new `name` reopens: other options are read
 * when the Memory opens.
 *
 * @example
 * ```tsx
 * const { memory, status, error } = useMemory({ name: 'notes' });
 * ```
 */
export function useMemory(options: MemoryOptions = {}): UseMemoryResult {
  // createMemory's own default name: `useMemory()` and `useMemory({ name: 'engram' })` share one Memory.
  const name = options.name ?? 'engram';
  const optionsRef = useRef(options);
  optionsRef.current = options;
  const [state, setState] = useState<UseMemoryResult>({ memory: null, status: 'opening', error: null });

  useEffect(() => {
    let live = true;
    setState({ memory: null, status: 'opening', error: null });
    const entry = acquire(name, optionsRef.current);
    entry.opening.then(
      (memory) => live && setState({ memory, status: 'open', error: null }),
      (error: unknown) => live && setState({ memory: null, status: 'error', error: toEngramError(error, ErrorCode.WORKER_FAILED, 'useMemory: could not open') }),
    );
    return () => {
      live = false;
      release(name, entry);
    };
  }, [name]);

  return state;
}

export interface UseSearchOptions {
  /** Milliseconds the query must stay unchanged before it is searched. Default 200. */
  debounceMs?: number;
  /** Options for every search (`k`, `filter`, …); compared by value, so an inline object does not search again. */
  search?: Partial<RemoteSearchOptions>;
}

const USE_SEARCH_OPTION_KEYS = keysOf<UseSearchOptions>({ debounceMs: true, search: true } satisfies KeySet<UseSearchOptions>);

export interface UseSearchResult {
  /** The answer to the latest query searched; kept while a newer one runs, null for a blank query. */
  result: SearchResult | null;
  /** A search is pending (debouncing or running) for the current query. */
  loading: boolean;
  /** Why the latest search failed; cleared by the next answer. */
  error: EngramError | null;
}

/**
 * Searches `memory` for `query` once it has been still for `debounceMs`; an answer to an older query is dropped,
 * so results never go back in time. A null memory (still opening) or a blank query searches nothing.
 *
 * @example
 * ```tsx
 * const { result, loading } = useSearch(memory, query, { search: { k: 5 } });
 * ```
 */
export function useSearch(memory: SearchableMemory | null, query: string, options: UseSearchOptions = {}): UseSearchResult {
  checkAdapterOptions(options, USE_SEARCH_OPTION_KEYS, 'useSearch');
  const debounceMs = options.debounceMs ?? 200;
  if (!(Number.isFinite(debounceMs) && debounceMs >= 0)) {
    throw new EngramError(ErrorCode.INVALID_INPUT, `useSearch: debounceMs must be a number ≥ 0, got ${String(debounceMs)}`);
  }
  if (memory !== null) checkMemory(memory, ['search'], 'useSearch');
  const searchKey = JSON.stringify(options.search ?? {});
  const [state, setState] = useState<UseSearchResult>({ result: null, loading: false, error: null });

  useEffect(() => {
    if (memory === null || query.trim() === '') {
      setState({ result: null, loading: false, error: null });
      return;
    }
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    const timer = setTimeout(() => {
      memory.search(query, JSON.parse(searchKey) as Partial<RemoteSearchOptions>).then(
        (result) => current && setState({ result, loading: false, error: null }),
        (error: unknown) => current && setState((previous) => ({ ...previous, loading: false, error: toEngramError(error, ErrorCode.WORKER_FAILED, 'useSearch') })),
      );
    }, debounceMs);
    // A newer query, option or memory makes this one stale: its timer stops, and an answer in flight is dropped.
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [memory, query, searchKey, debounceMs]);

  return state;
}
