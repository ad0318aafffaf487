/** Stored memories for tests that build records directly, without an engine. */
import type { MemoryRecord } from '../../../src/types.js';

/** A record with the fields a new memory gets by default (created at 0, text "text of <id>"); `extra` overrides any. */
export function memoryRecord(id: string, extra: Partial<MemoryRecord> = {}): MemoryRecord {
  return { id, text: `text of ${id}`, createdAt: 0, priority: 1, pinned: false, tags: [], accessCount: 0, ...extra };
}
