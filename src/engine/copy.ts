import type { MemoryRecord } from '../types.js';

/** A deep copy safe to hand out: callers can never mutate engine state through it. */
export function cloneRecord(record: MemoryRecord): MemoryRecord {
  const copy: MemoryRecord = { ...record, tags: record.tags.slice() };
  if (record.meta !== undefined) copy.meta = cloneMeta(record.meta);
  return copy;
}

/**
 * A flat meta of primitives (the usual case: a thread id, a speaker) is copied directly: structuredClone is far
 * slower. Spread, not Object.assign: an own "__proto__" key (valid JSON) must stay a key, not set a prototype.
 */
function cloneMeta(meta: Record<string, unknown>): Record<string, unknown> {
  for (const key in meta) {
    const value = meta[key];
    if (typeof value === 'object' && value !== null) return structuredClone(meta);
  }
  return { ...meta };
}
