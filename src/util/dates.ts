/** Dates as callers may give them (epoch ms, Date, ISO-8601), read into epoch ms. */
import { invalidInput } from '../errors.js';
import { describeValue } from './describe.js';

/** The range of a JavaScript Date: ±100,000,000 days around 1970 (ECMA-262 TimeClip). */
const MAX_EPOCH_MS = 8.64e15;

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
    throw invalidInput(`${field} is not a valid date (epoch ms within ±8.64e15, a Date or an ISO-8601 string): ${describeValue(value)}`);
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
