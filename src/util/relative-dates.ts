/**
 * Relative dates in English text ("yesterday", "last weekend", "in two days", "3 months ago", "on Monday") resolved
 * against the moment the text was said, so a memory read a month later still says when. Dates are UTC calendar
 * dates, as a search's context blocks show them (search/assemble.ts). The phrases are read by chrono-node
 * (chrono-dates.ts), loaded on first use; where it cannot load or fails its shape check, by the short list of
 * phrases below (`findRelativeDates`). Phrases neither reads are left as they are.
 */

import type { ChronoPhrase } from './chrono-dates.js';
import { DAY_MS } from './time.js';

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const NUMBER_WORDS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, couple: 2, few: 3,
};
type Unit = 'day' | 'week' | 'month' | 'year';

const COUNT = String.raw`(\d{1,3}|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)`;
const UNIT = String.raw`(day|week|month|year)s?`;
const WEEKDAY = String.raw`(sunday|monday|tuesday|wednesday|thursday|friday|saturday)`;
// Longest phrases first, so "the day before yesterday" is not read as "yesterday".
const PHRASE = new RegExp(
  String.raw`\b(?:(the day before yesterday)|(the day after tomorrow)|(yesterday)|(today|tonight)|(tomorrow)|${COUNT}\s+${UNIT}\s+ago|in\s+${COUNT}\s+${UNIT}|(last|next|this)\s+(week|month|year)|(last|next)\s+${WEEKDAY})\b`,
  'gi',
);

export interface ResolvedDate {
  /** The phrase as written. */
  phrase: string;
  /** What it means: `YYYY-MM-DD`, `week of YYYY-MM-DD` (its Monday), `YYYY-MM` or `YYYY`. */
  date: string;
}

/** The relative-date phrases of a text and what each means when said at `at` (epoch ms), in order. */
export type DateFinder = (text: string, at: number) => ResolvedDate[];

/** `findRelativeDates` over this file's own phrase list: the fallback when chrono-node is not available. */
export function findRelativeDates(text: string, at: number): ResolvedDate[] {
  const found: ResolvedDate[] = [];
  for (const m of text.matchAll(PHRASE)) {
    const date = resolve(m, at);
    if (date !== null) found.push({ phrase: m[0], date });
  }
  return found;
}

/** `text` with what its relative dates meant at `at` appended: "… last week (last week = week of 2026-11-16)". */
export function resolveRelativeDates(text: string, at: number, find: DateFinder = findRelativeDates): string {
  const found = find(text, at);
  if (found.length === 0) return text;
  return `${text} (${found.map(({ phrase, date }) => `${phrase} = ${date}`).join('; ')})`;
}

let chrono: Promise<DateFinder> | undefined;

/**
 * The finder formation uses: chrono-node's, loaded on first use (a separate chunk in a bundled app), else
 * `findRelativeDates`. A failed load is tried again on the next call.
 */
export function relativeDateFinder(): Promise<DateFinder> {
  chrono ??= import('./chrono-dates.js').then(
    (adapter) => (adapter.chronoShapeOk ? chronoFinder(adapter.parsePhrases) : findRelativeDates),
    () => {
      chrono = undefined;
      return findRelativeDates;
    },
  );
  return chrono;
}

// A weekday or month name alone is a recurring day ("every Monday"), a deadline or another word ("Sun", "May").
const BARE_NAME = /^(?:(?:sun|mon|tue|wed|thu|fri|sat)|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))[a-z]*\.?$/i;
// "for three weeks" is a duration, not a date.
const DURATION = /^(?:for|during)\s/i;
// "now" is when the memory is dated already; a time of day alone is a habit ("runs in the morning").
const BARE_TIME = /^(?:(?:right\s+)?now|morning|afternoon|evening|night|noon|midnight)$/i;
// A year written out: the phrase already says when.
const WRITTEN_YEAR = /\d{4}/;
const WEEK = /\bweeks?\b/i;

function chronoFinder(parse: (text: string, at: number) => ChronoPhrase[]): DateFinder {
  const dateOf = (p: ChronoPhrase, at: number): string | null => {
    if ([BARE_NAME, BARE_TIME, DURATION, WRITTEN_YEAR].some((pattern) => pattern.test(p.phrase))) return null;
    if (WEEK.test(p.phrase)) return weekOf(p.known.day ? Date.UTC(p.year, p.month - 1, p.day) : at);
    if (p.known.day || p.known.weekday || (p.relative && !p.known.month && !p.known.year)) return day(Date.UTC(p.year, p.month - 1, p.day));
    if (p.known.month) {
      // Months are counted from the 1st: chrono moves the 31st of January a month on to the 3rd of March.
      const first = new Date(at);
      const moved = parse(p.phrase, Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), 1, first.getUTCHours()))[0] ?? p;
      return `${String(moved.year).padStart(4, '0')}-${String(moved.month).padStart(2, '0')}`;
    }
    return p.known.year ? String(p.year).padStart(4, '0') : null;
  };
  return (text, at) => {
    const found: ResolvedDate[] = [];
    for (const p of parse(text, at)) {
      const date = dateOf(p, at);
      if (date !== null) found.push({ phrase: p.phrase, date });
    }
    return found;
  };
}

function resolve(m: RegExpMatchArray, at: number): string | null {
  if (m[1]) return day(at - 2 * DAY_MS);
  if (m[2]) return day(at + 2 * DAY_MS);
  if (m[3]) return day(at - DAY_MS);
  if (m[4]) return day(at);
  if (m[5]) return day(at + DAY_MS);
  if (m[6]) return shifted(at, -countOf(m[6]), unitOf(m[7]!));
  if (m[8]) return shifted(at, countOf(m[8]), unitOf(m[9]!));
  if (m[10]) {
    const step = m[10].toLowerCase() === 'last' ? -1 : m[10].toLowerCase() === 'next' ? 1 : 0;
    return shifted(at, step, unitOf(m[11]!));
  }
  if (m[12]) {
    const target = WEEKDAYS.indexOf(m[13]!.toLowerCase());
    const today = new Date(at).getUTCDay();
    // "last Friday": the latest Friday before today; "next Friday": the first after it.
    const back = (today - target + 7) % 7 || 7;
    const ahead = (target - today + 7) % 7 || 7;
    return day(m[12].toLowerCase() === 'last' ? at - back * DAY_MS : at + ahead * DAY_MS);
  }
  return null;
}

function countOf(word: string): number {
  const w = word.toLowerCase().replace(/^a (couple|few)( of)?$/, '$1');
  return NUMBER_WORDS[w] ?? Number(w);
}

function unitOf(word: string): Unit {
  return word.toLowerCase().replace(/s$/, '') as Unit;
}

function shifted(at: number, count: number, unit: Unit): string {
  const d = new Date(at);
  if (unit === 'day') return day(at + count * DAY_MS);
  if (unit === 'week') return weekOf(at + count * 7 * DAY_MS);
  if (unit === 'month') {
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() + count);
    return d.toISOString().slice(0, 7);
  }
  return String(d.getUTCFullYear() + count).padStart(4, '0');
}

/** The week holding `ms`, named by its Monday. */
function weekOf(ms: number): string {
  return `week of ${day(ms - ((new Date(ms).getUTCDay() + 6) % 7) * DAY_MS)}`;
}

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
