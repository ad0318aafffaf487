/**
 * Calendar dates a query names ("in June", "on 13 October 2023", "in 2022"), and whether a memory was written then.
 * Read by the `adjust` stage (search option `dateBoost`): a question about June is mostly about what was written in
 * June (85 of the 91 LoCoMo dev questions naming a date have evidence written then). A day matches memories written within a week of it (the question
 * "the weekend before April 10" is about that week), a month the whole month, a year the whole year; a month or
 * day without a year matches it in any year. English month names and four-digit years 1900–2099; a month alone only
 * after a word such as "in" (`BEFORE_MONTH`). Relative dates
 * ("last week") are not read: in a question about the past they are as often relative to the event as to now.
 */

import type { DateMention } from '../types.js';
import { DAY_MS } from '../util/time.js';

export type { DateMention };

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const SHORT = MONTHS.map((m) => m.slice(0, 3));
const AMBIGUOUS = new Set(['may', 'jan', 'mar']);
/** The words before a month alone (no day, no year) that make it a date rather than a name ("in June", not "June said"). */
const BEFORE_MONTH = new Set(['in', 'on', 'of', 'during', 'since', 'until', 'till', 'before', 'after', 'by', 'from', 'through', 'throughout', 'around', 'last', 'this', 'next', 'early', 'late', 'mid']);
const MONTH = `(${MONTHS.join('|')}|${SHORT.filter((s) => s !== 'may').join('|')})\\.?`;
const YEAR = '((?:19|20)\\d\\d)';
// "13 october 2023", "october 13, 2023", "october 2023", "october": day before or after the month, year optional.
const WITH_MONTH = new RegExp(`\\b(?:(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?)?${MONTH}(?:\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b)?(?:,?\\s+${YEAR})?\\b`, 'g');
const YEAR_ALONE = new RegExp(`\\b${YEAR}\\b`, 'g');
/** A day matches memories written this close to it (either side of the whole day). */
export const DAY_SLACK_MS = 7 * DAY_MS;

function monthIndex(name: string): number {
  const at = MONTHS.indexOf(name);
  return at >= 0 ? at : SHORT.indexOf(name);
}

export function queryDates(query: string): DateMention[] {
  const text = query.toLowerCase();
  const found: DateMention[] = [];
  const taken: [number, number][] = [];
  for (const m of text.matchAll(WITH_MONTH)) {
    const name = m[2] as string;
    if (m[1] === undefined && m[3] === undefined && m[4] === undefined) {
      // A month alone is a date only after a word such as "in" ("What did April say?" names a person); "may" alone
      // is mostly the verb, "jan" a name, "mar" a verb: only with a day or a year are they the month.
      if (AMBIGUOUS.has(name) || !BEFORE_MONTH.has(/([a-z]+)[\s-]*$/.exec(text.slice(0, m.index))?.[1] ?? '')) continue;
    }
    const mention: DateMention = { text: m[0].trim(), month: monthIndex(name) };
    const day = Number(m[1] ?? m[3]);
    if (day >= 1 && day <= 31) mention.day = day;
    if (m[4] !== undefined) mention.year = Number(m[4]);
    found.push(mention);
    taken.push([m.index, m.index + m[0].length]);
  }
  for (const m of text.matchAll(YEAR_ALONE)) {
    if (taken.some(([from, to]) => m.index >= from && m.index < to)) continue;
    found.push({ text: m[0], year: Number(m[1]) });
  }
  return found;
}

/** Whether `at` (epoch ms, read in UTC) falls within any of the mentions. */
export function writtenWithin(at: number, mentions: readonly DateMention[]): boolean {
  if (!Number.isFinite(at)) return false;
  const date = new Date(at);
  const year = date.getUTCFullYear();
  for (const m of mentions) {
    if (m.month !== undefined && m.day !== undefined) {
      for (const y of m.year !== undefined ? [m.year] : [year - 1, year, year + 1]) {
        const start = Date.UTC(y, m.month, m.day);
        if (at >= start - DAY_SLACK_MS && at < start + DAY_MS + DAY_SLACK_MS) return true;
      }
    } else if (m.month !== undefined) {
      if (date.getUTCMonth() === m.month && (m.year === undefined || m.year === year)) return true;
    } else if (m.year === year) {
      return true;
    }
  }
  return false;
}
