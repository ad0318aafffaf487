/// <reference lib="webworker" />
/**
 * Writes a database through the real store, finds where its rows live by watching the VFS's reads, and damages its
 * stored bytes the way bit rot or a torn write would: on OPFS in the file, on IndexedDB in IDBBatchAtomicVFS's
 * `blocks` records ({ path, offset: -fileOffset, version, data }).
 */
import * as Comlink from 'comlink';
import { isEngramError } from '../../../src/errors.js';
import type { MemoryRecord } from '../../../src/types.js';
import { unlock } from '../../../src/store/browser/keyring.js';
import { openSqliteStore } from '../../../src/store/browser/browser-store.js';
import { Connection } from '../../../src/store/browser/wa-sqlite.js';

type Backend = 'opfs' | 'idb';
type ReadFn = (fileId: number, pData: Uint8Array, iOffset: number) => unknown;

/** Page-sized reads of every VFS, while `reads` is set. */
let reads: { offset: number; length: number }[] | null = null;

async function watchReads(): Promise<void> {
  const { OPFSCoopSyncVFS } = await import('@journeyapps/wa-sqlite/src/examples/OPFSCoopSyncVFS.js');
  const { IDBBatchAtomicVFS } = await import('@journeyapps/wa-sqlite/src/examples/IDBBatchAtomicVFS.js');
  const opfs = (OPFSCoopSyncVFS as unknown as { prototype: { jRead: ReadFn } }).prototype;
  const syncRead = opfs.jRead;
  opfs.jRead = function (this: unknown, fileId, pData, iOffset) {
    if (pData.byteLength >= 512) reads?.push({ offset: iOffset, length: pData.byteLength });
    return syncRead.call(this, fileId, pData, iOffset);
  };
  const idb = (IDBBatchAtomicVFS as unknown as { prototype: { jRead: ReadFn } }).prototype;
  const asyncRead = idb.jRead;
  // Still an async function: wa-sqlite's asyncify build tells asynchronous VFS methods by that.
  idb.jRead = async function (this: unknown, fileId, pData, iOffset) {
    if (pData.byteLength >= 512) reads?.push({ offset: iOffset, length: pData.byteLength });
    return asyncRead.call(this, fileId, pData, iOffset);
  };
}
const watching = watchReads();

export function memoryText(i: number): string {
  return `memory ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(6)}${i}`;
}

function record(i: number): MemoryRecord {
  return { id: `m${i}`, text: memoryText(i), createdAt: 1_700_000_000_000 + i, priority: 1, pinned: false, tags: ['t'], accessCount: 0 };
}

const encryptionOf = (passphrase: string | null) => (passphrase === null ? null : { passphrase });

async function idbBlocks(name: string, edit: (block: { path: string; offset: number; data: Uint8Array }) => 'keep' | 'put' | 'delete'): Promise<number> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open(`engram-${name}`);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  let changed = 0;
  await new Promise<void>((resolve, reject) => {
    const tx = db.transaction('blocks', 'readwrite');
    const request = tx.objectStore('blocks').openCursor();
    request.onsuccess = () => {
      const cursor = request.result;
      if (!cursor) return;
      const block = cursor.value as { path: string; offset: number; data: Uint8Array };
      if (block.path.endsWith(`${name}.sqlite3`)) {
        const action = edit(block);
        if (action === 'put') cursor.update(block);
        if (action === 'delete') cursor.delete();
        if (action !== 'keep') changed++;
      }
      cursor.continue();
    };
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
  });
  db.close();
  return changed;
}

