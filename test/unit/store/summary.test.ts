/** A record's summary carries everything eligibility and the thread index read. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileEligibility } from '../../../src/search/filter.js';
import { threadOf } from '../../../src/search/thread-index.js';
import { summarize } from '../../../src/store/summary.js';
import type { MemoryRecord } from '../../../src/types.js';
import { runs } from '../helpers/tier.js';

const NOW = Date.UTC(2024, 5, 1);
const label = fc.option(fc.constantFrom('web', 'app', 'personal', 'shared'), { nil: undefined });

const recordArb: fc.Arbitrary<MemoryRecord> = fc
  .record({
    tags: fc.subarray(['a', 'b', 'c']),
    project: label,
    scope: label,
    kind: label,
    createdAt: fc.integer({ min: NOW - 10, max: NOW + 10 }),
    validUntil: fc.option(fc.integer({ min: NOW - 10, max: NOW + 10 }), { nil: undefined }),
    supersededBy: fc.option(fc.constant('x'), { nil: undefined }),
    thread: fc.option(fc.oneof(fc.string(), fc.double(), fc.constant({ nested: 1 }), fc.constant(null)), { nil: undefined }),
  })
  .map(({ thread, ...r }) => {
    const record: MemoryRecord = { id: 'm', text: 'some text', createdAt: r.createdAt, priority: 1, pinned: false, tags: r.tags, accessCount: 0 };
    for (const key of ['project', 'scope', 'kind', 'validUntil', 'supersededBy'] as const) if (r[key] !== undefined) Object.assign(record, { [key]: r[key] });
    if (thread !== undefined) record.meta = { thread };
    return record;
  });

const filterArb = fc.record(
  {
    project: fc.oneof(fc.constantFrom('web', 'app'), fc.subarray(['web', 'app'])),
    scope: fc.constantFrom('personal', 'shared', 'both'),
    tags: fc.subarray(['a', 'b', 'c'], { maxLength: 2 }),
    kinds: fc.subarray(['web', 'app', 'personal']),
    since: fc.integer({ min: NOW - 10, max: NOW + 10 }),
    until: fc.integer({ min: NOW - 10, max: NOW + 10 }),
  },
  { requiredKeys: [] },
);

describe('summarize', () => {
  it('is eligible exactly when its record is, and files in the same thread (property)', () => {
    fc.assert(
      fc.property(recordArb, filterArb, fc.boolean(), fc.integer({ min: NOW - 10, max: NOW + 10 }), (record, filter, deepRecall, now) => {
        const eligible = compileEligibility({ filter, deepRecall, now })!;
        const summary = summarize(record);
        expect(eligible(summary)).toBe(eligible(record));
        expect(threadOf({ meta: summary.thread === undefined ? undefined : { thread: summary.thread } })).toBe(threadOf(record));
        expect(summary.createdAt).toBe(record.createdAt);
      }),
      { numRuns: runs(500) },
    );
  });
});
