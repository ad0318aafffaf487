import { describe, expect, it } from 'vitest';
import { datesOverAYear } from '../../../bench/lib/documents.js';

describe('the dated documents import', () => {
  it('draws the same dates on every run, spread over the year before "now"', () => {
    const dates = datesOverAYear(2000);
    expect(datesOverAYear(2000)).toEqual(dates);
    expect(datesOverAYear(2000, 7)).not.toEqual(dates);
    const now = Date.UTC(2026, 0, 1);
    const year = 365 * 86_400_000;
    expect(Math.max(...dates)).toBeLessThanOrEqual(now);
    expect(Math.min(...dates)).toBeGreaterThan(now - year);
    // Uniform: each quarter of the year holds about a quarter of them.
    for (let q = 0; q < 4; q++) {
      const inQuarter = dates.filter((d) => d <= now - (q * year) / 4 && d > now - ((q + 1) * year) / 4).length;
      expect(inQuarter).toBeGreaterThan(400);
      expect(inQuarter).toBeLessThan(600);
    }
  });
});
