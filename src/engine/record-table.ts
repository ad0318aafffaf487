/**
 * The engine's records by id. Every memory has a summary here (store.ts `RecordSummary`: what eligibility and the
 * thread index read, without the text); full records are held in memory either all of them (resident: a table of
 * at most `residentRecords` memories, loaded in the background after open) or as a bounded cache of the most
 * recently read ones. Searches and calls fetch the full records they need by id first (`preload`, `read`), then
 * read them synchronously; a cached record is never older than the store's (writes set it here after they commit).
 *
 * Besides the map, it counts records that can be ineligible without any caller filter (an expiry date, or
 * superseded): while there are none and the search has no filter, the legs skip the per-memory eligibility check.
 */
import { EngramError, ErrorCode } from '../errors.js';
import type { RecordSummary } from '../store/store.js';
import { summarize } from '../store/summary.js';
import type { MemoryRecord } from '../types.js';
import { checkId } from '../util/ids.js';
import { nextTask } from '../util/schedule.js';

function restricted(summary: RecordSummary): boolean {
  return summary.validUntil !== undefined || summary.supersededBy !== undefined;
}

/** Reads stored records by id (unknown ids skipped, any order). */
type RecordLoader = (ids: readonly string[]) => Promise<MemoryRecord[]>;

/** Ids per store read of the background load: one read is the longest a call waits behind it. */
const BACKGROUND_CHUNK = 2000;

export class RecordTable {
  private readonly summaries = new Map<string, RecordSummary>();
  /** Full records; insertion order is recency (a read or write moves a record to the end). */
  private readonly cache = new Map<string, MemoryRecord>();
  private restrictedCount = 0;
  /** True once every memory's record is in `cache` and stays there (nothing is evicted from then on). */
  private resident = true;
  /** Most records `cache` keeps when not resident. */
  private cacheLimit = Infinity;
  private loader: RecordLoader | null = null;
  /** Ids whose cached record must not be evicted (changed in memory ahead of the store: touch bookkeeping). */
  private readonly held = new Set<string>();
  /** Ids a read in flight will hand to its caller, with how many reads: not evicted meanwhile (a trim may run during a read). */
  private readonly inUse = new Map<string, number>();
  /** One set per store read in flight: the ids written or removed since it started (its copies of them are stale). */
  private readonly readsInFlight = new Set<Set<string>>();
  private trimScheduled = false;
  private background: Promise<void> = Promise.resolve();
  private stopped = false;

  get size(): number {
    return this.summaries.size;
  }

  /** True when some record has an expiry date or is superseded. */
  get anyRestricted(): boolean {
    return this.restrictedCount > 0;
  }

  /** True when every record is in memory, so `get` answers for every id. */
  get isResident(): boolean {
    return this.resident;
  }

  /** Settles when the background load started by `startOnDemand` ends (at once when there is none). */
  get loaded(): Promise<void> {
    return this.background;
  }

  /**
   * Fills an empty table with summaries only: full records are read through `loader` when needed. When there are
   * at most `residentRecords`, every record is then loaded in the background (call `loadInBackground`); otherwise
   * at most `cacheLimit` stay cached. False (and the table left empty) when an id comes twice: see `fillResident`.
   */
  startOnDemand(summaries: readonly RecordSummary[], loader: RecordLoader, residentRecords: number, cacheLimit: number): boolean {
    for (const summary of summaries) this.setSummary(summary);
    if (this.summaries.size !== summaries.length) {
      this.summaries.clear();
      this.restrictedCount = 0;
      return false;
    }
    this.loader = loader;
    this.resident = this.summaries.size === 0;
    this.cacheLimit = this.summaries.size <= residentRecords ? Infinity : Math.max(0, cacheLimit);
    return true;
  }

