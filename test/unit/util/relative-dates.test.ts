/**
 * Relative dates resolved against the moment they were said (UTC calendar dates): through chrono-node (what formation
 * uses), and through the built-in phrase list it falls back to.
 */
import { describe, expect, it, vi } from 'vitest';
import { findRelativeDates, relativeDateFinder, resolveRelativeDates, type DateFinder } from '../../../src/util/relative-dates.js';

const FRIDAY = Date.UTC(2026, 10, 20, 9, 30); // Friday 2026-11-20

describe('relative dates, the built-in phrase list (the fallback)', () => {
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

describe('relative dates through chrono-node', () => {
  let find: DateFinder;

  it('loads chrono-node, which passes its shape check', async () => {
    find = await relativeDateFinder();
    expect(find).not.toBe(findRelativeDates);
    expect(await relativeDateFinder()).toBe(find);
  });

  // Said on Friday 2026-11-20 at 09:30 UTC. Weeks are named by their Monday.
  it.each([
    ['yesterday', '2026-11-19'],
    ['today', '2026-11-20'],
    ['tonight', '2026-11-20'],
    ['this morning', '2026-11-20'],
    ['last night', '2026-11-19'],
    ['tomorrow', '2026-11-21'],
    ['the day before yesterday', '2026-11-18'],
    ['the day after tomorrow', '2026-11-22'],
    ['3 days ago', '2026-11-17'],
    ['a couple of days ago', '2026-11-18'],
    ['a few days ago', '2026-11-17'],
    ['in two days', '2026-11-22'],
    ['three days from now', '2026-11-23'],
    ['two weeks ago', 'week of 2026-11-02'],
    ['last week', 'week of 2026-11-09'],
    ['this week', 'week of 2026-11-16'],
    ['next week', 'week of 2026-11-23'],
    ['two weeks from now', 'week of 2026-11-30'],
    ['last weekend', '2026-11-15'],
    ['this weekend', '2026-11-21'],
    ['this Saturday', '2026-11-21'],
    ['on Monday', '2026-11-23'],
    ['last Friday', '2026-11-13'],
    ['next Friday', '2026-11-27'],
    ['last Monday', '2026-11-16'],
    ['last month', '2026-10'],
    ['this month', '2026-11'],
    ['in 3 months', '2027-02'],
    ['last year', '2025'],
    ['next year', '2027'],
    ['a year ago', '2025'],
  ])('%s → %s', (phrase, date) => {
    expect(find(`The user did it ${phrase}.`, FRIDAY)).toEqual([{ phrase, date }]);
  });

  it('keeps the output format: each phrase as written, in order, appended', () => {
    expect(resolveRelativeDates('Dentist Yesterday, Rome in 2 days', FRIDAY, find)).toBe('Dentist Yesterday, Rome in 2 days (Yesterday = 2026-11-19; in 2 days = 2026-11-22)');
    expect(resolveRelativeDates('The user lives in Porto', FRIDAY, find)).toBe('The user lives in Porto');
  });

  it('leaves alone what is no date to resolve: bare names, durations, written-out dates, now and times of day, words that only contain a phrase', () => {
    for (const text of ['Sun is hot', 'She was born in May', 'Yoga every Monday', 'It lasted for three weeks', 'Moved on November 20, 2025', 'Due 2026-12-01', 'At 5pm', 'The user lives in Porto now', 'The user runs in the morning', 'todays yesterdayish']) {
      expect(find(text, FRIDAY), text).toEqual([]);
    }
  });

  it('a month shift from the 31st stays in the month it lands in (chrono alone would give March)', () => {
    expect(find('next month', Date.UTC(2026, 0, 31))).toEqual([{ phrase: 'next month', date: '2026-02' }]);
    expect(find('a month ago', Date.UTC(2026, 2, 31))).toEqual([{ phrase: 'a month ago', date: '2026-02' }]);
  });
});

describe('relative dates when chrono-node cannot be used', () => {
  it("a chrono-node that answers in another shape fails the adapter's check: the built-in phrase list is used", async () => {
    vi.resetModules();
    // A parse result without tags() or components, as a changed chrono-node might give.
    vi.doMock('chrono-node/en', () => ({ casual: { parse: () => [{ text: '3 days ago', index: 10 }] } }));
    try {
      const fresh = await import('../../../src/util/relative-dates.js');
      const fallback = await fresh.relativeDateFinder();
      expect(fallback).toBe(fresh.findRelativeDates);
      expect(fresh.resolveRelativeDates('Dentist yesterday', FRIDAY, fallback)).toBe('Dentist yesterday (yesterday = 2026-11-19)');
    } finally {
      vi.doUnmock('chrono-node/en');
      vi.resetModules();
    }
  });
});
