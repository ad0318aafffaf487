/**
 * Encryption at rest end to end (issue 17): createMemory in real Chromium with a persistent profile, the worker on
 * real OPFS and IndexedDB through SQLite3 Multiple Ciphers, the key envelope in IndexedDB. The canary test reads
 * the origin's storage as raw bytes, as someone holding a copy of the profile would.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchPersistent, tempProfileDir } from './harness.js';
import { openLab } from './pages/memory-lab.js';

const profile = tempProfileDir();
let context: BrowserContext;
let page: Page;

const CANARY = 'zebracanary7731';
const PASSPHRASE = 'correct horse battery staple';

beforeAll(async () => {
  context = await launchPersistent(profile.dir);
  page = await openLab(context);
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

interface Scan {
  /** Files under the OPFS root and IndexedDB records read. */
  sources: number;
  bytes: number;
  /** Where a needle was found, as `opfs:<path>` or `idb:<database>/<store>`, with the encoding. */
  found: string[];
}

/**
 * Runs in the page: every file under the origin's OPFS root and every record of every IndexedDB database, as raw
 * bytes (a record's strings as UTF-8 and UTF-16, its binary values as they are), searched for each needle as UTF-8
 * and as UTF-16LE.
 */
async function scanOrigin(needles: string[]): Promise<Scan> {
  const patterns: { label: string; bytes: Uint8Array }[] = [];
  for (const needle of needles) {
    patterns.push({ label: `${needle} utf-8`, bytes: new TextEncoder().encode(needle) });
    const utf16 = new Uint8Array(needle.length * 2);
    for (let i = 0; i < needle.length; i++) utf16[i * 2] = needle.charCodeAt(i);
    patterns.push({ label: `${needle} utf-16`, bytes: utf16 });
  }
  const contains = (haystack: Uint8Array, needle: Uint8Array) => {
    outer: for (let i = haystack.indexOf(needle[0]!); i >= 0 && i <= haystack.length - needle.length; i = haystack.indexOf(needle[0]!, i + 1)) {
      for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  };
  const scan: Scan = { sources: 0, bytes: 0, found: [] };
  const check = (where: string, chunks: Uint8Array[]) => {
    scan.sources++;
    for (const chunk of chunks) {
      scan.bytes += chunk.length;
      for (const pattern of patterns) if (contains(chunk, pattern.bytes)) scan.found.push(`${where} (${pattern.label})`);
    }
  };

  const walkDirectory = async (directory: FileSystemDirectoryHandle, path: string): Promise<void> => {
    for await (const [name, handle] of directory as unknown as AsyncIterable<[string, FileSystemHandle]>) {
      if (handle.kind === 'directory') await walkDirectory(handle as FileSystemDirectoryHandle, `${path}/${name}`);
      else check(`opfs:${path}/${name}`, [new Uint8Array(await (await (handle as FileSystemFileHandle).getFile()).arrayBuffer())]);
    }
  };
  await walkDirectory(await navigator.storage.getDirectory(), '');

  // A record's bytes: every string in both encodings, every binary value as is, keys included.
  const recordBytes = async (value: unknown, out: Uint8Array[], depth = 0): Promise<void> => {
    if (depth > 64 || value === null || value === undefined) return;
    if (typeof value === 'string') {
      out.push(new TextEncoder().encode(value));
      const utf16 = new Uint8Array(new Uint16Array([...value].flatMap((c) => Array.from({ length: c.length }, (_, k) => c.charCodeAt(k)))).buffer);
      out.push(utf16);
    } else if (value instanceof ArrayBuffer) out.push(new Uint8Array(value));
    else if (ArrayBuffer.isView(value)) out.push(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    else if (value instanceof Blob) out.push(new Uint8Array(await value.arrayBuffer()));
    else if (typeof value === 'object') {
      for (const [key, item] of Object.entries(value as object)) {
        out.push(new TextEncoder().encode(key));
        await recordBytes(item, out, depth + 1);
      }
    }
  };
  const request = <T>(req: IDBRequest<T>) =>
    new Promise<T>((resolve, reject) => {
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
  for (const { name } of await indexedDB.databases()) {
    if (!name) continue;
    const db = await request(indexedDB.open(name));
    try {
      for (const storeName of Array.from(db.objectStoreNames)) {
        const store = db.transaction(storeName, 'readonly').objectStore(storeName);
        const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())]);
        const chunks: Uint8Array[] = [];
        for (const key of keys) await recordBytes(key, chunks);
        for (const value of values) await recordBytes(value, chunks);
        check(`idb:${name}/${storeName}`, chunks);
      }
    } finally {
      db.close();
    }
  }
  return scan;
}

/** Memories carrying the canary in their text, tags and meta, with enough others to fill several pages. */
function canaryMemories(): { text: string; tags: string[]; meta: Record<string, unknown> }[] {
  return Array.from({ length: 300 }, (_, i) => ({
    text: `note ${i}: the ${i % 10 === 0 ? CANARY : 'ordinary'} detail about gardening and tomatoes`,
    tags: i % 10 === 0 ? [`tag-${CANARY}`] : ['garden'],
    meta: i % 10 === 0 ? { source: `meta-${CANARY}` } : { source: 'notes' },
  }));
}

/** Error code of a rejected promise run in the page, or 'resolved'. */
async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'resolved';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

describe.each(['opfs', 'idb'] as const)('canary on %s', (storage) => {
  // A fresh profile per case: every byte the origin holds is scanned, and another case's data would blur it.
  async function writeAndScan(encrypted: boolean): Promise<{ killed: Scan; closed: Scan; count: number; encrypted: boolean }> {
    const caseProfile = tempProfileDir();
    const caseContext = await launchPersistent(caseProfile.dir);
    try {
      const casePage = await openLab(caseContext);
      const options = { name: 'canary', storage, embedder: {}, ...(encrypted ? { encryption: { passphrase: PASSPHRASE } } : {}) };
      await casePage.evaluate(
        async ([options, memories]) => {
          // The worker is killed without close: the WAL and any journal stay on disk as a crash leaves them.
          const worker = new Worker(new URL('/worker/index.ts', location.origin), { type: 'module' });
          const memory = await window.engram.createMemory({ ...options, worker });
          await memory.add(memories);
          // Every memory embedded and its vector stored, so vectors are on disk too.
          for (let waited = 0; waited < 60_000; waited += 100) {
            const status = await memory.status();
            if (status.embedder !== null && status.indexing === null) break;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          worker.terminate();
        },
        [options, canaryMemories()] as const,
      );
      const killed = await casePage.evaluate(scanOrigin, [CANARY, PASSPHRASE]);
      // Reopened (recovering from the WAL) and closed: the lexical snapshot, which holds every term, is saved on close.
      const reopened = await casePage.evaluate(async (options) => {
        const memory = await window.engram.createMemory(options);
        const result = { count: await memory.count(), encrypted: (await memory.status()).encrypted };
        await memory.close();
        return result;
      }, options);
      const closed = await casePage.evaluate(scanOrigin, [CANARY, PASSPHRASE]);
      return { killed, closed, ...reopened };
    } finally {
      await caseContext.close();
      caseProfile.dispose();
    }
  }

  test('encrypted: the canary is in no file and no IndexedDB record, as UTF-8 or UTF-16, nor is the passphrase', async () => {
    const outcome = await writeAndScan(true);
    console.log(`encrypted ${storage}: killed ${outcome.killed.sources} sources / ${outcome.killed.bytes} bytes, closed ${outcome.closed.sources} / ${outcome.closed.bytes}`);
    expect(outcome).toMatchObject({ count: 300, encrypted: true });
    expect(outcome.killed.found).toEqual([]);
    expect(outcome.closed.found).toEqual([]);
    // The scan did read the database: 300 memories with their vectors and the snapshot are well over 100 KB.
    expect(outcome.closed.bytes).toBeGreaterThan(100_000);
  });

  test('unencrypted (the control): the same scan finds the canary', async () => {
    const outcome = await writeAndScan(false);
    expect(outcome).toMatchObject({ count: 300, encrypted: false });
    expect(outcome.killed.found.length).toBeGreaterThan(0);
    expect(outcome.closed.found.some((where) => where.includes(`${CANARY} utf-8`))).toBe(true);
  });
});

describe('keys', () => {
  test('a wrong passphrase is WRONG_KEY and changes nothing; the right one opens the same memories', async () => {
    const outcome = await page.evaluate(async ([passphrase, codeOfSource]) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const { createMemory } = window.engram;
      const first = await createMemory({ name: 'wrong-key', embedder: null, encryption: { passphrase } });
      await first.add([{ text: 'the key is under the mat' }, { text: 'the car is blue' }]);
      await first.close();
      const wrong = await codeOf(() => createMemory({ name: 'wrong-key', embedder: null, encryption: { passphrase: `${passphrase}!` } }));
      const again = await createMemory({ name: 'wrong-key', embedder: null, encryption: { passphrase } });
      const result = { wrong, count: await again.count(), top: (await again.search('mat', { k: 1 })).hits[0]?.text };
      await again.close();
      return result;
    }, [PASSPHRASE, codeOf.toString()] as const);
    expect(outcome).toEqual({ wrong: 'WRONG_KEY', count: 2, top: 'the key is under the mat' });
  });

  test('an encrypted database opened without encryption is KEY_REQUIRED, never an empty database; a plain one opened with it is NOT_ENCRYPTED', async () => {
    const outcome = await page.evaluate(async ([passphrase, codeOfSource]) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const { createMemory } = window.engram;
      const encrypted = await createMemory({ name: 'needs-key', embedder: null, encryption: { passphrase } });
      await encrypted.add({ text: 'secret plans' });
      await encrypted.close();
      const plain = await createMemory({ name: 'plain-db', embedder: null });
      await plain.add({ text: 'public notes' });
      await plain.close();
      const withoutKey = await codeOf(() => createMemory({ name: 'needs-key', embedder: null }));
      const plainWithKey = await codeOf(() => createMemory({ name: 'plain-db', embedder: null, encryption: { passphrase } }));
      const badOption = await codeOf(() => createMemory({ name: 'needs-key', embedder: null, encryption: { passphrase: '' } }));
      const reopened = await createMemory({ name: 'needs-key', embedder: null, encryption: { passphrase } });
      const plainAgain = await createMemory({ name: 'plain-db', embedder: null });
      const result = {
        withoutKey,
        plainWithKey,
        badOption,
        encrypted: { count: await reopened.count(), status: (await reopened.status()).encrypted },
        plain: { count: await plainAgain.count(), status: (await plainAgain.status()).encrypted },
      };
      await reopened.close();
      await plainAgain.close();
      return result;
    }, [PASSPHRASE, codeOf.toString()] as const);
    expect(outcome).toEqual({
      withoutKey: 'KEY_REQUIRED',
      plainWithKey: 'NOT_ENCRYPTED',
      badOption: 'INVALID_INPUT',
      encrypted: { count: 1, status: true },
      plain: { count: 1, status: false },
    });
  });

  test("an app's own non-extractable CryptoKey: the same key opens, another key or a passphrase does not", async () => {
    const outcome = await page.evaluate(async ([codeOfSource]) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const { createMemory } = window.engram;
      const generate = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['wrapKey', 'unwrapKey']);
      const key = await generate();
      const first = await createMemory({ name: 'app-key', embedder: null, encryption: { key } });
      await first.add({ text: 'wrapped by the app' });
      await first.close();
      const otherKey = await codeOf(async () => createMemory({ name: 'app-key', embedder: null, encryption: { key: await generate() } }));
      const passphrase = await codeOf(() => createMemory({ name: 'app-key', embedder: null, encryption: { passphrase: 'anything' } }));
      const extractable = await crypto.subtle.generateKey({ name: 'AES-CBC', length: 256 }, false, ['encrypt', 'decrypt']);
      const wrongKind = await codeOf(() => createMemory({ name: 'app-key', embedder: null, encryption: { key: extractable } }));
      const again = await createMemory({ name: 'app-key', embedder: null, encryption: { key } });
      const result = { otherKey, passphrase, wrongKind, count: await again.count() };
      await again.close();
      return result;
    }, [codeOf.toString()] as const);
    expect(outcome).toEqual({ otherKey: 'WRONG_KEY', passphrase: 'WRONG_KEY', wrongKind: 'INVALID_INPUT', count: 1 });
  });
  test('a swapped or deleted key record opens nothing and loses nothing: WRONG_KEY, or a refusal naming the lost record; put back, it opens', async () => {
    const outcome = await page.evaluate(async ([passphrase, codeOfSource]) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const { createMemory } = window.engram;
      // The key records as someone with the profile could edit them: IndexedDB "engram-keys", one record per database.
      const keys = async <T>(mode: IDBTransactionMode, body: (store: IDBObjectStore) => IDBRequest<T>) => {
        const db = await new Promise<IDBDatabase>((resolve, reject) => {
          const open = indexedDB.open('engram-keys');
          open.onsuccess = () => resolve(open.result);
          open.onerror = () => reject(open.error);
        });
        try {
          const request = body(db.transaction('databases', mode).objectStore('databases'));
          return await new Promise<T>((resolve, reject) => {
            request.onsuccess = () => resolve(request.result);
            request.onerror = () => reject(request.error);
          });
        } finally {
          db.close();
        }
      };
      for (const name of ['swap-a', 'swap-b']) {
        const memory = await createMemory({ name, embedder: null, encryption: { passphrase } });
        await memory.add([{ text: `${name} first` }, { text: `${name} second` }]);
        await memory.close();
      }
      const allKeys = (await keys('readonly', (store) => store.getAllKeys())) as string[];
      const keyOf = (name: string) => allKeys.find((key) => key.endsWith(`:${name}`))!;
      const recordA = await keys('readonly', (store) => store.get(keyOf('swap-a')));
      const recordB = await keys('readonly', (store) => store.get(keyOf('swap-b')));
      // A's record (same passphrase) under B's name: the envelope is bound to its database, so it does not unwrap.
      await keys('readwrite', (store) => store.put(recordA, keyOf('swap-b')));
      const swapped = await codeOf(() => createMemory({ name: 'swap-b', embedder: null, encryption: { passphrase } }));
      await keys('readwrite', (store) => store.delete(keyOf('swap-b')));
      let deleted = 'resolved';
      try {
        await createMemory({ name: 'swap-b', embedder: null, encryption: { passphrase } });
      } catch (error) {
        deleted = `${(error as { code?: string }).code}: ${(error as Error).message}`;
      }
      const deletedNoKey = await codeOf(() => createMemory({ name: 'swap-b', embedder: null }));
      await keys('readwrite', (store) => store.put(recordB, keyOf('swap-b')));
      const restored = await createMemory({ name: 'swap-b', embedder: null, encryption: { passphrase } });
      const result = { swapped, deleted, deletedNoKey, count: await restored.count(), texts: (await restored.export()).map((r) => r.text).sort() };
      await restored.close();
      return result;
    }, [PASSPHRASE, codeOf.toString()] as const);
    expect(outcome.swapped).toBe('WRONG_KEY');
    expect(outcome.deleted).toMatch(/^STORE_FAILED: .*key record .* is gone/);
    expect(outcome.deletedNoKey).toBe('KEY_REQUIRED');
    expect(outcome).toMatchObject({ count: 2, texts: ['swap-b first', 'swap-b second'] });
  });
});

