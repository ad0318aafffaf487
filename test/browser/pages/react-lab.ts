// The hooks in real Chromium with React 19 and @testing-library/react's renderHook, against real Memories (a worker
// each). Every scenario answers plain data for test/browser/react.test.ts.
import { act, configure, renderHook, waitFor } from '@testing-library/react';
import { createElement, StrictMode, type ReactNode } from 'react';
import { useMemory, useSearch } from '../../../src/adapters/react.js';
import { createMemory, type Memory, type SearchResult } from '../../../src/index.js';

// Opening a worker takes over a second on a loaded machine; waitFor's default gives up after one.
configure({ asyncUtilTimeout: 20_000 });

const strict = ({ children }: { children: ReactNode }) => createElement(StrictMode, null, children);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const codeOf = (error: unknown) => (error as { code?: string }).code ?? String(error);

/** Counts the workers the page starts (each `createMemory` starts one), around `run`. */
async function countingWorkers<T>(run: () => Promise<T>): Promise<T & { workers: number }> {
  const RealWorker = globalThis.Worker;
  let workers = 0;
  globalThis.Worker = class extends RealWorker {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      super(...args);
      workers++;
    }
  };
  try {
    return { ...(await run()), workers };
  } finally {
    globalThis.Worker = RealWorker;
  }
}

const useMemoryShares = () => countingWorkers(sharesOneMemory);

async function sharesOneMemory() {
  const options = { name: 'react-shared', storage: 'memory' as const, embedder: null };
  const a = renderHook(() => useMemory({ ...options }), { wrapper: strict });
  const statuses = [a.result.current.status];
  await waitFor(() => expect(a.result.current.status === 'open'));
  statuses.push(a.result.current.status);
  const memory = a.result.current.memory!;
  const b = renderHook(() => useMemory({ ...options }));
  await waitFor(() => expect(b.result.current.status === 'open'));
  a.rerender();
  await memory.add({ text: 'Grandma likes tulips' });
  const found = (await memory.search('tulips')).hits.length;
  a.unmount();
  await sleep(300);
  const openAfterOneUnmount = (await memory.search('tulips')).hits.length === 1;
  // Unmounted and mounted again at once (what StrictMode does to every effect in development): the same Memory.
  b.unmount();
  const c = renderHook(() => useMemory({ ...options }));
  await waitFor(() => expect(c.result.current.status === 'open'));
  const remountShares = c.result.current.memory === memory;
  c.unmount();
  await sleep(300);
  const afterAll = await memory.search('tulips').then(() => 'answered', codeOf);
  return { statuses, shared: b.result.current.memory === memory, sameAfterRerender: a.result.current.memory === memory, found, openAfterOneUnmount, remountShares, afterAll };
}

async function useMemoryFails() {
  const { result, unmount } = renderHook(() => useMemory({ name: 'react-bad', storage: 'nowhere' as never }));
  await waitFor(() => expect(result.current.status === 'error'));
  const { status, memory, error } = result.current;
  // A failed open is not kept: mounting again under the name opens afresh (here with storage that works).
  const again = renderHook(() => useMemory({ name: 'react-bad', storage: 'memory', embedder: null }));
  await waitFor(() => expect(again.result.current.status !== 'opening'));
  const retried = again.result.current.status;
  unmount();
  again.unmount();
  const direct = await createMemory({ name: 'react-bad-direct', storage: 'nowhere' as never }).then(() => 'opened', codeOf);
  return { status, memory, code: error?.code, direct, isEngramError: error?.name === 'EngramError', retried };
}

/** The real Memory, with each search's query logged and, for queries in `slow`, its answer held back. */
function watched(memory: Memory, slow: Record<string, number> = {}) {
  const queries: string[] = [];
  const wrapped = {
    search: async (query: string, options?: Parameters<Memory['search']>[1]): Promise<SearchResult> => {
      queries.push(query);
      const result = await memory.search(query, options);
      await sleep(slow[query] ?? 0);
      return result;
    },
  };
  return { wrapped, queries };
}

async function seeded(name: string) {
  const memory = await createMemory({ name, storage: 'memory', embedder: null });
  await memory.add([{ text: 'Grandma likes tulips and orchids' }, { text: 'Staging moved to eu-west-2' }, { text: 'Tulip bulbs go in before the frost' }]);
  return memory;
}

async function useSearchDebounces() {
  const memory = await seeded('react-debounce');
  const { wrapped, queries } = watched(memory);
  const { result, rerender, unmount } = renderHook(({ query }) => useSearch(wrapped, query, { debounceMs: 400, search: { k: 1 } }), {
    initialProps: { query: 'tu' },
  });
  // Typing: each keystroke lands well inside the debounce window, and an inline options object is not a change.
  for (const query of ['tul', 'tuli', 'tulips']) {
    await act(async () => {
      await sleep(20);
      rerender({ query });
    });
  }
  const loadingWhileTyping = result.current.loading;
  await waitFor(() => expect(result.current.loading === false && result.current.result !== null));
  await sleep(200);
  const answer = { loadingWhileTyping, queries: [...queries], hits: result.current.result!.hits.map((hit) => hit.text) };
  rerender({ query: '   ' });
  await waitFor(() => expect(result.current.result === null));
  unmount();
  await memory.close();
  return { ...answer, blankClears: result.current.result === null, queriesAfterBlank: queries.length };
}

async function useSearchDropsStale() {
  const memory = await seeded('react-stale');
  // The first query's answer comes back long after the second's.
  const { wrapped, queries } = watched(memory, { tulips: 400 });
  const seen: string[] = [];
  const { result, rerender, unmount } = renderHook(
    ({ query }) => {
      const state = useSearch(wrapped, query, { debounceMs: 0 });
      const first = state.result?.hits[0]?.text;
      if (first && seen.at(-1) !== first) seen.push(first);
      return state;
    },
    { initialProps: { query: 'tulips' } },
  );
  await waitFor(() => expect(queries.length === 1));
  rerender({ query: 'staging' });
  await waitFor(() => expect(result.current.result?.hits[0]?.text === 'Staging moved to eu-west-2'));
  await sleep(600);
  const final = result.current.result?.hits[0]?.text;
  unmount();
  await memory.close();
  return { queries, seen, final };
}

async function useSearchErrors() {
  const memory = await seeded('react-error');
  const { result, unmount } = renderHook(() => useSearch(memory, 'tulips', { debounceMs: 0, search: { k: -1 } }));
  await waitFor(() => expect(result.current.error !== null));
  const answer = { code: result.current.error?.code, loading: result.current.loading };
  unmount();
  await memory.close();
  return answer;
}

/** waitFor retries until its callback stops throwing: a tiny assertion, so the scenarios read as conditions. */
function expect(condition: boolean): void {
  if (!condition) throw new Error('not yet');
}

declare global {
  interface Window {
    reactLab: typeof lab;
  }
}
const lab = { useMemoryShares, useMemoryFails, useSearchDebounces, useSearchDropsStale, useSearchErrors };
window.reactLab = lab;