  /** Loads every record, a chunk per store read with a task boundary between reads; a no-op unless resident is possible. */
  loadInBackground(onError: (error: unknown) => void): Promise<void> {
    if (this.resident || this.cacheLimit !== Infinity) return this.background;
    this.background = (async () => {
      const ids = [...this.summaries.keys()];
      for (let start = 0; start < ids.length; start += BACKGROUND_CHUNK) {
        await nextTask();
        if (this.stopped) return;
        const pending = this.preload(ids.slice(start, start + BACKGROUND_CHUNK));
        if (pending) await pending;
      }
      // Memories added meanwhile were set here by their write; any id still missing was re-read by preload.
      if ([...this.summaries.keys()].every((id) => this.cache.has(id))) this.resident = true;
    })().catch(onError);
    return this.background;
  }

  /** Ends the background load before its next read (the store is closing). */
  stop(): void {
    this.stopped = true;
  }

  /** The full record when it is in memory (always, once resident); call `preload` or `read` first otherwise. */
  get(id: string): MemoryRecord | undefined {
    return this.cache.get(id);
  }

  /** What eligibility and the thread index read of a memory, for every stored id. */
  summary(id: string): RecordSummary | undefined {
    return this.summaries.get(id);
  }

  has(id: string): boolean {
    return this.summaries.has(id);
  }

  /** The memories superseded by one of `ids` and not among them. */
  supersededBy(ids: ReadonlySet<string>): string[] {
    const found: string[] = [];
    for (const summary of this.summaries.values()) if (summary.supersededBy !== undefined && ids.has(summary.supersededBy) && !ids.has(summary.id)) found.push(summary.id);
    return found;
  }

  /** Every stored memory's summary, in table order. */
  summaryValues(): IterableIterator<RecordSummary> {
    return this.summaries.values();
  }

  keys(): IterableIterator<string> {
    return this.summaries.keys();
  }

  /** A record written to the store (or changed in memory by touch bookkeeping, see `hold`). */
  set(record: MemoryRecord): void {
    this.setSummary(summarize(record));
    this.cache.delete(record.id);
    this.cache.set(record.id, record);
    this.noteWrite(record.id);
    this.scheduleTrim();
  }

  delete(id: string): boolean {
    const previous = this.summaries.get(id);
    if (!previous) return false;
    if (restricted(previous)) this.restrictedCount--;
    this.summaries.delete(id);
    this.cache.delete(id);
    this.held.delete(id);
    this.noteWrite(id);
    return true;
  }

  /** Keeps these records in memory until `release` (their in-memory copy is newer than the store's). */
  hold(ids: Iterable<string>): void {
    if (this.resident) return;
    for (const id of ids) this.held.add(id);
  }

  release(ids: Iterable<string>): void {
    for (const id of ids) this.held.delete(id);
    this.scheduleTrim();
  }

  /**
   * Makes the records of `ids` readable through `get` until the current task ends: undefined when they already
   * are (no await needed), else a promise to await right before reading them. Unknown ids are ignored.
   */
  preload(ids: readonly string[]): Promise<void> | undefined {
    if (this.resident) return undefined;
    const missing: string[] = [];
    for (const id of ids) {
      const cached = this.cache.get(id);
      if (cached) {
        // Recently read: kept longer.
        this.cache.delete(id);
        this.cache.set(id, cached);
      } else if (this.summaries.has(id)) missing.push(id);
    }
    return missing.length === 0 ? undefined : this.fetch(missing, true, ids).then(() => this.scheduleTrim());
  }

  /** The records of `ids` that exist, in the order of `ids`; reads the store for those not in memory, caching them. */
  async getMany(ids: readonly string[]): Promise<MemoryRecord[]> {
    const pending = this.preload(ids);
    if (pending) await pending;
    return ids.flatMap((id) => this.cache.get(id) ?? []);
  }

  async getOne(id: string): Promise<MemoryRecord | undefined> {
    return (await this.getMany([id]))[0];
  }

  /** The record (checked id), or NOT_FOUND. */
  async mustGet(id: string): Promise<MemoryRecord> {
    checkId(id, 'id');
    const record = await this.getOne(id);
    if (!record) throw new EngramError(ErrorCode.NOT_FOUND, `no memory with id "${id}"`, { details: { id } });
    return record;
  }

