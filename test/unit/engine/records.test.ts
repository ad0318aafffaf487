import { describe, expect, test, vi } from 'vitest';
import { newId } from '../../../src/engine/records.js';

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
