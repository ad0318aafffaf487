/**
 * Relative dates in English text ("yesterday", "last week", "in two days", "3 months ago", "next Friday") resolved
 * against the moment the text was said, so a memory read a month later still says when. Dates are UTC calendar
 * dates, as a search's context blocks show them (search/assemble.ts). Phrases not listed here are left as they are.
 */

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

/** The relative-date phrases of `text` and what each means when said at `at` (epoch ms), in order. */
export function findRelativeDates(text: string, at: number): ResolvedDate[] {
  const found: ResolvedDate[] = [];
  for (const m of text.matchAll(PHRASE)) {
    const date = resolve(m, at);
    if (date !== null) found.push({ phrase: m[0], date });
  }
  return found;
}

/** `text` with what its relative dates meant at `at` appended: "… last week (last week = week of 2026-11-16)". */
export function resolveRelativeDates(text: string, at: number): string {
  const found = findRelativeDates(text, at);
  if (found.length === 0) return text;
  return `${text} (${found.map(({ phrase, date }) => `${phrase} = ${date}`).join('; ')})`;
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
  if (unit === 'week') {
    const moved = at + count * 7 * DAY_MS;
    const monday = moved - ((new Date(moved).getUTCDay() + 6) % 7) * DAY_MS;
    return `week of ${day(monday)}`;
  }
  if (unit === 'month') {
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() + count);
    return d.toISOString().slice(0, 7);
  }
  return String(d.getUTCFullYear() + count).padStart(4, '0');
}

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
