// The wa-sqlite VFS examples ship as plain JS without declarations (its bundled index.d.ts covers only
// older ones, with outdated signatures: IDBBatchAtomicVFS is declared there without `create`, see wa-sqlite.ts).
// These are the parts the store uses.

interface WaSqliteVfs extends SQLiteVFS {
  /** The error behind the last SQLITE_IOERR, e.g. a DOMException 'QuotaExceededError'. */
  lastError?: unknown;
  close(): void | Promise<void>;
}

declare module '@journeyapps/wa-sqlite/src/examples/OPFSCoopSyncVFS.js' {
  export const OPFSCoopSyncVFS: { create(name: string, module: unknown): Promise<WaSqliteVfs> };
}

declare module '@journeyapps/wa-sqlite/src/examples/AccessHandlePoolVFS.js' {
  export const AccessHandlePoolVFS: { create(name: string, module: unknown): Promise<WaSqliteVfs> };
}