describe('changing the passphrase', () => {
  test('re-wraps the key: the new passphrase opens, the old one is WRONG_KEY; a wrong current one changes nothing', async () => {
    const outcome = await page.evaluate(async ([codeOfSource]) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const { createMemory } = window.engram;
      const open = (passphrase: string) => createMemory({ name: 'rekey', embedder: null, encryption: { passphrase } });
      const memory = await open('first passphrase');
      await memory.add({ text: 'survives every change' });
      const wrongCurrent = await codeOf(() => memory.changePassphrase('not it', 'second passphrase'));
      await memory.changePassphrase('first passphrase', 'second passphrase');
      // The open memory goes on working: its data key did not change.
      const stillOpen = await memory.count();
      await memory.close();
      const old = await codeOf(() => open('first passphrase'));
      const reopened = await open('second passphrase');
      const result = { wrongCurrent, stillOpen, old, count: await reopened.count() };
      const plain = await createMemory({ name: 'rekey-plain', embedder: null });
      const onPlain = await codeOf(() => plain.changePassphrase('a', 'b'));
      await plain.close();
      await reopened.close();
      return { ...result, onPlain };
    }, [codeOf.toString()] as const);
    expect(outcome).toEqual({ wrongCurrent: 'WRONG_KEY', stillOpen: 1, old: 'WRONG_KEY', count: 1, onPlain: 'NOT_ENCRYPTED' });
  });

  test('a worker killed at any point of a passphrase change leaves exactly one of the two passphrases working, and every memory', async () => {
    const delays = [0, 40, 120, 250, 400, 600, 900, 1500];
    const outcomes = await page.evaluate(async ([delays, codeOfSource]) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const { createMemory } = window.engram;
      const results: { delay: number; old: string; next: string; count: number }[] = [];
      for (const delay of delays) {
        const name = `killed-rekey-${delay}`;
        const open = (passphrase: string) => createMemory({ name, embedder: null, encryption: { passphrase } });
        const seed = await open('old passphrase');
        await seed.add(Array.from({ length: 50 }, (_, i) => ({ text: `memory ${i}` })));
        await seed.close();
        const worker = new Worker(new URL('/worker/index.ts', location.origin), { type: 'module' });
        const memory = await createMemory({ name, embedder: null, encryption: { passphrase: 'old passphrase' }, worker });
        const change = memory.changePassphrase('old passphrase', 'new passphrase').catch(() => undefined);
        await Promise.race([change, new Promise((resolve) => setTimeout(resolve, delay))]);
        worker.terminate();
        const counts: number[] = [];
        const attempt = (passphrase: string) =>
          codeOf(async () => {
            const opened = await open(passphrase);
            counts.push(await opened.count());
            await opened.close();
          });
        results.push({ delay, old: await attempt('old passphrase'), next: await attempt('new passphrase'), count: Math.max(...counts) });
      }
      return results;
    }, [delays, codeOf.toString()] as const);
    console.log(`killed during a passphrase change: ${outcomes.map((o) => `${o.delay} ms → ${o.old === 'resolved' ? 'old' : 'new'}`).join(', ')}`);
    for (const outcome of outcomes) {
      expect([outcome.old, outcome.next].sort(), `killed after ${outcome.delay} ms`).toEqual(['WRONG_KEY', 'resolved']);
      expect(outcome.count).toBe(50);
    }
    // The change completed before the last kill (a change takes two PBKDF2 derivations, well under 1.5 s).
    expect(outcomes.at(-1)?.next).toBe('resolved');
  });
});

