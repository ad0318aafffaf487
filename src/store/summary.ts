/** A record's summary (store.ts `RecordSummary`): what every store and the engine's record table derive alike. */
import type { MemoryRecord } from '../types.js';
import type { RecordSummary } from './store.js';

/** The summary of `record`; optional fields are absent rather than undefined, as on a loaded record. */
export function summarize(record: MemoryRecord): RecordSummary {
  const summary: RecordSummary = { id: record.id, createdAt: record.createdAt, tags: record.tags };
  if (record.project !== undefined) summary.project = record.project;
  if (record.scope !== undefined) summary.scope = record.scope;
  if (record.kind !== undefined) summary.kind = record.kind;
  if (record.validUntil !== undefined) summary.validUntil = record.validUntil;
  if (record.supersededBy !== undefined) summary.supersededBy = record.supersededBy;
  if (record.core) summary.core = true;
  const thread = record.meta?.thread;
  if (typeof thread === 'string' || typeof thread === 'number') summary.thread = thread;
  return summary;
}
