/** Relative dates resolved against the moment they were said (UTC calendar dates). */
import { describe, expect, it } from 'vitest';
import { findRelativeDates, resolveRelativeDates } from '../../../src/util/relative-dates.js';

const FRIDAY = Date.UTC(2026, 10, 20, 9, 30); // Friday 2026-11-20

describe('relative dates', () => {
  it.each([
    ['yesterday', '2026-11-19'],
    ['today', '2026-11-20'],
    ['tonight', '2026-11-20'],
    ['tomorrow', '2026-11-21'],
    ['the day before yesterday', '2026-11-18'],
    ['the day after tomorrow', '2026-11-22'],
    ['3 days ago', '2026-11-17'],
    ['a couple of days ago', '2026-11-18'],
    ['in two days', '2026-11-22'],
    ['two weeks ago', 'week of 2026-11-02'],
    ['last week', 'week of 2026-11-09'],
    ['this week', 'week of 2026-11-16'],
    ['next week', 'week of 2026-11-23'],
    ['last month', '2026-10'],
    ['in 3 months', '2027-02'],
    ['next year', '2027'],
    ['a year ago', '2025'],
    ['last Friday', '2026-11-13'],
    ['next Friday', '2026-11-27'],
    ['last Monday', '2026-11-16'],
    ['next Sunday', '2026-11-22'],
  ])('%s → %s', (phrase, date) => {
    expect(findRelativeDates(`The user did it ${phrase}.`, FRIDAY)).toEqual([{ phrase, date }]);
  });

  it('appends what each phrase meant, in order, and leaves text without one as it is', () => {
    expect(resolveRelativeDates('Dentist Yesterday, Rome in 2 days', FRIDAY)).toBe('Dentist Yesterday, Rome in 2 days (Yesterday = 2026-11-19; in 2 days = 2026-11-22)');
    expect(resolveRelativeDates('The user lives in Porto', FRIDAY)).toBe('The user lives in Porto');
    // Words that only contain a phrase are not one.
    expect(findRelativeDates('todays yesterdayish', FRIDAY)).toEqual([]);
  });

  it('a month shift from the 31st stays in the month it lands in', () => {
    expect(findRelativeDates('next month', Date.UTC(2026, 0, 31))).toEqual([{ phrase: 'next month', date: '2026-02' }]);
  });
});
