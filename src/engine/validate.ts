/**
 * Validation and normalisation of what callers hand in: MemoryInput → MemoryRecord, patches, imported
 * records. Everything is checked before anything is stored; a problem throws INVALID_INPUT naming the
 * field and the item.
 */
import { MAX_SESSIONS } from '../search/reinforce.js';
import { EngramError, ErrorCode, invalidInput } from '../errors.js';
import { toEpochMs } from '../util/dates.js';
import { describeValue } from '../util/describe.js';
import { checkId, isWellFormed, newId } from '../util/ids.js';
import { checkKnownKeys, keysOf, type KeySet } from '../util/keys.js';
import { cloneRecord } from './copy.js';
import type { MemoryInput, MemoryPatch, MemoryRecord } from '../types.js';

/**
 * Every limit on what one memory and one call may hold. The defaults (`defaultRecordLimits`) are documented here
 * once; callers change them through the engine option `limits`. Each is a round number well above ordinary use
 * and well below what makes a record expensive to store, load, index or send between threads.
 */
export interface RecordLimits {
  /** Longest accepted text, in UTF-16 code units. Default 100,000 (about 25,000 tokens). */
  maxTextLength: number;
  /** Tags on one memory (counted before duplicates are dropped). Default 256. */
  maxTags: number;
  /** Longest tag, in UTF-16 code units. Default 256. */
  maxTagLength: number;
  /** Longest `project`, `scope` or `kind`, in UTF-16 code units. Default 256 (they are labels, matched exactly). */
  maxLabelLength: number;
  /** Largest `meta`, as UTF-8 bytes of its JSON. Default 65,536 (64 kB: a small document, not a file store). */
  maxMetaBytes: number;
  /** Deepest `meta` nesting; the meta object itself is depth 1. Default 32 (far below SQLite's JSON limit of 1000). */
  maxMetaDepth: number;
  /**
   * Memories per `add` or `import` call. Default 10,000: one call is one atomic store write and one embedding job,
   * so a larger set is split by the caller into calls of at most this many (each call is atomic on its own).
   */
  maxRecordsPerCall: number;
}

export const defaultRecordLimits: Readonly<RecordLimits> = Object.freeze({
  maxTextLength: 100_000,
  maxTags: 256,
  maxTagLength: 256,
  maxLabelLength: 256,
  maxMetaBytes: 65_536,
  maxMetaDepth: 32,
  maxRecordsPerCall: 10_000,
});

/** Throws INVALID_INPUT when `value` holds a lone surrogate (see checkId). */
function checkWellFormed(value: string, field: string): string {
  if (!isWellFormed(value)) throw invalidInput(`${field} is not well-formed UTF-16 (it holds a lone surrogate): ${describeValue(value)}`);
  return value;
}

/**
 * Below this, a positive epoch-ms `createdAt` is a date before 3 March 1973: for a memory, that is a time in seconds
 * (`1714000000` is April 2024 in seconds and 20 January 1970 in ms), refused rather than stored 50 years early.
 */
export const SECONDS_LIKE_BELOW_MS = 1e11;

/** `toEpochMs`, refusing a number that can only be seconds (0 < n < SECONDS_LIKE_BELOW_MS). */
function createdAtOf(value: unknown, field: string): number {
  const ms = toEpochMs(value, field);
  if (typeof value === 'number' && ms > 0 && ms < SECONDS_LIKE_BELOW_MS) {
    throw invalidInput(`${field} is ${ms}, which looks like seconds: dates are epoch milliseconds (${ms} s is ${new Date(ms * 1000).toISOString().slice(0, 10)}; pass ${ms * 1000})`, { field, value: ms });
  }
  return ms;
}

/** Every field of a `MemoryInput` (add, and what formation writes): any other is refused. */
export const MEMORY_INPUT_FIELDS = keysOf<MemoryInput>({
  id: true,
  text: true,
  createdAt: true,
  priority: true,
  pinned: true,
  project: true,
  scope: true,
  tags: true,
  kind: true,
  validUntil: true,
  quality: true,
  core: true,
  meta: true,
} satisfies KeySet<MemoryInput>);

/** Every field of a `MemoryRecord` (import: records as `export` gave them): an input's, and the bookkeeping. */
export const MEMORY_RECORD_FIELDS: readonly (keyof MemoryRecord)[] = Object.freeze([
  ...(MEMORY_INPUT_FIELDS satisfies readonly (keyof MemoryRecord)[]),
  ...keysOf<Omit<MemoryRecord, keyof MemoryInput>>({
    supersededBy: true,
    accessCount: true,
    lastAccessedAt: true,
    updatedAt: true,
    stability: true,
    sessions: true,
  } satisfies KeySet<Omit<MemoryRecord, keyof MemoryInput>>),
]);

