import { describe, expect, it } from 'vitest';
import { boost } from '../../../src/search/boost.js';
import { defaultSearchOptions } from '../../../src/search/options.js';
import { isEngramError } from '../../../src/errors.js';
import type { MemoryRecord } from '../../../src/types.js';
import { memoryRecord } from '../helpers/records.js';

const record = (extra: Partial<MemoryRecord> = {}) => memoryRecord('a', { text: 't', ...extra });
const opts = (extra: Partial<typeof defaultSearchOptions> = {}) => ({ ...defaultSearchOptions, ...extra });

describe('boost', () => {
  it('is 1 for a plain memory and no project', () => {
    expect(boost(record(), opts())).toBe(1);
    expect(boost(record({ project: 'x' }), opts())).toBe(1);
  });

  it('project factor: same 1.3, another 0.8, none 0.9', () => {
    expect(boost(record({ project: 'web' }), opts({ project: 'web' }))).toBeCloseTo(1.3, 12);
    expect(boost(record({ project: 'api' }), opts({ project: 'web' }))).toBeCloseTo(0.8, 12);
    expect(boost(record(), opts({ project: 'web' }))).toBeCloseTo(0.9, 12);
  });

  it('pinned 1.1, priority 2 doubles, and they multiply', () => {
    expect(boost(record({ pinned: true }), opts())).toBeCloseTo(1.1, 12);
    expect(boost(record({ priority: 2 }), opts())).toBe(2);
    expect(boost(record({ priority: 2, pinned: true, project: 'web' }), opts({ project: 'web' }))).toBeCloseTo(2 * 1.1 * 1.3, 12);
  });

  it('multiplies the caller hook and rejects a bad hook value', () => {
    expect(boost(record({ kind: 'fact' }), opts({ boost: (m) => (m.kind === 'fact' ? 1.5 : 1) }))).toBe(1.5);
    for (const bad of [NaN, -1, Infinity, 'x' as unknown as number]) {
      let thrown: unknown;
      try {
        boost(record(), opts({ boost: () => bad }));
      } catch (error) {
        thrown = error;
      }
      expect(isEngramError(thrown, 'INVALID_INPUT')).toBe(true);
    }
  });
});
