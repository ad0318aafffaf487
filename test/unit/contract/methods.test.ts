/**
 * The Memory API's table (src/contract/methods.ts, its worker half in dispatch.ts): what is derived from it follows
 * it, the worker boundary refuses calls that do not fit an entry, and the methods it calls writes are the ones that
 * write.
 */
import { describe, expect, it } from 'vitest';
import { arityOf, isMethodName, MEMORY_METHODS, METHOD_NAMES, timeoutFor, type MethodName } from '../../../src/contract/methods.js';
import { CALLABLE_METHODS, checkCall, IN_WORKER, WRITE_METHODS } from '../../../src/contract/dispatch.js';
import { createEngine, memoryStore, type Engine } from '../../../src/index.js';
import { testEmbedder } from '../helpers/embedder.js';
import { openHost } from '../../../worker/host.js';

const timeouts = { callMs: 111, writeMs: 222, openMs: 333 };

/** A value of each shape the table names, for building calls that fit. */
const FITTING: Record<string, unknown> = {
  string: 'x',
  'string?': 'x',
  object: {},
  'object?': {},
  array: [],
  'object|array': {},
  'string|array': [],
  'boolean?': true,
};

function fittingArgs(method: MethodName, length = arityOf(method).max): unknown[] {
  return Object.values<string>(MEMORY_METHODS[method].args)
    .slice(0, length)
    .map((shape) => FITTING[shape]);
}

function refusal(run: () => unknown): { code?: string; message?: string } | 'accepted' {
  try {
    run();
    return 'accepted';
  } catch (error) {
    return error as { code?: string; message?: string };
  }
}

describe('derived from the table', () => {
  it('the allowlist is the table and status', () => {
    expect([...CALLABLE_METHODS].sort()).toEqual([...METHOD_NAMES, 'status'].sort());
  });

  it("the worker's half has an entry for each method of the table and no other", () => {
    expect(Object.keys(IN_WORKER)).toEqual(METHOD_NAMES);
  });

  it('the writes are the entries of kind write', () => {
    expect([...WRITE_METHODS].sort()).toEqual(METHOD_NAMES.filter((m) => MEMORY_METHODS[m].kind === 'write').sort());
  });

  it('each timeout is the one its entry names; status and anything else get the read timeout', () => {
    for (const method of METHOD_NAMES) expect(timeoutFor(method, timeouts), method).toBe(MEMORY_METHODS[method].timeout === 'write' ? 222 : 111);
    expect(timeoutFor('status', timeouts)).toBe(111);
    expect(timeoutFor('constructor', timeouts)).toBe(111);
  });

  it('names inherited from Object.prototype are not methods', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(isMethodName(name), name).toBe(false);
      expect(CALLABLE_METHODS.has(name), name).toBe(false);
    }
  });

  it('optional arguments come after the required ones', () => {
    for (const method of METHOD_NAMES) {
      const optional = Object.values<string>(MEMORY_METHODS[method].args).map((shape) => shape.endsWith('?'));
      expect(optional.indexOf(true) === -1 || optional.slice(optional.indexOf(true)).every(Boolean), method).toBe(true);
    }
  });
});

describe('checkCall at the worker boundary', () => {
  it('accepts every method with its required arguments and with all of them, and status', () => {
    for (const method of METHOD_NAMES) {
      expect(checkCall(method, fittingArgs(method, arityOf(method).min))).toBe(method);
      expect(checkCall(method, fittingArgs(method))).toBe(method);
    }
    expect(checkCall('status', [])).toBe('status');
  });

  it('refuses a method outside the Memory API, and arguments that are not an array', () => {
    for (const method of ['close', 'setEmbedder', 'flush', 'constructor', 'toString', 42]) {
      expect(refusal(() => checkCall(method, [])), String(method)).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('is not a Memory method') });
    }
    expect(refusal(() => checkCall('count', 'x'))).toMatchObject({ code: 'INVALID_INPUT', message: 'Engram: the arguments of count() must be an array' });
  });

  it('refuses too many and too few arguments', () => {
    for (const method of METHOD_NAMES) {
      const { min, max } = arityOf(method);
      expect(refusal(() => checkCall(method, [...fittingArgs(method), 'extra'])), method).toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(new RegExp(`^Engram: ${method}\\(\\) takes .*, got ${max + 1}$`)),
      });
      if (min > 0) expect(refusal(() => checkCall(method, fittingArgs(method, min - 1))), method).toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(refusal(() => checkCall('link', ['a', 'b']))).toMatchObject({ message: 'Engram: link() takes 3 to 4 arguments, got 2' });
  });

  it('refuses an argument of the wrong shape, naming it', () => {
    for (const method of METHOD_NAMES) {
      Object.keys(MEMORY_METHODS[method].args).forEach((name, i) => {
        const args = fittingArgs(method);
        args[i] = 42; // no shape takes a number
        expect(refusal(() => checkCall(method, args)), `${method} ${name}`).toMatchObject({
          code: 'INVALID_INPUT',
          message: expect.stringMatching(new RegExp(`^Engram: ${method}\\(\\): ${name} must be .*, got 42$`)),
        });
      });
    }
    expect(refusal(() => checkCall('get', [null]))).toMatchObject({ message: 'Engram: get(): id must be a string, got null' });
    expect(refusal(() => checkCall('update', ['a', []]))).toMatchObject({ message: 'Engram: update(): patch must be an object, got an array' });
    expect(refusal(() => checkCall('search', ['q', null]))).toMatchObject({ message: 'Engram: search(): options must be an object or undefined, got null' });
    expect(checkCall('pin', ['a', undefined])).toBe('pin');
  });

  it('search refuses the boost hook on the page, before the call is posted', () => {
    const page = MEMORY_METHODS.search.page;
    expect(refusal(() => page(['q', { boost: () => 1 }]))).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('boost') });
    expect(refusal(() => page(['q']))).toBe('accepted');
  });
});

