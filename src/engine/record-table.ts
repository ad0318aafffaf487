/**
 * The engine's records by id. Besides the map, it counts records that can be ineligible without any caller
 * filter (an expiry date, or superseded): while there are none and the search has no filter, the legs skip
 * the per-memory eligibility check entirely.
 */
import type { MemoryRecord } from '../types.js';

function restricted(record: MemoryRecord): boolean {
  return record.validUntil !== undefined || record.supersededBy !== undefined;
}

export class RecordTable {
  private readonly map = new Map<string, MemoryRecord>();
  private restrictedCount = 0;

  get size(): number {
    return this.map.size;
  }

  /** True when some record has an expiry date or is superseded. */
  get anyRestricted(): boolean {
    return this.restrictedCount > 0;
  }

  get(id: string): MemoryRecord | undefined {
    return this.map.get(id);
  }

  has(id: string): boolean {
    return this.map.has(id);
  }

  values(): IterableIterator<MemoryRecord> {
    return this.map.values();
  }

  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  set(record: MemoryRecord): void {
    this.delete(record.id);
    this.map.set(record.id, record);
    if (restricted(record)) this.restrictedCount++;
  }

  delete(id: string): boolean {
    const previous = this.map.get(id);
    if (!previous) return false;
    if (restricted(previous)) this.restrictedCount--;
    return this.map.delete(id);
  }
}
