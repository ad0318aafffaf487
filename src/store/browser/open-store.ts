import { memoryStore } from '../memory-store.js';
import type { EncryptionOptions } from '../../util/encryption.js';
import type { StorageKind } from './types.js';
import type { Store } from '../store.js';
import { hasOpfsSyncAccess } from './wa-sqlite.js';
import { openSqliteStore } from './browser-store.js';

/**
 * 'auto' means OPFS when this context can really use synchronous access handles, else IndexedDB. A probe
 * file is opened rather than trusting feature detection: Safari's private mode, for one, has the API but refuses.
 */
export async function resolveStorage(storage: 'auto' | StorageKind): Promise<StorageKind> {
  if (storage !== 'auto') return storage;
  return (await canUseOpfs()) ? 'opfs' : 'idb';
}

/**
 * Each worker probes its own file: a sync access handle locks its file, so workers of several tabs probing one
 * shared file at once saw it locked, and a tab that concluded "no OPFS" opened a second database on IndexedDB,
 * where its writes were invisible to the others.
 */
async function canUseOpfs(): Promise<boolean> {
  if (!hasOpfsSyncAccess()) return false;
  let root: FileSystemDirectoryHandle | undefined;
  const name = `.engram-probe-${crypto.randomUUID()}`;
  try {
    root = await navigator.storage.getDirectory();
    const probe = await root.getFileHandle(name, { create: true });
    const handle = await probe.createSyncAccessHandle();
    handle.close();
    return true;
  } catch {
    return false;
  } finally {
    await root?.removeEntry(name).catch(() => undefined);
  }
}

/** A store as the worker opens it, with what the open found. */
type OpenedStore = Store & {
  /** The database's data vanished since the last open (evicted or cleared; see sentinel.ts). Never for 'memory'. */
  readonly evicted: boolean;
  /** Its pages are encrypted at rest. Never for 'memory', which writes nothing. */
  readonly encrypted: boolean;
};

export async function openStore(name: string, storage: StorageKind, encryption: EncryptionOptions | null = null, dataKey: Uint8Array | null = null): Promise<OpenedStore> {
  if (storage === 'memory') return Object.assign(memoryStore(), { evicted: false, encrypted: false });
  return openSqliteStore({ name, backend: storage, encryption, dataKey });
}