describe('two tabs', () => {
  test('a second tab needs the passphrase too; with it, both tabs share one database, and it takes over when the first closes', async () => {
    const first = await openLab(context);
    const second = await openLab(context);
    const third = await openLab(context);
    const options = { name: 'two-tabs', embedder: null, encryption: { passphrase: PASSPHRASE } };
    await first.evaluate(async (options) => {
      window.memories.a = await window.engram.createMemory(options);
      await window.memories.a.add({ text: 'written by the first tab' });
    }, options);
    // While the first tab holds the database, a tab with a wrong passphrase or none is refused by its own worker.
    const refused = await third.evaluate(
      async ([codeOfSource, passphrase]) => {
        const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
        const { createMemory } = window.engram;
        return {
          wrong: await codeOf(() => createMemory({ name: 'two-tabs', embedder: null, encryption: { passphrase: `${passphrase}?` } })),
          none: await codeOf(() => createMemory({ name: 'two-tabs', embedder: null })),
        };
      },
      [codeOf.toString(), PASSPHRASE] as const,
    );
    expect(refused).toEqual({ wrong: 'WRONG_KEY', none: 'KEY_REQUIRED' });
    const joined = await second.evaluate(async (options) => {
      window.memories.b = await window.engram.createMemory(options);
      await window.memories.b.add({ text: 'written by the second tab' });
      return { count: await window.memories.b.count(), encrypted: (await window.memories.b.status()).encrypted };
    }, options);
    expect(joined).toEqual({ count: 2, encrypted: true });
    expect(await first.evaluate(async () => (await window.memories.a!.search('second tab', { k: 1 })).hits[0]?.text)).toBe('written by the second tab');
    // The first tab goes away: the second opens the database itself, with its own passphrase.
    await first.evaluate(() => window.memories.a!.close());
    await first.close();
    const afterTakeover = await second.evaluate(async () => {
      await window.memories.b!.add({ text: 'written after the takeover' });
      return window.memories.b!.count();
    });
    expect(afterTakeover).toBe(3);
    await second.evaluate(() => window.memories.b!.close());
    await second.close();
    await third.close();
  });

  test('after a passphrase change, a tab holding the old one fails its takeover with WRONG_KEY and gives the lock back: the next tab leads', async () => {
    const [first, stale, next] = [await openLab(context), await openLab(context), await openLab(context)];
    const name = 'changed-then-handed-over';
    const changed = `${PASSPHRASE} two`;
    const open = (page: Page, passphrase: string) =>
      page.evaluate(
        async ([name, passphrase]) => {
          window.memories.m = await window.engram.createMemory({ name, embedder: null, encryption: { passphrase }, callTimeoutMs: 8000, writeTimeoutMs: 8000 });
        },
        [name, passphrase] as const,
      );
    await open(first, PASSPHRASE);
    await first.evaluate(() => window.memories.m!.add({ text: 'written before the change' }));
    // Queued for the lock first, with the passphrase about to be replaced.
    await open(stale, PASSPHRASE);
    await first.evaluate(([current, next]) => window.memories.m!.changePassphrase(current, next), [PASSPHRASE, changed] as const);
    await open(next, changed);
    await first.evaluate(() => window.memories.m!.close());
    await first.close();
    // The stale tab gets the lock first, cannot unwrap the key, and lets go at once: the next tab's calls are answered.
    const afterHandover = await next.evaluate(async () => ({ count: await window.memories.m!.count(), added: (await window.memories.m!.add({ text: 'after the hand-off' })).length }));
    expect(afterHandover).toEqual({ count: 1, added: 1 });
    const staleOutcome = await stale.evaluate((codeOfSource) => (new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>)(() => window.memories.m!.count()), codeOf.toString());
    expect(staleOutcome).toBe('WRONG_KEY');
    await next.evaluate(() => window.memories.m!.close());
    for (const page of [stale, next]) await page.close();
  });

  test('a tab with a passphrase cannot join a tab holding a plain database of that name: NOT_ENCRYPTED', async () => {
    const holder = await openLab(context);
    const joiner = await openLab(context);
    await holder.evaluate(async () => {
      window.memories.plain = await window.engram.createMemory({ name: 'two-tabs-plain', embedder: null });
      await window.memories.plain.add({ text: 'a plain note' });
    });
    const refused = await joiner.evaluate(
      async ([codeOfSource, passphrase]) => {
        const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
        return codeOf(() => window.engram.createMemory({ name: 'two-tabs-plain', embedder: null, encryption: { passphrase } }));
      },
      [codeOf.toString(), PASSPHRASE] as const,
    );
    expect(refused).toBe('NOT_ENCRYPTED');
    expect(await holder.evaluate(() => window.memories.plain!.count())).toBe(1);
    await holder.evaluate(() => window.memories.plain!.close());
    await holder.close();
    await joiner.close();
  });
});