/** Names people reach for: `{ tag }`, `{ content }`. */
const FIELD_ALIASES = { tag: 'tags', content: 'text', body: 'text', date: 'createdAt', timestamp: 'createdAt', created: 'createdAt', metadata: 'meta', type: 'kind', expires: 'validUntil', expiresat: 'validUntil' };

/**
 * A new record from an input. `now` fills createdAt. `as: 'record'` (import) takes the fields of a stored record and
 * its createdAt as it was stored, seconds-like or not, so an export always imports again.
 */
export function recordFromInput(input: unknown, now: number, limits: RecordLimits, where = 'memory', as: 'input' | 'record' = 'input'): MemoryRecord {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidInput(`${where} must be an object with a text field, got ${describeValue(input)}`);
  }
  checkKnownKeys(input, as === 'input' ? MEMORY_INPUT_FIELDS : MEMORY_RECORD_FIELDS, { noun: 'field', prefix: `${where}.`, aliases: FIELD_ALIASES });
  const value = input as MemoryInput;
  const createdAt = as === 'input' ? createdAtOf : toEpochMs;
  const record: MemoryRecord = {
    id: value.id === undefined ? newId() : checkId(value.id, where),
    text: checkText(value.text, limits, where),
    createdAt: value.createdAt === undefined ? now : createdAt(value.createdAt, `${where}.createdAt`),
    priority: value.priority === undefined ? 1 : checkPriority(value.priority, where),
    pinned: value.pinned === undefined ? false : checkBoolean(value.pinned, `${where}.pinned`),
    tags: value.tags === undefined ? [] : checkTags(value.tags, limits, where),
    accessCount: 0,
  };
  applyOptionalFields(record, value, limits, where);
  return record;
}

/** A record as exported earlier (bookkeeping kept when valid), or a plain input. */
export function recordFromImport(input: unknown, now: number, limits: RecordLimits, where: string): MemoryRecord {
  const record = recordFromInput(input, now, limits, where, 'record');
  const value = input as Partial<MemoryRecord>;
  if (value.accessCount !== undefined) {
    if (!Number.isInteger(value.accessCount) || value.accessCount < 0) throw invalidInput(`${where}.accessCount must be an integer ≥ 0`);
    record.accessCount = value.accessCount;
  }
  if (value.lastAccessedAt !== undefined) record.lastAccessedAt = toEpochMs(value.lastAccessedAt, `${where}.lastAccessedAt`);
  if (value.updatedAt !== undefined) record.updatedAt = toEpochMs(value.updatedAt, `${where}.updatedAt`);
  if (value.supersededBy !== undefined) record.supersededBy = checkId(value.supersededBy, `${where}.supersededBy`);
  if (value.stability !== undefined) {
    if (typeof value.stability !== 'number' || !(value.stability >= 0 && value.stability <= 1)) throw invalidInput(`${where}.stability must be a number from 0 to 1`);
    record.stability = value.stability;
  }
  if (value.sessions !== undefined) {
    const sessions: unknown = value.sessions;
    if (!Array.isArray(sessions) || sessions.length > MAX_SESSIONS || sessions.some((s) => typeof s !== 'string' || s === '' || s.length > 512 || !isWellFormed(s))) {
      throw invalidInput(`${where}.sessions must be at most ${MAX_SESSIONS} non-empty strings`);
    }
    record.sessions = [...new Set(sessions as string[])];
  }
  return record;
}

/** A copy of `record` with `patch` applied (null clears an optional field). */
export function applyPatch(record: MemoryRecord, patch: unknown, now: number, limits: RecordLimits): MemoryRecord {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw invalidInput(`patch must be an object, got ${describeValue(patch)}`);
  }
  checkKnownKeys(patch, MEMORY_INPUT_FIELDS, { noun: 'field', prefix: 'patch.', aliases: FIELD_ALIASES });
  const p = patch as MemoryPatch & { id?: unknown };
  if ('id' in p && p.id !== undefined && p.id !== record.id) throw invalidInput('patch cannot change a memory id');
  const where = `patch for "${record.id}"`;
  const next: MemoryRecord = { ...cloneRecord(record), updatedAt: now };
  if (p.text !== undefined) next.text = checkText(p.text, limits, where);
  if (p.createdAt !== undefined) next.createdAt = p.createdAt === null ? record.createdAt : createdAtOf(p.createdAt, `${where}.createdAt`);
  if (p.priority !== undefined) next.priority = p.priority === null ? 1 : checkPriority(p.priority, where);
  if (p.pinned !== undefined) next.pinned = p.pinned === null ? false : checkBoolean(p.pinned, `${where}.pinned`);
  if (p.tags !== undefined) next.tags = p.tags === null ? [] : checkTags(p.tags, limits, where);
  for (const key of OPTIONAL_KEYS) {
    if (p[key] === null) delete next[key];
  }
  applyOptionalFields(next, p as MemoryInput, limits, where);
  return next;
}

