/**
 * The browser store's types that the page sees too (through src/contract/protocol.ts). Free of wa-sqlite's ambient
 * types: the build ships this file's declarations only, of src/store/browser/ (scripts/build.ts).
 */
import type { MemoryRecord } from '../../types.js';

/** Where the memories of a `createMemory` live. */
export type StorageKind = 'opfs' | 'idb' | 'memory';

/** What `salvageMemory` read from a damaged database. */
export interface SalvageReport {
  /** Every memory that could be read, in insertion order and in `export()`'s form: `import()` them into a new database. */
  records: MemoryRecord[];
  /**
   * Row ranges (SQLite rowids, which follow insertion order; `to` null: to the end) that could not be read. A range may
   * include rowids that never held a memory, since a lookup that fails cannot tell.
   */
  lost: { from: number; to: number | null }[];
  /** SQLite's `quick_check` findings (at most 20; `['ok']` when it found nothing wrong). */
  quickCheck: string[];
}
