/**
 * Validation and normalisation of what callers hand in: MemoryInput → MemoryRecord, patches, imported
 * records. Everything is checked before anything is stored; a problem throws INVALID_INPUT naming the
 * field and the item.
 */
import { invalidInput } from '../errors.js';
import type { MemoryInput, MemoryPatch, MemoryRecord } from '../types.js';

export interface RecordLimits {
  /** Longest accepted text, in UTF-16 code units. */
  maxTextLength: number;
}

/** Epoch ms from a number, an ISO-8601 (or Date.parse-able) string or a Date. */
export function toEpochMs(value: unknown, field: string): number {
  const ms =
    typeof value === 'number' ? value
    : typeof value === 'string' ? (value.trim() === '' ? NaN : Date.parse(value))
    : value instanceof Date ? value.getTime()
    : NaN;
  if (!Number.isFinite(ms)) throw invalidInput(`${field} is not a valid date: ${describe(value)}`);
  return ms;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix time in ms, then random bits. Ids made later sort later, so the
 * store's indexes on ids grow at their end; random (v4) ids put each new memory on a random index page, so a
 * large write rewrites most of the index (docs/worker.md).
 */
export function newId(): string {
  const bytes = new Uint8Array(16);
  const c = globalThis.crypto;
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  for (let i = 5, ms = Date.now(); i >= 0; i--, ms = Math.floor(ms / 256)) bytes[i] = ms % 256;
  bytes[6] = 0x70 | (bytes[6]! & 0x0f); // version 7
  bytes[8] = 0x80 | (bytes[8]! & 0x3f); // RFC 9562 variant
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** True when `next` adds a memory (no `previous`) or changes what the lexical index reads: its text or tags. */
export function changesIndexed(previous: Pick<MemoryRecord, 'text' | 'tags'> | undefined, next: Pick<MemoryRecord, 'text' | 'tags'>): boolean {
  return !previous || previous.text !== next.text || previous.tags.length !== next.tags.length || previous.tags.some((t, i) => t !== next.tags[i]);
}

export function checkId(id: unknown, where: string): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > 512) {
    throw invalidInput(`${where}: id must be a non-empty string of at most 512 characters, got ${describe(id)}`);
  }
  return id;
}

/** A new record from an input. `now` fills createdAt. */
export function recordFromInput(input: unknown, now: number, limits: RecordLimits, where = 'memory'): MemoryRecord {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidInput(`${where} must be an object with a text field, got ${describe(input)}`);
  }
  const value = input as MemoryInput;
  const record: MemoryRecord = {
    id: value.id === undefined ? newId() : checkId(value.id, where),
    text: checkText(value.text, limits, where),
    createdAt: value.createdAt === undefined ? now : toEpochMs(value.createdAt, `${where}.createdAt`),
    priority: value.priority === undefined ? 1 : checkPriority(value.priority, where),
    pinned: value.pinned === undefined ? false : checkBoolean(value.pinned, `${where}.pinned`),
    tags: value.tags === undefined ? [] : checkTags(value.tags, where),
    accessCount: 0,
  };
  applyOptionalFields(record, value, where);
  return record;
}

/** A record as exported earlier (bookkeeping kept when valid), or a plain input. */
export function recordFromImport(input: unknown, now: number, limits: RecordLimits, where: string): MemoryRecord {
  const record = recordFromInput(input, now, limits, where);
  const value = input as Partial<MemoryRecord>;
  if (value.accessCount !== undefined) {
    if (!Number.isInteger(value.accessCount) || value.accessCount < 0) throw invalidInput(`${where}.accessCount must be an integer ≥ 0`);
    record.accessCount = value.accessCount;
  }
  if (value.lastAccessedAt !== undefined) record.lastAccessedAt = toEpochMs(value.lastAccessedAt, `${where}.lastAccessedAt`);
  if (value.updatedAt !== undefined) record.updatedAt = toEpochMs(value.updatedAt, `${where}.updatedAt`);
  if (value.supersededBy !== undefined) record.supersededBy = checkId(value.supersededBy, `${where}.supersededBy`);
  return record;
}