async function opfsFile<T = void>(name: string, edit: (handle: FileSystemSyncAccessHandle) => T, suffix = ''): Promise<T> {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('engram');
  const file = await dir.getFileHandle(`${name}.sqlite3${suffix}`);
  // A terminated worker's access handles are released some time after terminate() returns.
  let handle: FileSystemSyncAccessHandle | undefined;
  for (let waited = 0; !handle; waited += 50) {
    try {
      handle = await file.createSyncAccessHandle();
    } catch (error) {
      if ((error as DOMException).name !== 'NoModificationAllowedError' || waited >= 10_000) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    const result = edit(handle);
    handle.flush();
    return result;
  } finally {
    handle.close();
  }
}

const lab = {
  /**
   * Writes `n` memories (m0…, rowids 1…n) to a new database and closes it; returns the byte offset and size of the
   * page holding rowid `target` (the last page a lookup of it reads) and the file's size.
   */
  async create(backend: Backend, name: string, passphrase: string | null, n: number, target: number) {
    await watching;
    const store = await openSqliteStore({ name, backend, encryption: encryptionOf(passphrase) });
    await store.write({ put: Array.from({ length: n }, (_, i) => record(i)) });
    await store.close();
    const key = await unlock(`${backend}:${name}`, name, encryptionOf(passphrase));
    const db = await Connection.open(backend, name, key);
    const size = Number(await db.scalar('SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()'));
    reads = [];
    const text = await db.scalar('SELECT text FROM memories WHERE rowid = ?1', [target]);
    const leaf = reads.at(-1)!;
    reads = null;
    await db.close();
    if (text !== memoryText(target - 1)) throw new Error(`rowid ${target} is not m${target - 1}`);
    return { leaf, size };
  },

  /** Flips the lowest bit of the byte at `offset` (a page's first byte is its b-tree page type). */
  async flipBit(backend: Backend, name: string, offset: number): Promise<void> {
    if (backend === 'opfs') {
      await opfsFile(name, (handle) => {
        const byte = new Uint8Array(1);
        handle.read(byte, { at: offset });
        byte[0]! ^= 1;
        handle.write(byte, { at: offset });
      });
      return;
    }
    const changed = await idbBlocks(name, (block) => {
      if (-block.offset !== offset) return 'keep';
      block.data = block.data.slice();
      block.data[0]! ^= 1;
      return 'put';
    });
    if (changed === 0) throw new Error(`no IndexedDB block at offset ${offset}`);
  },

  /** Cuts the database file at `size` bytes (on IndexedDB: drops the blocks past it, as a torn write would). */
  async truncate(backend: Backend, name: string, size: number): Promise<void> {
    if (backend === 'opfs') return opfsFile(name, (handle) => handle.truncate(size));
    const changed = await idbBlocks(name, (block) => (-block.offset >= size ? 'delete' : 'keep'));
    if (changed === 0) throw new Error(`no IndexedDB block past ${size}`);
  },

  /** The `length` bytes at `offset` of the database file (on IndexedDB: the block stored at that offset). */
  async readBytes(backend: Backend, name: string, offset: number, length: number): Promise<Uint8Array> {
    if (backend === 'opfs') {
      return opfsFile(name, (handle) => {
        const bytes = new Uint8Array(length);
        handle.read(bytes, { at: offset });
        return bytes;
      });
    }
    let found: Uint8Array | null = null;
    await idbBlocks(name, (block) => {
      if (-block.offset === offset) found = block.data.slice(0, length);
      return 'keep';
    });
    if (!found) throw new Error(`no IndexedDB block at offset ${offset}`);
    return found;
  },

  /** Puts `bytes` back at `offset`, as someone holding an older copy of the file would. */
  async writeBytes(backend: Backend, name: string, offset: number, bytes: Uint8Array): Promise<void> {
    if (backend === 'opfs') {
      await opfsFile(name, (handle) => void handle.write(bytes, { at: offset }));
      return;
    }
    const changed = await idbBlocks(name, (block) => {
      if (-block.offset !== offset) return 'keep';
      block.data = bytes.slice();
      return 'put';
    });
    if (changed === 0) throw new Error(`no IndexedDB block at offset ${offset}`);
  },

  /** Rewrites memory m<i>'s text through the store (same length: the row stays on its page). */
  async rewrite(backend: Backend, name: string, passphrase: string | null, i: number, text: string): Promise<void> {
    const store = await openSqliteStore({ name, backend, encryption: encryptionOf(passphrase) });
    await store.write({ put: [{ ...record(i), text }] });
    await store.close();
  },

  /** Every memory's text, by id, as the store reads them. */
  async texts(backend: Backend, name: string, passphrase: string | null): Promise<Record<string, string>> {
    const store = await openSqliteStore({ name, backend, encryption: encryptionOf(passphrase) });
    try {
      return Object.fromEntries((await store.loadRecords()).map((r) => [r.id, r.text]));
    } finally {
      await store.close();
    }
  },

  /** Opens the store and loads every memory: the first call that fails, with its code and details. */
  async load(backend: Backend, name: string, passphrase: string | null) {
    let step = 'open';
    try {
      const store = await openSqliteStore({ name, backend, encryption: encryptionOf(passphrase) });
      try {
        step = 'loadRecords';
        await store.loadRecords();
        return { step: 'none', code: null, details: null };
      } finally {
        await store.close().catch(() => undefined);
      }
    } catch (error) {
      return { step, code: isEngramError(error) ? error.code : String(error), details: isEngramError(error) ? (error.details ?? null) : null, message: String(error) };
    }
  },

  /**
   * The commits in a WAL left behind by a worker that was killed: for each commit frame (one whose "database size
   * after commit" is set), the byte offset where it ends. Frame headers are in clear also in an encrypted database.
   */
  async walCommits(name: string): Promise<{ size: number; frameSize: number; commitEnds: number[] }> {
    return opfsFile(name, (handle) => {
      const size = handle.getSize();
      const header = new DataView(new ArrayBuffer(32));
      handle.read(header, { at: 0 });
      const frameSize = 24 + header.getUint32(8);
      const commitEnds: number[] = [];
      const frame = new DataView(new ArrayBuffer(24));
      for (let at = 32; at + frameSize <= size; at += frameSize) {
        handle.read(frame, { at });
        if (frame.getUint32(4) !== 0) commitEnds.push(at + frameSize);
      }
      return { size, frameSize, commitEnds };
    }, '-wal');
  },

  /** Cuts the WAL at `size` bytes, as a crash halfway through appending a frame would. */
  async truncateWal(name: string, size: number): Promise<void> {
    return opfsFile(name, (handle) => handle.truncate(size), '-wal');
  },
};

export type CorruptLab = typeof lab;
Comlink.expose(lab);
