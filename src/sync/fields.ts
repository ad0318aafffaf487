/**
 * What of a memory syncs, and how each field merges: most by last writer (hybrid logical clock), the learned
 * state by maximum (counts and stability only grow, so the larger value is the more informed one). Vectors never
 * sync (each device embeds with its own model); supersede and retrieval sessions are local.
 */
import type { MemoryRecord } from '../types.js';

export const LWW_FIELDS = ['text', 'createdAt', 'priority', 'pinned', 'project', 'scope', 'tags', 'kind', 'validUntil', 'quality', 'meta', 'updatedAt', 'supersededBy'] as const;
export const MAX_FIELDS = ['accessCount', 'lastAccessedAt', 'stability', 'core'] as const;
export const SYNCED_FIELDS: readonly SyncedField[] = [...LWW_FIELDS, ...MAX_FIELDS];
export type SyncedField = (typeof LWW_FIELDS)[number] | (typeof MAX_FIELDS)[number];
const MAX_SET: ReadonlySet<string> = new Set(MAX_FIELDS);

/** A field's clock (the HLC of the write that set it) and a hash of its value (to see what a local write changed). */
export type FieldClocks = Partial<Record<SyncedField, [hlc: string, hash: string]>>;

/** A short hash of a field's value (FNV-1a twice over its JSON): tells a changed field from an unchanged one. */
export function valueHash(value: unknown): string {
  const text = value === undefined ? '' : JSON.stringify(value);
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return a.toString(36) + b.toString(36) + text.length.toString(36);
}

/** The fields of `record` whose value differs from what `clocks` last saw, as sent (null: the field is absent). */
export function changedFields(record: MemoryRecord, clocks: FieldClocks): Partial<Record<SyncedField, unknown>> {
  const changed: Partial<Record<SyncedField, unknown>> = {};
  for (const field of SYNCED_FIELDS) {
    if (clocks[field]?.[1] !== valueHash(record[field])) changed[field] = record[field] ?? null;
  }
  return changed;
}

function larger(a: unknown, b: unknown): unknown {
  if (a === undefined || a === null) return b;
  if (b === undefined || b === null) return a;
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === true || b === true;
  return (a as number) >= (b as number) ? a : b;
}

/**
 * Merges one received entry's fields into `record` and `clocks` (both changed in place): a last-writer field takes
 * the value when the entry's clock is later than the field's, a learned field takes the larger value.
 */
export function mergeFields(record: MemoryRecord, clocks: FieldClocks, hlc: string, fields: Record<string, unknown>): void {
  const target = record as unknown as Record<string, unknown>;
  for (const field of SYNCED_FIELDS) {
    if (!(field in fields)) continue;
    const incoming = fields[field];
    const current = clocks[field]?.[0];
    let value: unknown;
    if (MAX_SET.has(field)) value = larger(target[field], incoming);
    else if (current === undefined || hlc > current) value = incoming;
    else continue;
    if (value === null || value === undefined || (field === 'core' && value === false)) delete target[field];
    else target[field] = value;
    clocks[field] = [current === undefined || hlc > current ? hlc : current, valueHash(target[field])];
  }
}