/** A copy of `record` with `patch` applied (null clears an optional field). */
export function applyPatch(record: MemoryRecord, patch: unknown, now: number, limits: RecordLimits): MemoryRecord {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw invalidInput(`patch must be an object, got ${describe(patch)}`);
  }
  const p = patch as MemoryPatch & { id?: unknown };
  if ('id' in p && p.id !== undefined && p.id !== record.id) throw invalidInput('patch cannot change a memory id');
  const where = `patch for "${record.id}"`;
  const next: MemoryRecord = { ...cloneRecord(record), updatedAt: now };
  if (p.text !== undefined) next.text = checkText(p.text, limits, where);
  if (p.createdAt !== undefined) next.createdAt = p.createdAt === null ? record.createdAt : toEpochMs(p.createdAt, `${where}.createdAt`);
  if (p.priority !== undefined) next.priority = p.priority === null ? 1 : checkPriority(p.priority, where);
  if (p.pinned !== undefined) next.pinned = p.pinned === null ? false : checkBoolean(p.pinned, `${where}.pinned`);
  if (p.tags !== undefined) next.tags = p.tags === null ? [] : checkTags(p.tags, where);
  for (const key of OPTIONAL_KEYS) {
    if (p[key] === null) delete next[key];
  }
  applyOptionalFields(next, p as MemoryInput, where);
  return next;
}

/** A deep copy safe to hand out: callers can never mutate engine state through it. */
export function cloneRecord(record: MemoryRecord): MemoryRecord {
  const copy: MemoryRecord = { ...record, tags: record.tags.slice() };
  if (record.meta !== undefined) copy.meta = cloneMeta(record.meta);
  return copy;
}

/** A flat meta of primitives (the usual case: a thread id, a speaker) is copied directly: structuredClone is far slower. */
function cloneMeta(meta: Record<string, unknown>): Record<string, unknown> {
  for (const key in meta) {
    const value = meta[key];
    if (typeof value === 'object' && value !== null) return structuredClone(meta);
  }
  return Object.assign({}, meta);
}

const OPTIONAL_KEYS = ['project', 'scope', 'kind', 'validUntil', 'meta'] as const;

function applyOptionalFields(record: MemoryRecord, value: MemoryInput, where: string): void {
  for (const key of ['project', 'scope', 'kind'] as const) {
    const v = value[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw invalidInput(`${where}.${key} must be a string, got ${describe(v)}`);
    record[key] = v;
  }
  if (value.validUntil !== undefined && value.validUntil !== null) {
    record.validUntil = toEpochMs(value.validUntil, `${where}.validUntil`);
  }
  if (value.meta !== undefined && value.meta !== null) record.meta = checkMeta(value.meta, where);
}

function checkText(text: unknown, limits: RecordLimits, where: string): string {
  if (typeof text !== 'string') throw invalidInput(`${where}.text must be a string, got ${describe(text)}`);
  if (text.trim().length === 0) throw invalidInput(`${where}.text is empty`);
  if (text.length > limits.maxTextLength) {
    throw invalidInput(`${where}.text is ${text.length} characters; the limit is ${limits.maxTextLength} (engine option maxTextLength)`);
  }
  return text;
}

function checkPriority(priority: unknown, where: string): number {
  if (typeof priority !== 'number' || !(priority >= 1 && priority <= 2)) {
    throw invalidInput(`${where}.priority must be a number from 1 to 2, got ${describe(priority)}`);
  }
  return priority;
}

function checkBoolean(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw invalidInput(`${field} must be a boolean, got ${describe(value)}`);
  return value;
}

function checkTags(tags: unknown, where: string): string[] {
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) {
    throw invalidInput(`${where}.tags must be an array of strings, got ${describe(tags)}`);
  }
  return [...new Set(tags as string[])];
}

function checkMeta(meta: unknown, where: string): Record<string, unknown> {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    throw invalidInput(`${where}.meta must be a plain object, got ${describe(meta)}`);
  }
  try {
    // Memories cross the worker boundary and land in a database: meta must be structured-clone safe.
    return structuredClone(meta) as Record<string, unknown>;
  } catch (error) {
    throw invalidInput(`${where}.meta cannot be stored (${error instanceof Error ? error.message : String(error)})`);
  }
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `a ${value.length}-character string` : JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : 'a Date';
  return Array.isArray(value) ? 'an array' : 'an object';
}
