/**
 * Validation and normalisation of what callers hand in: MemoryInput → MemoryRecord, patches, imported
 * records. Everything is checked before anything is stored; a problem throws INVALID_INPUT naming the
 * field and the item.
 */
import { MAX_SESSIONS } from '../search/reinforce.js';
import { invalidInput } from '../errors.js';
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

/** The range of a JavaScript Date: ±100,000,000 days around 1970 (ECMA-262 TimeClip). */
export const MAX_EPOCH_MS = 8.64e15;

// YYYY-MM-DD, optionally THH:MM, :SS, a fraction of a second (1 to 9 digits, read to the ms) and Z or ±HH:MM.
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * Epoch ms from a finite number within ±8.64e15, a valid Date, or an ISO-8601 string (`ISO_DATE`: a real calendar
 * date and time; without an offset, a date alone is UTC and a date with a time is local time, as in `Date.parse`).
 * Anything else throws INVALID_INPUT naming `field`.
 */
export function toEpochMs(value: unknown, field: string): number {
  const ms =
    typeof value === 'number' ? value
    : typeof value === 'string' ? parseIsoDate(value)
    : value instanceof Date ? value.getTime()
    : NaN;
  if (!Number.isFinite(ms) || Math.abs(ms) > MAX_EPOCH_MS) {
    throw invalidInput(`${field} is not a valid date (epoch ms within ±8.64e15, a Date or an ISO-8601 string): ${describe(value)}`);
  }
  return ms;
}

/** Epoch ms of a strict ISO-8601 string, or NaN. Fields out of range ('2024-02-30', '25:00') give NaN. */
function parseIsoDate(text: string): number {
  const m = ISO_DATE.exec(text);
  if (!m) return NaN;
  const [year, month, day, hour = 0, minute = 0, second = 0] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v)));
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const offset = m[8];
  if (hour! > 23 || minute! > 59 || second! > 59) return NaN;
  // The calendar check: a date that Date.UTC rolls over (Feb 30 → Mar 1) is not a real date. setUTCFullYear, not
  // Date.UTC, so that years 0-99 are not read as 1900-1999.
  const utc = new Date(0);
  utc.setUTCFullYear(year!, month! - 1, day!);
  if (utc.getUTCFullYear() !== year || utc.getUTCMonth() !== month! - 1 || utc.getUTCDate() !== day) return NaN;
  if (m[4] !== undefined && offset === undefined) {
    const local = new Date(0);
    local.setFullYear(year!, month! - 1, day!);
    local.setHours(hour!, minute!, second!, ms);
    return local.getTime();
  }
  utc.setUTCHours(hour!, minute!, second!, ms);
  if (offset === undefined || offset === 'Z') return utc.getTime();
  const offsetHours = Number(offset.slice(1, 3));
  const offsetMinutes = Number(offset.slice(4, 6));
  if (offsetHours > 23 || offsetMinutes > 59) return NaN;
  return utc.getTime() - (offset[0] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
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

/**
 * Ids are non-empty, at most 512 UTF-16 code units, and well-formed UTF-16: SQLite stores UTF-8, where a lone
 * surrogate cannot be written, so two ids differing only in one would read back as one id.
 */
export function checkId(id: unknown, where: string): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > 512) {
    throw invalidInput(`${where}: id must be a non-empty string of at most 512 characters, got ${describe(id)}`);
  }
  if (!isWellFormed(id)) throw invalidInput(`${where}: id ${describe(id)} is not well-formed UTF-16 (it holds a lone surrogate)`);
  return id;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** String.prototype.isWellFormed (ES2024: Node 20, Chrome 111, Safari 16.4, Firefox 119), else the same test by regex. */
export function isWellFormed(text: string): boolean {
  const native = (text as string & { isWellFormed?: () => boolean }).isWellFormed;
  return typeof native === 'function' ? native.call(text) : !LONE_SURROGATE.test(text);
}

/** Throws INVALID_INPUT when `value` holds a lone surrogate (see checkId). */
function checkWellFormed(value: string, field: string): string {
  if (!isWellFormed(value)) throw invalidInput(`${field} is not well-formed UTF-16 (it holds a lone surrogate): ${describe(value)}`);
  return value;
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
    tags: value.tags === undefined ? [] : checkTags(value.tags, limits, where),
    accessCount: 0,
  };
  applyOptionalFields(record, value, limits, where);
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
  if (p.tags !== undefined) next.tags = p.tags === null ? [] : checkTags(p.tags, limits, where);
  for (const key of OPTIONAL_KEYS) {
    if (p[key] === null) delete next[key];
  }
  applyOptionalFields(next, p as MemoryInput, limits, where);
  return next;
}

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

const OPTIONAL_KEYS = ['project', 'scope', 'kind', 'validUntil', 'quality', 'meta', 'core'] as const;

function applyOptionalFields(record: MemoryRecord, value: MemoryInput, limits: RecordLimits, where: string): void {
  for (const key of ['project', 'scope', 'kind'] as const) {
    const v = value[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw invalidInput(`${where}.${key} must be a string, got ${describe(v)}`);
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
  if (typeof text !== 'string') throw invalidInput(`${where}.text must be a string, got ${describe(text)}`);
  if (text.trim().length === 0) throw invalidInput(`${where}.text is empty`);
  if (text.length > limits.maxTextLength) {
    throw invalidInput(`${where}.text is ${text.length} characters; the limit is ${limits.maxTextLength} (engine option limits.maxTextLength)`);
  }
  return checkWellFormed(text, `${where}.text`);
}

function checkPriority(priority: unknown, where: string): number {
  if (typeof priority !== 'number' || !(priority >= 1 && priority <= 2)) {
    throw invalidInput(`${where}.priority must be a number from 1 to 2, got ${describe(priority)}`);
  }
  return priority;
}

/** A quality score is a judgement on a fixed scale: a finite number from 0 to 1 (-0 is kept as 0, as SQLite would). */
function checkQuality(quality: unknown, where: string): number {
  if (typeof quality !== 'number' || !(quality >= 0 && quality <= 1)) {
    throw invalidInput(`${where}.quality must be a number from 0 to 1, got ${describe(quality)}`);
  }
  return quality === 0 ? 0 : quality;
}

function checkBoolean(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw invalidInput(`${field} must be a boolean, got ${describe(value)}`);
  return value;
}

function checkTags(tags: unknown, limits: RecordLimits, where: string): string[] {
  if (!Array.isArray(tags)) throw invalidInput(`${where}.tags must be an array of strings, got ${describe(tags)}`);
  if (tags.length > limits.maxTags) {
    throw invalidInput(`${where}.tags has ${tags.length} tags; the limit is ${limits.maxTags} (engine option limits.maxTags)`);
  }
  // An index loop, not some/every: those skip the holes of a sparse array.
  for (let i = 0; i < tags.length; i++) {
    const tag: unknown = tags[i];
    if (typeof tag !== 'string') throw invalidInput(`${where}.tags[${i}] must be a string, got ${describe(tag)}`);
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
  if (!isPlainObject(meta)) throw invalidInput(`${field} must be a plain object, got ${describe(meta)}`);
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

export function describe(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `a ${value.length}-character string` : JSON.stringify(value);
  if (value === null || typeof value !== 'object') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : 'a Date';
  return Array.isArray(value) ? 'an array' : 'an object';
}
