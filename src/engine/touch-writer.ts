/**
 * Bookkeeping after a search: touch (accessCount + 1, lastAccessedAt = now), or the `reinforce` stage's records
 * and the associations it strengthened. In memory at once, in the store through the write queue, best effort.
 * Each write carries every pending record and association as they then are, in one atomic store write, so a
 * crash leaves the store at the state after some search, never between two. Store writes are coalesced: one write once searches pause for
 * TOUCH_WRITE_DELAY_MS, and at the latest TOUCH_WRITE_MAX_DELAY_MS after the first unsaved touch, because a write
 * per search (a SQLite transaction in the worker) costs more than the search, and a write in the middle of a
 * burst of searches delays one of them. `flush` writes at once.
 */
import { ErrorCode, toEngramError, type EngramError } from '../errors.js';
import type { AssociationEdge, Store, StoreWrite } from '../store/store.js';
import type { MemoryRecord } from '../types.js';
import type { RecordTable } from './record-table.js';
import type { WriteQueue } from './write-queue.js';

/** Touch bookkeeping is written once searches pause this long... */
export const TOUCH_WRITE_DELAY_MS = 1000;
/** ...or, during a steady stream of searches, at most this long after the first unsaved one... */
export const TOUCH_WRITE_MAX_DELAY_MS = 10_000;
/**
 * ...or at once when this many records and associations wait: the write holds the worker's thread while it runs,
 * and ten seconds of searches back to back made one that stalled a search for over a second (docs/bench.md).
 */
export const TOUCH_WRITE_MAX_PENDING = 5_000;

export class TouchWriter {
  private readonly pending = new Set<string>();
  /** Associations changed since the last write (AssociationGraph.strengthen's edges). */
  private readonly pendingEdges = new Set<AssociationEdge>();
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
    /** The store write of these associations as they now are (AssociationGraph.asWrite). */
    private readonly associationsWrite: (edges: AssociationEdge[]) => NonNullable<StoreWrite['associations']> = () => ({}),
  ) {}

  /** Counts an access to each of `ids` at `now`, and schedules the store write. */
  touch(ids: readonly string[], now: number): void {
    this.update(
      ids.flatMap((id) => {
        const record = this.records.get(id);
        return record ? [{ ...record, accessCount: record.accessCount + 1, lastAccessedAt: now }] : [];
      }),
      [],
    );
  }

  /** Sets these records (already changed, e.g. reinforced) in memory and schedules them with these associations. */
  update(records: readonly MemoryRecord[], edges: readonly AssociationEdge[]): void {
    const ids = records.map((r) => r.id);
    for (const record of records) {
      this.records.set(record);
      this.pending.add(record.id);
    }
    for (const edge of edges) this.pendingEdges.add(edge);
    // Changed in memory only until written: kept there until then.
    this.records.hold(ids);
    const since = (this.pendingSince ??= performance.now());
    if (this.timer !== null) clearTimeout(this.timer);
    const full = this.pending.size + this.pendingEdges.size >= TOUCH_WRITE_MAX_PENDING;
    const delay = full ? 0 : Math.max(0, Math.min(TOUCH_WRITE_DELAY_MS, since + TOUCH_WRITE_MAX_DELAY_MS - performance.now()));
    this.timer = setTimeout(() => void this.flush(), delay);
    // Node: a pending bookkeeping write must not keep the process alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Queues the write of every unsaved touch now; settles when it is done (a failure goes to `onError`). */
  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pendingSince = null;
    if (this.pending.size === 0 && this.pendingEdges.size === 0) return Promise.resolve();
    const ids = [...this.pending];
    const edges = [...this.pendingEdges];
    this.pending.clear();
    this.pendingEdges.clear();
    return this.queue
      .run(async () => {
        // Read the records and edges when the write runs, so a change queued earlier is never overwritten with
        // stale data; an edge gone by then (evicted, or its memory removed) is deleted.
        const put = ids.flatMap((id) => this.records.get(id) ?? []);
        try {
          if ((put.length > 0 || edges.length > 0) && !this.storeClosed) {
            await this.store.write({ put, associations: this.associationsWrite(edges) });
          }
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
