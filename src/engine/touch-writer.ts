/**
 * Touch bookkeeping after a search (accessCount + 1, lastAccessedAt = now): in memory at once, in the store
 * through the write queue, best effort. Store writes are coalesced: one write once searches pause for
 * TOUCH_WRITE_DELAY_MS, and at the latest TOUCH_WRITE_MAX_DELAY_MS after the first unsaved touch, because a write
 * per search (a SQLite transaction in the worker) costs more than the search, and a write in the middle of a
 * burst of searches delays one of them. `flush` writes at once.
 */
import { ErrorCode, toEngramError, type EngramError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { RecordTable } from './record-table.js';
import type { WriteQueue } from './write-queue.js';

/** Touch bookkeeping is written once searches pause this long... */
export const TOUCH_WRITE_DELAY_MS = 1000;
/** ...or, during a steady stream of searches, at most this long after the first unsaved one. */
export const TOUCH_WRITE_MAX_DELAY_MS = 10_000;

export class TouchWriter {
  private readonly pending = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** When (performance.now) the oldest unsaved touch happened, or null when none is waiting. */
  private pendingSince: number | null = null;
  private storeClosed = false;

  constructor(
    private readonly records: Pick<RecordTable, 'get' | 'set' | 'hold' | 'release'>,
    private readonly queue: Pick<WriteQueue, 'run'>,
    private readonly store: Pick<Store, 'write'>,
    /** Receives a failed write. */
    private readonly onError: (error: EngramError) => void,
  ) {}

  /** Counts an access to each of `ids` at `now`, and schedules the store write. */
  touch(ids: readonly string[], now: number): void {
    for (const id of ids) {
      const record = this.records.get(id);
      if (record) this.records.set({ ...record, accessCount: record.accessCount + 1, lastAccessedAt: now });
      this.pending.add(id);
    }
    // Counted in memory only until written: kept there until then.
    this.records.hold(ids);
    const since = (this.pendingSince ??= performance.now());
    if (this.timer !== null) clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(TOUCH_WRITE_DELAY_MS, since + TOUCH_WRITE_MAX_DELAY_MS - performance.now()));
    this.timer = setTimeout(() => void this.flush(), delay);
    // Node: a pending bookkeeping write must not keep the process alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Queues the write of every unsaved touch now; settles when it is done (a failure goes to `onError`). */
  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pendingSince = null;
    if (this.pending.size === 0) return Promise.resolve();
    const ids = [...this.pending];
    this.pending.clear();
    return this.queue
      .run(async () => {
        // Read the records when the write runs, so a change queued earlier is never overwritten with stale data.
        const put = ids.flatMap((id) => this.records.get(id) ?? []);
        try {
          if (put.length > 0 && !this.storeClosed) await this.store.write({ put });
        } finally {
          // Touched again since: still held for the next write.
          this.records.release(ids.filter((id) => !this.pending.has(id)));
        }
      })
      .catch((error) => {
        this.onError(toEngramError(error, ErrorCode.STORE_FAILED, 'could not save access bookkeeping'));
      });
  }

  /** The store is closed: writes queued from now on are dropped. */
  markStoreClosed(): void {
    this.storeClosed = true;
  }
}
