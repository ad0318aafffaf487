/**
 * Several tabs' workers in one Node process, for worker/leader.ts: the real engine, wa-sqlite's real synchronous build
 * and WebCrypto, with Node's BroadcastChannel between them. Two browser APIs Node lacks stand in: Web Locks (an
 * exclusive lock queue, `installLocks`) and OPFS (wa-sqlite's MemoryVFS over one file map per test, `sharedFiles`),
 * which a test file wires in with vi.mock.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** wa-sqlite's synchronous build reads its WASM through fetch in a browser; Node is given the bytes. */
export function wasmBinary(build: 'wa-sqlite' | 'mc-wa-sqlite'): Uint8Array {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve(`@journeyapps/wa-sqlite/dist/${build}.wasm`));
}

/** Files of the stand-in OPFS, by path, shared by every VFS made in the process (so a new leader finds the database). */
export const sharedFiles = new Map<string, unknown>();

/**
 * The Web Locks API as leader.ts uses it: exclusive `request(name, { ifAvailable, signal }, callback)`, the lock held
 * until the callback's promise settles, waiters granted in order.
 */
export function installLocks(): void {
  const held = new Set<string>();
  const queues = new Map<string, { grant: () => void }[]>();
  const next = (name: string) => {
    const queue = queues.get(name) ?? [];
    while (queue.length > 0 && !held.has(name)) queue.shift()!.grant();
  };
  const locks = {
    request(name: string, options: { ifAvailable?: boolean; signal?: AbortSignal }, callback: (lock: { name: string } | null) => Promise<unknown>): Promise<unknown> {
      return new Promise((resolve, reject) => {
        const run = () => {
          held.add(name);
          Promise.resolve()
            .then(() => callback({ name }))
            .then(resolve, reject)
            .finally(() => {
              held.delete(name);
              next(name);
            });
        };
        if (!held.has(name)) return run();
        if (options.ifAvailable) {
          Promise.resolve()
            .then(() => callback(null))
            .then(resolve, reject);
          return;
        }
        const queue = queues.get(name) ?? [];
        queues.set(name, queue);
        const entry = { grant: () => (options.signal?.aborted ? undefined : run()) };
        queue.push(entry);
        options.signal?.addEventListener('abort', () => {
          // Aborting matters only while waiting, as in browsers.
          const at = queue.indexOf(entry);
          if (at < 0) return;
          queue.splice(at, 1);
          reject(new DOMException('aborted', 'AbortError'));
        });
      });
    },
  };
  Object.defineProperty(globalThis, 'navigator', { value: { locks }, configurable: true, writable: true });
}

/** For `vi.mock` of wa-sqlite's synchronous build: the real module, handed its WASM bytes. */
export async function waSqliteWithBinary(original: () => Promise<unknown>): Promise<{ default: (options?: object) => Promise<unknown> }> {
  const real = ((await original()) as { default: (options?: object) => Promise<unknown> }).default;
  return { default: (options: object = {}) => real({ ...options, wasmBinary: wasmBinary('wa-sqlite') }) };
}

/** For `vi.mock` of the OPFS VFS: wa-sqlite's MemoryVFS over `sharedFiles`, so every tab of the test opens one database. */
export async function sharedMemoryVfs(): Promise<{ OPFSCoopSyncVFS: { create(name: string, module: unknown): Promise<unknown> } }> {
  const { MemoryVFS } = (await import('@journeyapps/wa-sqlite/src/examples/MemoryVFS.js')) as unknown as {
    MemoryVFS: { create(name: string, module: unknown): Promise<{ mapNameToFile: Map<string, unknown> }> };
  };
  const create = async (name: string, module: unknown) => Object.assign(await MemoryVFS.create(name, module), { mapNameToFile: sharedFiles });
  return { OPFSCoopSyncVFS: { create } };
}