  /**
   * Every record of `ids` that exists, in order, `chunk` ids per store read (for whole-table passes: export,
   * rebuilding the lexical index, the snapshot's hashes). What is read is cached only while the table may hold
   * every record; a pass over every id then leaves it resident.
   */
  async *scan(ids: readonly string[], chunk = 10_000): AsyncGenerator<MemoryRecord[]> {
    const keep = this.cacheLimit === Infinity;
    for (let start = 0; start < ids.length; start += chunk) {
      const slice = ids.slice(start, start + chunk);
      const fetched = this.resident ? new Map<string, MemoryRecord>() : await this.fetch(slice.filter((id) => !this.cache.has(id)), keep, slice);
      yield slice.flatMap((id) => this.cache.get(id) ?? fetched.get(id) ?? []);
    }
    if (keep && !this.resident && this.cache.size === this.summaries.size) this.resident = true;
  }

  /**
   * Reads `ids` from the store. A copy read while a write changed or removed its memory is stale: dropped, and read
   * again unless the write left it in the cache. `keep`: cache what was read (else only return it). `use`: ids
   * (cached or read) the caller reads when this settles, kept in memory until then.
   */
  private async fetch(ids: readonly string[], keep: boolean, use: readonly string[]): Promise<Map<string, MemoryRecord>> {
    for (const id of use) this.inUse.set(id, (this.inUse.get(id) ?? 0) + 1);
    try {
      return await this.read(ids, keep);
    } finally {
      for (const id of use) {
        const count = this.inUse.get(id)! - 1;
        if (count === 0) this.inUse.delete(id);
        else this.inUse.set(id, count);
      }
    }
  }

  private async read(ids: readonly string[], keep: boolean): Promise<Map<string, MemoryRecord>> {
    const out = new Map<string, MemoryRecord>();
    let todo = ids;
    while (todo.length > 0) {
      const written = new Set<string>();
      this.readsInFlight.add(written);
      let loaded: MemoryRecord[];
      try {
        loaded = await (this.loader as RecordLoader)(todo);
      } finally {
        this.readsInFlight.delete(written);
      }
      for (const record of loaded) {
        if (written.has(record.id) || !this.summaries.has(record.id)) continue;
        const cached = this.cache.get(record.id);
        if (cached) out.set(record.id, cached);
        else {
          out.set(record.id, record);
          if (keep) this.cache.set(record.id, record);
        }
      }
      todo = todo.filter((id) => written.has(id) && this.summaries.has(id) && !this.cache.has(id) && !out.has(id));
    }
    return out;
  }

  private setSummary(summary: RecordSummary): void {
    const previous = this.summaries.get(summary.id);
    if (previous) {
      if (restricted(previous)) this.restrictedCount--;
      this.summaries.delete(summary.id);
    }
    this.summaries.set(summary.id, summary);
    if (restricted(summary)) this.restrictedCount++;
  }

  private noteWrite(id: string): void {
    for (const written of this.readsInFlight) written.add(id);
  }

  /**
   * Evicts the least recently read records beyond the limit, in a later task: a caller that awaited `preload`
   * reads its records before any task boundary, so they are never evicted under it.
   */
  private scheduleTrim(): void {
    if (this.resident || this.trimScheduled || this.cache.size <= this.cacheLimit) return;
    this.trimScheduled = true;
    setTimeout(() => {
      this.trimScheduled = false;
      let excess = this.cache.size - this.cacheLimit;
      for (const id of this.cache.keys()) {
        if (excess <= 0) break;
        if (this.held.has(id) || this.inUse.has(id)) continue;
        this.cache.delete(id);
        excess--;
      }
    }, 0);
  }

  /** Fills an empty table with every record, resident for good (stores without by-id reads, legacy duplicates). */
  fillResident(records: readonly MemoryRecord[]): void {
    this.resident = true;
    for (const record of records) this.set(record);
    this.cacheLimit = Infinity;
  }
}
