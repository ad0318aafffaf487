import type { Engine } from '../src/engine.js';
import type { IndexSnapshot } from '../src/snapshot.js';
import type { Store } from '../src/store.js';

/** Meta key of the lexical index snapshot (the engine checks it still matches the records before using it). */
const SNAPSHOT_KEY = 'engram.lexical-snapshot';
/** Quiet time after the last change before the snapshot is rewritten: it is large, and only needed at the next open. */
const SAVE_AFTER_IDLE_MS = 10_000;

/** The stored snapshot, or null when there is none or it cannot be parsed (the engine then rebuilds). */
export async function readSnapshot(store: Store): Promise<IndexSnapshot | null> {
  const raw = await store.readMeta(SNAPSHOT_KEY).catch(() => null);
  if (typeof raw !== 'string') return null;
  try {
    return JSON.parse(raw) as IndexSnapshot;
  } catch {
    return null;
  }
}

/** Serialises the engine's lexical index into the store's meta table; returns its size in characters. */
export async function saveSnapshot(engine: Engine, store: Store): Promise<number> {
  const json = JSON.stringify(await engine.indexSnapshot());
  await store.write({ meta: { [SNAPSHOT_KEY]: json } });
  return json.length;
}

/**
 * Keeps the stored snapshot current so the next cold open can skip re-indexing every text. A tab usually just
 * goes away without `close()`, so the snapshot is also saved after changes once the memory has been idle a while.
 */
export class SnapshotKeeper {
  private dirty: boolean;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: Engine,
    private readonly store: Store,
    private readonly onError: (error: unknown) => void,
  ) {
    // A rebuilt index is worth saving even if nothing changes in this session.
    this.dirty = engine.lexicalSource === 'rebuilt';
    if (this.dirty) this.schedule();
  }

  /** Call after every change to the memories. */
  changed(): void {
    this.dirty = true;
    this.schedule();
  }

  /** Saves now if anything changed since the last save (on close). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    await this.saving;
    if (this.dirty) await this.save();
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.saving = this.save().catch(this.onError);
    }, SAVE_AFTER_IDLE_MS);
  }

  private async save(): Promise<void> {
    if (!this.store.persistent) return;
    this.dirty = false;
    await saveSnapshot(this.engine, this.store);
  }
}