describe('idle lock', () => {
  /** In the page: whether a new sync access handle on the database's OPFS file can be had (only if no worker holds it). */
  const fileFree = (page: Page, name: string) =>
    page.evaluate(async (name) => {
      const source = `onmessage = async () => {
        try {
          const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('engram');
          const handle = await (await dir.getFileHandle(${JSON.stringify(`${name}.sqlite3`)})).createSyncAccessHandle();
          handle.close();
          postMessage('free');
        } catch (error) {
          postMessage(error.name);
        }
      };`;
      const worker = new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
      const answer = await new Promise<string>((resolve) => {
        worker.onmessage = (event) => resolve(String(event.data));
        worker.postMessage(null);
      });
      worker.terminate();
      return answer;
    }, name);

  /** Each tab's code for `count()`, `search()` (or 'resolved') and its status's `locked`. */
  const probe = (page: Page) =>
    page.evaluate(async (codeOfSource) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const memory = window.memories.m!;
      return { count: await codeOf(() => memory.count()), search: await codeOf(() => memory.search('tomatoes')), locked: (await memory.status()).locked };
    }, codeOf.toString());

  const idle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  test('locks after idle in every tab; refuses calls with LOCKED and a wrong passphrase with WRONG_KEY; unlocks from either tab, also after a takeover', async () => {
    const name = 'idle-lock';
    const [first, second] = [await openLab(context), await openLab(context)];
    const open = (page: Page) =>
      page.evaluate(
        async ([name, passphrase]) => {
          window.memories.m = await window.engram.createMemory({ name, embedder: null, encryption: { passphrase }, lockAfterIdleMs: 3000, callTimeoutMs: 10_000 });
        },
        [name, PASSPHRASE] as const,
      );
    await open(first);
    await open(second);
    await first.evaluate(() => window.memories.m!.add([{ text: 'tomatoes need sun' }, { text: 'tomatoes need water' }]));
    expect(await fileFree(first, name)).toBe('NoModificationAllowedError');
    // Calls from the second tab keep it open: idle counts every tab's calls.
    for (let i = 0; i < 4; i++) {
      await idle(1000);
      expect(await second.evaluate(() => window.memories.m!.count())).toBe(2);
    }
    expect(await probe(first)).toEqual({ count: 'resolved', search: 'resolved', locked: false });

    await idle(4500);
    for (const page of [first, second]) expect(await probe(page)).toEqual({ count: 'LOCKED', search: 'LOCKED', locked: true });
    // The store is closed (and its data key zeroed with it): the file is free for another handle.
    expect(await fileFree(first, name)).toBe('free');
    const refused = await second.evaluate(
      async ([codeOfSource, passphrase]) => {
        const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
        return { wrong: await codeOf(() => window.memories.m!.unlock(`${passphrase}?`)), empty: await codeOf(() => window.memories.m!.unlock('')) };
      },
      [codeOf.toString(), PASSPHRASE] as const,
    );
    expect(refused).toEqual({ wrong: 'WRONG_KEY', empty: 'INVALID_INPUT' });
    expect(await probe(first)).toEqual({ count: 'LOCKED', search: 'LOCKED', locked: true });

    // Unlocked from the second tab (a follower): the first tab's worker opens the database again.
    await second.evaluate((passphrase) => window.memories.m!.unlock(passphrase), PASSPHRASE);
    expect(await probe(first)).toEqual({ count: 'resolved', search: 'resolved', locked: false });
    expect(await second.evaluate(async () => ({ added: (await window.memories.m!.add({ text: 'tomatoes after the unlock' })).length, count: await window.memories.m!.count() }))).toEqual({ added: 1, count: 3 });
    expect(await first.evaluate(async () => (await window.memories.m!.status()).error)).toBeNull();

    // Locked again, then unlocked from the first tab (the one holding the database).
    await idle(4500);
    expect(await probe(second)).toEqual({ count: 'LOCKED', search: 'LOCKED', locked: true });
    await first.evaluate((passphrase) => window.memories.m!.unlock(passphrase), PASSPHRASE);
    expect(await second.evaluate(() => window.memories.m!.count())).toBe(3);

    // Locked, and the first tab closes: the second takes over still locked (its passphrase was forgotten at the lock).
    await idle(4500);
    expect(await probe(second)).toEqual({ count: 'LOCKED', search: 'LOCKED', locked: true });
    await first.evaluate(() => window.memories.m!.close());
    await first.close();
    expect(await probe(second)).toEqual({ count: 'LOCKED', search: 'LOCKED', locked: true });
    expect(await fileFree(second, name)).toBe('free');
    await second.evaluate((passphrase) => window.memories.m!.unlock(passphrase), PASSPHRASE);
    expect(await second.evaluate(async () => (await window.memories.m!.search('tomatoes')).hits.length)).toBe(3);
    await second.evaluate(() => window.memories.m!.close());
    await second.close();
  });

  test('lockAfterIdleMs needs encryption; unlock on a plain Memory is NOT_ENCRYPTED', async () => {
    const outcome = await page.evaluate(async (codeOfSource) => {
      const codeOf = new Function(`return ${codeOfSource}`)() as (run: () => Promise<unknown>) => Promise<string>;
      const { createMemory } = window.engram;
      const plain = await createMemory({ name: 'idle-lock-plain', embedder: null });
      const result = {
        noEncryption: await codeOf(() => createMemory({ name: 'idle-lock-plain', embedder: null, lockAfterIdleMs: 1000 })),
        zero: await codeOf(() => createMemory({ name: 'idle-lock-x', embedder: null, encryption: { passphrase: 'long enough passphrase' }, lockAfterIdleMs: 0 })),
        unlockPlain: await codeOf(() => plain.unlock('long enough passphrase')),
      };
      await plain.close();
      return result;
    }, codeOf.toString());
    expect(outcome).toEqual({ noEncryption: 'INVALID_INPUT', zero: 'INVALID_INPUT', unlockPlain: 'NOT_ENCRYPTED' });
  });
});
