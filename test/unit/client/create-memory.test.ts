/**
 * createMemory in Node, on a MessageChannel standing in for the worker: what the page side refuses before a call
 * crosses. (The real worker is tested in Chromium, test/browser/memory.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemory } from '../../../src/client/create-memory.js';
import { EngramError } from '../../../src/errors.js';
import { closeFakeWorkers, fakeWorker } from '../helpers/fake-worker.js';

afterEach(closeFakeWorkers);

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );
}

describe('createMemory refuses the in-process boost hook', () => {
  const boost = () => 1;

  it('in the default search options and in a search, with one code and one message', async () => {
    const { worker, received } = fakeWorker();
    const atCreate = await errorOf(createMemory({ worker, storage: 'memory', embedder: null, search: { boost } as never }));
    const memory = await createMemory({ worker, storage: 'memory', embedder: null });
    const atSearch = await errorOf(memory.search('q', { boost } as never));
    await memory.search('q', { k: 3 });
    await memory.close();

    expect(atCreate).toBeInstanceOf(EngramError);
    expect(atCreate).toMatchObject({ code: 'INVALID_INPUT' });
    expect(atSearch).toBeInstanceOf(EngramError);
    expect(atSearch).toMatchObject({ code: 'INVALID_INPUT', message: (atCreate as Error).message });
    expect((atSearch as Error).message).toContain('boost');
    // The refused search never reached the worker; the next one did.
    expect(received).toEqual(['search']);
  });

  it('refuses search options that are not an object, at creation and per search', async () => {
    const { worker, received } = fakeWorker();
    const atCreate = await errorOf(createMemory({ worker, storage: 'memory', embedder: null, search: null as never }));
    expect(atCreate).toMatchObject({ code: 'INVALID_INPUT' });
    const memory = await createMemory({ worker, storage: 'memory', embedder: null });
    expect(await errorOf(memory.search('q', 'fast' as never))).toMatchObject({ code: 'INVALID_INPUT' });
    await memory.close();
    expect(received).toEqual([]);
  });
});