const OPTIONAL_KEYS = ['project', 'scope', 'kind', 'validUntil', 'quality', 'meta', 'core'] as const;

function applyOptionalFields(record: MemoryRecord, value: MemoryInput, limits: RecordLimits, where: string): void {
  for (const key of ['project', 'scope', 'kind'] as const) {
    const v = value[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw invalidInput(`${where}.${key} must be a string, got ${describeValue(v)}`);
    if (v.length > limits.maxLabelLength) {
      throw invalidInput(`${where}.${key} is ${v.length} characters; the limit is ${limits.maxLabelLength} (engine option limits.maxLabelLength)`);
    }
    record[key] = checkWellFormed(v, `${where}.${key}`);
  }
  if (value.validUntil !== undefined && value.validUntil !== null) {
    record.validUntil = toEpochMs(value.validUntil, `${where}.validUntil`);
  }
  if (value.quality !== undefined && value.quality !== null) record.quality = checkQuality(value.quality, where);
  // Absent rather than false, as a loaded record has it.
  if (value.core !== undefined && value.core !== null) {
    if (checkBoolean(value.core, `${where}.core`)) record.core = true;
    else delete record.core;
  }
  if (value.meta !== undefined && value.meta !== null) record.meta = checkMeta(value.meta, limits, `${where}.meta`);
}

/**
 * Text is well-formed UTF-16: SQLite stores UTF-8, where a lone surrogate cannot survive (it would read back as
 * U+FFFD), so the same memory would differ between stores.
 */
function checkText(text: unknown, limits: RecordLimits, where: string): string {
  if (typeof text !== 'string') throw invalidInput(`${where}.text must be a string, got ${describeValue(text)}`);
  if (text.trim().length === 0) throw invalidInput(`${where}.text is empty`);
  if (text.length > limits.maxTextLength) {
    throw invalidInput(`${where}.text is ${text.length} characters; the limit is ${limits.maxTextLength} (engine option limits.maxTextLength)`);
  }
  return checkWellFormed(text, `${where}.text`);
}

function checkPriority(priority: unknown, where: string): number {
  if (typeof priority !== 'number' || !(priority >= 1 && priority <= 2)) {
    throw invalidInput(`${where}.priority must be a number from 1 to 2, got ${describeValue(priority)}`);
  }
  return priority;
}

/** A quality score is a judgement on a fixed scale: a finite number from 0 to 1 (-0 is kept as 0, as SQLite would). */
function checkQuality(quality: unknown, where: string): number {
  if (typeof quality !== 'number' || !(quality >= 0 && quality <= 1)) {
    throw invalidInput(`${where}.quality must be a number from 0 to 1, got ${describeValue(quality)}`);
  }
  return quality === 0 ? 0 : quality;
}

function checkBoolean(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw invalidInput(`${field} must be a boolean, got ${describeValue(value)}`);
  return value;
}

function checkTags(tags: unknown, limits: RecordLimits, where: string): string[] {
  if (!Array.isArray(tags)) throw invalidInput(`${where}.tags must be an array of strings, got ${describeValue(tags)}`);
  if (tags.length > limits.maxTags) {
    throw invalidInput(`${where}.tags has ${tags.length} tags; the limit is ${limits.maxTags} (engine option limits.maxTags)`);
  }
  // An index loop, not some/every: those skip the holes of a sparse array.
  for (let i = 0; i < tags.length; i++) {
    const tag: unknown = tags[i];
    if (typeof tag !== 'string') throw invalidInput(`${where}.tags[${i}] must be a string, got ${describeValue(tag)}`);
    if (tag.length > limits.maxTagLength) {
      throw invalidInput(`${where}.tags[${i}] is ${tag.length} characters; the limit is ${limits.maxTagLength} (engine option limits.maxTagLength)`);
    }
    checkWellFormed(tag, `${where}.tags[${i}]`);
  }
  return [...new Set(tags as string[])];
}

/**
 * Meta must be JSON data: plain objects, arrays, well-formed strings, finite numbers, booleans and null, at most
 * `maxMetaDepth` deep and `maxMetaBytes` as JSON. It is checked here, once, so every store gets the same value
 * (the SQLite store keeps it as JSON text); what is kept is the JSON round trip, exactly what SQLite gives back
 * (-0 becomes 0, a property set to undefined is dropped; undefined in an array is refused).
 */
function checkMeta(meta: unknown, limits: RecordLimits, field: string): Record<string, unknown> {
  if (!isPlainObject(meta)) throw invalidInput(`${field} must be a plain object, got ${describeValue(meta)}`);
  // A lower bound on the JSON size, counted while walking: shared sub-objects repeat in JSON, so a small graph
  // can stand for a huge document; the walk stops as soon as the bound passes the limit.
  const budget = { bytes: 0 };
  checkJsonValue(meta, field, 1, new Set(), budget, limits);
  const json = JSON.stringify(meta);
  const bytes = utf8Length(json);
  if (bytes > limits.maxMetaBytes) {
    throw invalidInput(`${field} is ${bytes} bytes as JSON; the limit is ${limits.maxMetaBytes} (engine option limits.maxMetaBytes)`);
  }
  return JSON.parse(json) as Record<string, unknown>;
}

function checkJsonValue(
  value: unknown,
  path: string,
  depth: number,
  ancestors: Set<object>,
  budget: { bytes: number },
  limits: RecordLimits,
): void {
  budget.bytes += typeof value === 'string' ? value.length + 2 : 1;
  if (budget.bytes > limits.maxMetaBytes) {
    throw invalidInput(`${path} makes meta larger than ${limits.maxMetaBytes} bytes as JSON (engine option limits.maxMetaBytes)`);
  }
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'string') {
    checkWellFormed(value, path);
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidInput(`${path} must be JSON data; ${value} is not a finite number`);
    return;
  }
  const isArray = Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype;
  if (!isArray && !isPlainObject(value)) {
    throw invalidInput(`${path} must be JSON data (a plain object, array, string, finite number, boolean or null), got ${describeKind(value)}`);
  }
  if (ancestors.has(value)) throw invalidInput(`${path} refers back to an enclosing object (a cycle)`);
  if (depth > limits.maxMetaDepth) {
    throw invalidInput(`${path} is nested ${depth} deep; the limit is ${limits.maxMetaDepth} (engine option limits.maxMetaDepth)`);
  }
  ancestors.add(value);
  if (isArray) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw invalidInput(`${path}[${i}] is a hole in a sparse array (not JSON data)`);
      checkJsonValue(value[i], `${path}[${i}]`, depth + 1, ancestors, budget, limits);
    }
  } else {
    if (Object.getOwnPropertySymbols(value).length > 0) throw invalidInput(`${path} has symbol keys (not JSON data)`);
    for (const key of Object.keys(value)) {
      const keyPath = `${path}.${isWellFormed(key) ? key : JSON.stringify(key)}`;
      checkWellFormed(key, `${path}: key ${JSON.stringify(key)}`);
      const item = (value as Record<string, unknown>)[key];
      // A property set to undefined is absent in JSON (and in every store): dropped, as JSON.stringify does.
      if (item === undefined) continue;
      budget.bytes += key.length + 3;
      checkJsonValue(item, keyPath, depth + 1, ancestors, budget, limits);
    }
  }
  ancestors.delete(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describeKind(value: unknown): string {
  if (typeof value === 'bigint') return 'a BigInt';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'undefined') return 'undefined';
  if (Array.isArray(value)) return 'an array subclass';
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
  return name ? `a ${name}` : 'an object';
}

/** UTF-8 bytes of a well-formed string. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4; // a surrogate pair: one 4-byte character
      i++;
    } else bytes += 3;
  }
  return bytes;
}


/** Refuses more than limits.maxRecordsPerCall items in one add or import (the caller splits them into calls). */
export function checkCallSize(count: number, limits: RecordLimits, call: string): void {
  if (count > limits.maxRecordsPerCall) {
    throw invalidInput(`${call} got ${count} memories; the limit is ${limits.maxRecordsPerCall} per call (engine option limits.maxRecordsPerCall): split them into several calls`);
  }
}

/** DUPLICATE_ID when one call names an id twice, or (for `add`) an id that `exists` already. */
export function checkDistinct(batch: readonly MemoryRecord[], exists?: (id: string) => boolean): void {
  const seen = new Set<string>();
  for (const { id } of batch) {
    if (seen.has(id)) throw new EngramError(ErrorCode.DUPLICATE_ID, `id "${id}" appears twice in one call`, { details: { id } });
    seen.add(id);
  }
  for (const { id } of exists ? batch : []) {
    if (exists!(id)) throw new EngramError(ErrorCode.DUPLICATE_ID, `a memory with id "${id}" already exists (use update or import to replace it)`, { details: { id } });
  }
}