describe('kind', () => {
  /** One call of each method that would change something if the method could: the engine holds a, b and a link a → b. */
  const CALLS: Record<MethodName, (engine: Engine) => Promise<unknown>> = {
    add: (e) => e.add({ text: 'c new' }),
    // A search's access bookkeeping is background work, not part of the call; `touch: false` leaves it out.
    search: (e) => e.search('alpha', { touch: false }),
    get: (e) => e.get('a'),
    timeline: (e) => e.timeline('a'),
    update: (e) => e.update('a', { text: 'alpha changed' }),
    remove: (e) => e.remove('b'),
    pin: (e) => e.pin('a'),
    count: (e) => e.count(),
    export: (e) => e.export(),
    import: (e) => e.import([{ id: 'c', text: 'gamma' }]),
    related: (e) => e.related('a'),
    link: (e) => e.link('b', 'a', 'references'),
    unlink: (e) => e.unlink('a', 'b'),
    why: (e) => e.why('a'),
    // No model: the text is stored as a turn.
    remember: (e) => e.remember('c new'),
    // 'a' folds into its newer near-duplicate 'a2' (SETUP).
    consolidate: (e) => e.consolidate(),
    syncNow: (e) => e.syncNow(),
    rotateSyncKey: (e) => e.rotateSyncKey({ key: new Uint8Array(32).fill(9) }),
  };
  /** What a call needs beyond a and b, before writes are counted. */
  const SETUP: Partial<Record<MethodName, (engine: Engine) => Promise<unknown>>> = {
    consolidate: (e) => e.import([{ id: 'a2', text: 'alpha', createdAt: Date.now() + 1000 }]),
  };

  it('a method writes to the store exactly when its entry says write', async () => {
    for (const method of METHOD_NAMES) {
      const store = memoryStore();
      // syncNow needs sync: a bucket in a Map stands in for the storage.
      const bucket = new Map<string, Uint8Array>();
      const transport = { list: async (prefix: string) => [...bucket.keys()].filter((k) => k.startsWith(prefix)), get: async (k: string) => bucket.get(k) ?? null, put: async (k: string, bytes: Uint8Array) => void bucket.set(k, bytes) };
      const sync = method === 'syncNow' || method === 'rotateSyncKey' ? { sync: { transport, key: new Uint8Array(32).fill(7), intervalMs: 0 } } : {};
      const engine = await createEngine({ store, embedder: method === 'consolidate' ? testEmbedder() : null, ...sync });
      await engine.add([{ id: 'a', text: 'alpha' }, { id: 'b', text: 'beta' }]);
      await engine.link('a', 'b', 'derives_from');
      await SETUP[method]?.(engine);
      await engine.flush();
      let writes = 0;
      const write = store.write.bind(store);
      store.write = (change) => (writes++, write(change));
      await CALLS[method](engine);
      await engine.flush();
      expect(writes > 0 ? 'write' : 'read', method).toBe(MEMORY_METHODS[method].kind);
      await engine.close();
    }
  });
});

describe("the table's steps in the calling tab and on a retry", () => {
  const tab = (defaults: object | undefined) => {
    let n = 0;
    return { newId: () => `new-${++n}`, withSearchDefaults: (options: unknown) => (defaults ? { ...defaults, ...(options as object) } : undefined) };
  };

  it("add gives every input without an id one in the calling tab; search puts this tab's defaults under the call's", () => {
    expect(IN_WORKER.add.inTab([[{ text: 'a' }, { id: 'kept', text: 'b' }]], tab(undefined))).toEqual([[{ text: 'a', id: 'new-1' }, { id: 'kept', text: 'b' }]]);
    expect(IN_WORKER.add.inTab([{ text: 'a' }], tab(undefined))).toEqual([{ text: 'a', id: 'new-1' }]);
    expect(IN_WORKER.search.inTab(['q'], tab(undefined))).toEqual(['q']);
    expect(IN_WORKER.search.inTab(['q', { k: 2 }], tab({ k: 9, tokenBudget: 100 }))).toEqual(['q', { k: 2, tokenBudget: 100 }]);
  });

  it('a re-sent add whose ids are all stored is answered with them; one that meets an id stored by another call fails', async () => {
    const host = await openHost({ name: 'retry', storage: 'memory', embedder: null, loadEmbedder: () => Promise.reject(new Error('no model here')) });
    await host.call('add', [[{ id: 'a', text: 'first' }, { id: 'b', text: 'second' }]]);
    expect(await host.call('add', [[{ id: 'a', text: 'first' }, { id: 'b', text: 'second' }]], undefined, true)).toEqual(['a', 'b']);
    await expect(host.call('add', [[{ id: 'a', text: 'first' }, { id: 'c', text: 'third' }]], undefined, true)).rejects.toMatchObject({ code: 'DUPLICATE_ID' });
    // Not a retry: the same add is a duplicate.
    await expect(host.call('add', [{ id: 'a', text: 'first' }])).rejects.toMatchObject({ code: 'DUPLICATE_ID' });
    expect(await host.call('count', [])).toBe(2);
    await host.close();
  });
});
