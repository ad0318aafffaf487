/**
 * The Memory methods createMemory builds from the table (src/contract/methods.ts): what each one posts to the worker,
 * on a MessageChannel standing in for it.
 */
import * as Comlink from 'comlink';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, expect, it } from 'vitest';
import { createMemory, type Memory } from '../../../src/client/create-memory.js';
import { METHOD_NAMES } from '../../../src/contract/methods.js';
import type { WorkerApi } from '../../../src/contract/protocol.js';
import type { Progress } from '../../../src/types.js';

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** The worker methods these tests never reach. */
const unused: Pick<WorkerApi, 'status' | 'changePassphrase' | 'unlock' | 'salvage' | 'close'> = {
  async status() {
    throw new Error('not used');
  },
  async changePassphrase() {},
  async unlock() {},
  async salvage() {
    throw new Error('not used');
  },
  async close() {},
};

interface Posted {
  method: string;
  args: unknown[];
  progress: boolean;
}

/** A worker that records each call and reports one progress event to calls that carry a callback. */
function recordingWorker(): { worker: Worker; posted: Posted[] } {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  const posted: Posted[] = [];
  const api: WorkerApi = {
    async open() {},
    async call(method, args, onProgress?: (progress: Progress) => void) {
      posted.push({ method, args, progress: onProgress !== undefined });
      await onProgress?.({ done: 1, total: 1 });
      return null as never;
    },
    async abort() {},
    ...unused,
  };
  Comlink.expose(api, port1 as unknown as Comlink.Endpoint);
  return { worker: port2 as unknown as Worker, posted };
}

it('every table method is on a Memory, posting the declared arguments without trailing undefined ones', async () => {
  const { worker, posted } = recordingWorker();
  const memory = await createMemory({ worker, storage: 'memory', embedder: null });
  for (const method of METHOD_NAMES) expect(typeof memory[method], method).toBe('function');

  const seen: Progress[] = [];
  const onProgress = (progress: Progress) => seen.push(progress);
  const loose = memory as unknown as Record<keyof Memory, (...args: unknown[]) => Promise<unknown>>;
  await memory.add({ text: 'a' }, { onProgress });
  await loose.add();
  await memory.import([], { onProgress });
  await memory.search('q');
  await memory.search('q', { k: 3 });
  await memory.get('a');
  await loose.get('a', 'extra');
  await memory.timeline('a', undefined);
  await memory.update('a', { text: 'b' });
  await memory.remove(['a']);
  await memory.pin('a');
  await memory.pin('a', false);
  await memory.count();
  await memory.export();
  await memory.related('a');
  await memory.link('a', 'b', 'references');
  await memory.link('a', 'b', 'references', { confidence: 0.5 });
  await memory.unlink('a', 'b', undefined);
  await memory.why('a', { depth: 2 });
  await memory.close();

  expect(posted).toEqual([
    { method: 'add', args: [{ text: 'a' }], progress: true },
    { method: 'add', args: [undefined], progress: true },
    { method: 'import', args: [[]], progress: true },
    { method: 'search', args: ['q'], progress: false },
    { method: 'search', args: ['q', { k: 3 }], progress: false },
    { method: 'get', args: ['a'], progress: false },
    { method: 'get', args: ['a'], progress: false },
    { method: 'timeline', args: ['a'], progress: false },
    { method: 'update', args: ['a', { text: 'b' }], progress: false },
    { method: 'remove', args: [['a']], progress: false },
    { method: 'pin', args: ['a'], progress: false },
    { method: 'pin', args: ['a', false], progress: false },
    { method: 'count', args: [], progress: false },
    { method: 'export', args: [], progress: false },
    { method: 'related', args: ['a'], progress: false },
    { method: 'link', args: ['a', 'b', 'references'], progress: false },
    { method: 'link', args: ['a', 'b', 'references', { confidence: 0.5 }], progress: false },
    { method: 'unlink', args: ['a', 'b'], progress: false },
    { method: 'why', args: ['a', { depth: 2 }], progress: false },
  ]);
  // The page's callback heard the progress of both calls that had one.
  expect(seen).toEqual([
    { done: 1, total: 1 },
    { done: 1, total: 1 },
  ]);
});

it('a closed Memory and a search with the boost hook reject without posting, as rejections rather than throws', async () => {
  const { worker, posted } = recordingWorker();
  const memory = await createMemory({ worker, storage: 'memory', embedder: null });
  const boosted = memory.search('q', { boost: () => 1 } as never);
  await expect(boosted).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  await memory.close();
  await expect(memory.get('a')).rejects.toMatchObject({ code: 'CLOSED' });
  await expect(memory.add({ text: 'a' })).rejects.toMatchObject({ code: 'CLOSED' });
  expect(posted).toEqual([]);
});

/** A worker that answers each call only once the page aborts it (as the worker answers an aborted call: once stopped). */
function holdingWorker(): { worker: Worker; posted: { method: string; args: unknown[]; callId: number | undefined }[]; aborts: number[] } {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  const posted: { method: string; args: unknown[]; callId: number | undefined }[] = [];
  const aborts: number[] = [];
  const waiting = new Map<number, () => void>();
  const api: WorkerApi = {
    async open() {},
    async call(method, args, _onProgress, callId) {
      posted.push({ method, args, callId });
      await new Promise<void>((resolve) => waiting.set(callId!, resolve));
      return null as never;
    },
    async abort(callId) {
      aborts.push(callId);
      waiting.get(callId)?.();
    },
    ...unused,
  };
  Comlink.expose(api, port1 as unknown as Comlink.Endpoint);
  return { worker: port2 as unknown as Worker, posted, aborts };
}

it("a call's signal stays on the page: the options cross without it, and its abort posts abort(callId) for that call", async () => {
  const { worker, posted, aborts } = holdingWorker();
  const memory = await createMemory({ worker, storage: 'memory', embedder: null });

  const remembering = new AbortController();
  const remembered = memory.remember('I live in Lisbon', { storeTurns: false, signal: remembering.signal });
  const adding = new AbortController();
  const added = memory.add([{ text: 'a' }], { signal: adding.signal });
  await new Promise((resolve) => setTimeout(resolve, 20));
  adding.abort();
  await added;
  remembering.abort();
  await remembered;
  // An AbortSignal cannot be cloned: had it been posted, the MessageChannel would have refused the call.
  expect(posted.map(({ method, args }) => ({ method, args }))).toEqual([
    { method: 'remember', args: ['I live in Lisbon', { storeTurns: false }] },
    { method: 'add', args: [[{ text: 'a' }]] },
  ]);
  expect(aborts).toEqual([posted[1]!.callId, posted[0]!.callId]);
  expect(new Set(posted.map((p) => typeof p.callId))).toEqual(new Set(['number']));

  // An aborted signal posts nothing; a signal that is not one is INVALID_INPUT.
  await expect(memory.consolidate({ signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED', details: { method: 'consolidate' } });
  await expect(memory.import([], { signal: 'stop' as unknown as AbortSignal })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  expect(posted).toHaveLength(2);
  await memory.close();
});

it('a write that times out on the page is aborted in the worker', async () => {
  const { worker, posted, aborts } = holdingWorker();
  const memory = await createMemory({ worker, storage: 'memory', embedder: null, writeTimeoutMs: 50 });
  await expect(memory.add({ text: 'a' })).rejects.toMatchObject({ code: 'TIMEOUT' });
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(aborts).toEqual([posted[0]!.callId]);
  await memory.close();
});
