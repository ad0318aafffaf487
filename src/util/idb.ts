/** Small IndexedDB helpers for the records Engram keeps beside its databases (store/browser: sentinel.ts, keyring.ts) and the embedder's device choice. */

export function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

/** Opens IndexedDB database `name` (version 1) with its one object store `store` (out-of-line keys). */
async function openRecords(name: string, store: string): Promise<IDBDatabase> {
  const open = indexedDB.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore(store);
  return request(open);
}

/** Resolves when `tx` commits; rejects when it aborts (a full disk, or the body threw). */
export function committed(tx: IDBTransaction): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
  });
}

/** Runs `body` on database `name`'s store, closing the database after. */
export async function withRecords<T>(name: string, store: string, body: (db: IDBDatabase) => Promise<T>): Promise<T> {
  const db = await openRecords(name, store);
  try {
    return await body(db);
  } finally {
    db.close();
  }
}

/** The record at `key` in database `name`'s store (undefined when there is none). */
export function readRecord(name: string, store: string, key: string): Promise<unknown> {
  return withRecords(name, store, (db) => request(db.transaction(store, 'readonly').objectStore(store).get(key)));
}
