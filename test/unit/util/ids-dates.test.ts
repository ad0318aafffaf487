import { describe, expect, test, vi } from 'vitest';
import { isWellFormed, newId } from '../../../src/util/ids.js';
import { toEpochMs } from '../../../src/util/dates.js';

describe('newId', () => {
  test('makes RFC 9562 version 7 UUIDs that carry the time in ms', () => {
    const before = Date.now();
    const id = newId();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now());
  });

  test('ids made later sort later (what keeps the store indexes growing at their end), and never repeat', () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    try {
      const ids: string[] = [];
      for (let step = 0; step < 50; step++) {
        for (let i = 0; i < 20; i++) ids.push(newId());
        vi.advanceTimersByTime(1);
      }
      expect(new Set(ids).size).toBe(ids.length);
      for (let i = 20; i < ids.length; i += 20) expect(ids[i - 1]! < ids[i]!).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('toEpochMs', () => {
  test('numbers within ±8.64e15, valid Dates and strict ISO-8601 strings; everything else names the field', () => {
    expect(toEpochMs(8.64e15, 'f')).toBe(8.64e15);
    expect(toEpochMs('2024-02-29T12:00:00Z', 'f')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(toEpochMs('1999-12-31T23:59:59.999-00:30', 'f')).toBe(Date.UTC(2000, 0, 1, 0, 29, 59, 999));
    expect(toEpochMs('0099-06-01', 'f')).toBe(Date.parse('0099-06-01'));
    for (const bad of ['version 3', 1e16, NaN, '', ' 2024-01-01', '2024-1-1', '2024-02-30', '2024-01-01T24:00Z', '2024-01-01T10:00:60Z', '2024-01-01t10:00z', 8.64e15 + 1]) {
      expect(() => toEpochMs(bad, 'memory.createdAt'), String(bad)).toThrow(/memory\.createdAt is not a valid date/);
    }
  });

  test('agrees with Date.parse on every well-formed date-time with an offset', () => {
    for (const text of ['2024-03-10T02:30Z', '1970-01-01T00:00:00.001+14:00', '2038-01-19T03:14:08-12:00', '1900-02-28']) {
      expect(toEpochMs(text, 'f'), text).toBe(Date.parse(text));
    }
  });
});

describe('isWellFormed', () => {
  test('lone surrogates are ill-formed, pairs are not; the regex fallback agrees with the native method', () => {
    const samples = ['', 'plain', '🙂', '\ud800', '\udc00', 'a\ud800b', '\udc00\ud800', '🙂\ud83d', '\ud83d\ude42\ude42'];
    for (const text of samples) {
      expect(isWellFormed(text), JSON.stringify(text)).toBe((text as string & { isWellFormed(): boolean }).isWellFormed());
      const withoutNative = Object.assign(Object(text) as object, { isWellFormed: undefined }) as unknown as string;
      expect(isWellFormed(withoutNative), `fallback ${JSON.stringify(text)}`).toBe((text as string & { isWellFormed(): boolean }).isWellFormed());
    }
  });
});
