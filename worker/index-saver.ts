import type { Engine } from '../src/engine/engine.js';
import { saveSnapshot } from '../src/engine/lexical-persistence.js';
import { snapshotHeader, type IndexSnapshot } from '../src/lexical/snapshot.js';
import type { Store } from '../src/store/store.js';

/** Kept with the engine's snapshot code (src/node reads and saves them too). */
export { readSnapshot, saveSnapshot } from '../src/engine/lexical-persistence.js';

/** Quiet time after the last change before the snapshot is rewritten: it is large, and only needed at the next open. */
const SAVE_AFTER_IDLE_MS = 10_000;

/** True when `snapshot` was made at the store's current change counter (so opening from it needs no catching up). */
export async function isCurrent(snapshot: IndexSnapshot | null, store: Store): Promise<boolean> {
  const header = snapshot && snapshotHeader(snapshot);
  return header !== null && header.counter === (await store.changeCounter());
}

/**
 * Keeps the stored snapshot current so the next cold open can skip re-indexing every text. A tab usually just
 * goes away without `close()`, so the snapshot is also saved after changes once the memory has been idle a while.
 */
export class SnapshotKeeper {
  /** Changes so far, and how many of them the stored snapshot holds: it is stale while they differ. */
  private changes = 0;
  private savedChanges = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private saving: Promise<void> = Promise.resolve();

  /** `current`: the engine opened from a snapshot made at the store's present change counter. */
  constructor(
    private readonly engine: Engine,
    private readonly store: Store,
    private readonly onError: (error: unknown) => void,
    current: boolean,
  ) {
    // A rebuilt or caught-up index is worth saving even if nothing changes in this session.
    if (engine.lexicalSource === 'rebuilt' || !current) this.changed();
  }

  /** Call after every change to the memories. */
  changed(): void {
    this.changes++;
    this.schedule();
  }

  /** Saves now if anything changed since the last save (on close). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    await this.saving;
    if (this.changes !== this.savedChanges) await this.save();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.saving = this.save().catch(this.onError);
    }, SAVE_AFTER_IDLE_MS);
  }

  /** Counts the changes as saved only once the snapshot is stored: a failed save (a full disk) is tried again on close. */
  private async save(): Promise<void> {
    if (!this.store.persistent) return;
    const changes = this.changes;
    await saveSnapshot(this.engine, this.store);
    this.savedChanges = changes;
  }
}
