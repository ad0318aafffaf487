/**
 * A MessageChannel standing in for the Engram worker in Node: it answers every call with no hits and records what
 * reached it (the methods called, and the page hooks `open` received). Close its ports with `closeFakeWorkers`.
 */
import * as Comlink from 'comlink';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { WorkerApi } from '../../../src/contract/protocol.js';

const ports: MessagePort[] = [];

export interface FakeWorker {
  worker: Worker;
  /** Methods of `call` that reached the worker, in order. */
  received: string[];
  /** What `open` received for the page's language model and re-ranker. */
  opened: { llm?: unknown; reranker?: unknown };
  /** The options `open` received, once it was called. */
  openOptions: { value?: unknown };
}

export function fakeWorker(): FakeWorker {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  const received: string[] = [];
  const opened: FakeWorker['opened'] = {};
  const openOptions: FakeWorker['openOptions'] = {};
  const api: WorkerApi = {
    async open(options, _progress, llm, reranker) {
      openOptions.value = options;
      opened.llm = llm;
      opened.reranker = reranker;
    },
    async call(method) {
      received.push(method);
      return { hits: [] } as never;
    },
    async status() {
      throw new Error('not used');
    },
    async abort() {},
    async changePassphrase() {
      throw new Error('not used');
    },
    async unlock() {
      throw new Error('not used');
    },
    async salvage() {
      throw new Error('not used');
    },
    async close() {},
  };
  Comlink.expose(api, port1 as unknown as Comlink.Endpoint);
  return { worker: port2 as unknown as Worker, received, opened, openOptions };
}

/** Exposes `value` on one end of a channel and returns the Comlink remote on the other, as the worker sees it. */
export function acrossBoundary<T>(value: T): Comlink.Remote<T> {
  const { port1, port2 } = new MessageChannel();
  ports.push(port1, port2);
  Comlink.expose(value, port1 as unknown as Comlink.Endpoint);
  return Comlink.wrap<T>(port2 as unknown as Comlink.Endpoint);
}

export function closeFakeWorkers(): void {
  for (const port of ports.splice(0)) port.close();
}
