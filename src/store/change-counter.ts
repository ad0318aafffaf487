/**
 * The store's change counter moves when a write changes what the lexical index reads; a lexical snapshot saved at
 * one count is current until it moves (engine/lexical-persistence.ts).
 */
import type { MemoryRecord } from '../types.js';

/** True when `next` adds a memory (no `previous`) or changes what the lexical index reads: its text or tags. */
export function changesIndexed(previous: Pick<MemoryRecord, 'text' | 'tags'> | undefined, next: Pick<MemoryRecord, 'text' | 'tags'>): boolean {
  return !previous || previous.text !== next.text || previous.tags.length !== next.tags.length || previous.tags.some((t, i) => t !== next.tags[i]);
}
