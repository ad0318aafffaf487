/**
 * createMemory's options: misspelt names refused on the page before anything is posted, the engine options a Memory
 * forwards copied from the one table (FORWARDED_OPTIONS) to the worker and from the host to its engine, and a clear
 * error where there is no Worker at all (Node).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createMemory, MEMORY_OPTION_KEYS, type MemoryOptions } from '../../../src/client/create-memory.js';
import { FORWARDED_OPTION_KEYS, forwardedOptions } from '../../../src/contract/protocol.js';
import { openHost } from '../../../worker/host.js';
import { closeFakeWorkers, fakeWorker } from '../helpers/fake-worker.js';

afterEach(closeFakeWorkers);

const refused = (message: string) => expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining(message) });

describe('createMemory refuses misspelt options on the page', () => {
  it('its own, the embedder options, the default search options and the forwarded engine options', async () => {
    const cases: [object, string][] = [
      [{ nmae: 'notes' }, "unknown option 'nmae' (did you mean 'name'?)"],
      [{ persistent: false }, "(did you mean 'persist'?)"],
      [{ embedder: { modelId: 'x/y' } }, "unknown option 'modelId' (did you mean 'model'?)"],
      [{ search: { limit: 3 } }, "unknown search option 'limit' (did you mean 'k'?)"],
      [{ search: { filter: { projects: ['a'] } } }, "(did you mean 'filter.project'?)"],
      [{ limit: { maxTags: 3 } }, "(did you mean 'limits'?)"],
      [{ lexical: { matchedTerms: true } }, "unknown option 'lexical.matchedTerms' (did you mean 'lexical.matchedTermsFactor'?)"],
    ];
    for (const [options, message] of cases) {
      const { worker, received, openOptions } = fakeWorker();
      await expect(createMemory({ worker, storage: 'memory', embedder: null, ...options } as MemoryOptions), message).rejects.toEqual(refused(message));
      expect(openOptions.value, message).toBeUndefined();
      expect(received).toEqual([]);
    }
  });

  it('names engram/node where there is no Worker (Node), unless one is given', async () => {
    expect(typeof (globalThis as { Worker?: unknown }).Worker).toBe('undefined');
    await expect(createMemory({ storage: 'memory' })).rejects.toEqual(expect.objectContaining({ code: 'WORKER_FAILED', message: expect.stringContaining("'engram/node'") }));
    const { worker } = fakeWorker();
    await (await createMemory({ worker, storage: 'memory', embedder: null })).close();
  });
});

describe('forwarded engine options', () => {
  it('are every one a MemoryOptions key, and reach the worker as given, nulls and falses left out', async () => {
    for (const key of FORWARDED_OPTION_KEYS) expect(MEMORY_OPTION_KEYS).toContain(key);
    const { worker, openOptions } = fakeWorker();
    const memory = await createMemory({ worker, storage: 'memory', embedder: null, limits: { maxTags: 3 }, learning: { directBoost: 0.2 }, lexical: { matchedTermsFactor: false }, consolidation: false, sync: null });
    await memory.close();
    const sent = openOptions.value as Record<string, unknown>;
    expect(sent).toMatchObject({ limits: { maxTags: 3 }, learning: { directBoost: 0.2 }, lexical: { matchedTermsFactor: false } });
    expect(sent).not.toHaveProperty('consolidation');
    expect(sent).not.toHaveProperty('sync');
    expect(forwardedOptions({ limits: {}, consolidation: { idleMs: 5 }, sync: null })).toEqual({ limits: {}, consolidation: { idleMs: 5 } });
  });

  it('reach the engine the host opens', async () => {
    const host = await openHost({ name: 'forwarded', storage: 'memory', embedder: null, loadEmbedder: () => Promise.reject(new Error('no model here')), limits: { maxTags: 1 } });
    await expect(host.call('add', [{ text: 'a', tags: ['one', 'two'] }])).rejects.toEqual(refused('limits.maxTags'));
    await host.close();
  });
});
