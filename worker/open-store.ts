import { memoryStore } from '../src/store/memory-store.js';
import type { StorageKind } from '../src/client/protocol.js';
import type { Store } from '../src/store/store.js';
import { hasOpfsSyncAccess } from './sqlite.js';
import { openSqliteStore } from './sqlite-store.js';

/**
 * 'auto' means OPFS when this context can really use synchronous access handles, else IndexedDB. A probe
 * file is opened rather than trusting feature detection: Safari's private mode, for one, has the API but refuses.
 */
export async function resolveStorage(storage: 'auto' | StorageKind): Promise<StorageKind> {
  if (storage !== 'auto') return storage;
  return (await canUseOpfs()) ? 'opfs' : 'idb';
}

async function canUseOpfs(): Promise<boolean> {
  if (!hasOpfsSyncAccess()) return false;
  try {
    const root = await navigator.storage.getDirectory();
    const probe = await root.getFileHandle('.engram-probe', { create: true });
    const handle = await probe.createSyncAccessHandle();
    handle.close();
    return true;
  } catch {
    return false;
  }
}

export function openStore(name: string, storage: StorageKind): Promise<Store> {
  return storage === 'memory' ? Promise.resolve(memoryStore()) : openSqliteStore({ name, backend: storage });
}
