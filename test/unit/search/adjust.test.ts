import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { adjust } from '../../../src/search/adjust.js';
import { boost } from '../../../src/search/boost.js';
import { recency } from '../../../src/search/decay.js';
import { filterCandidates, type Eligible } from '../../../src/search/filter.js';
import { defaultSearchOptions, resolveSearchOptions } from '../../../src/search/options.js';
import type { FusedCandidate } from '../../../src/search/fuse.js';
import type { MemoryRecord } from '../../../src/types.js';
import { runs } from '../helpers/tier.js';

const DAY = 86_400_000;
const NOW = 1_700_000_000_000;

const arbEligible = fc.array(
  fc.record({
    fused: fc.double({ min: 0, max: 2, noNaN: true }),
    ageDays: fc.integer({ min: 0, max: 800 }),
    priority: fc.double({ min: 1, max: 2, noNaN: true }),
    pinned: fc.boolean(),
    project: fc.constantFrom(undefined, 'web', 'api'),
    superseded: fc.boolean(),
    quality: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
    inSequence: fc.boolean(),
  }),
  { maxLength: 40 },
);

type Item = { fused: number; ageDays: number; priority: number; pinned: boolean; project: string | undefined; superseded: boolean; quality?: number | undefined; inSequence?: boolean };

function toEligible(items: Item[]): Eligible[] {
  return items.map((item, i) => {
    const record: MemoryRecord = {
      id: `m${i}`, text: `memory ${i}`, createdAt: NOW - item.ageDays * DAY, priority: item.priority, pinned: item.pinned, tags: [], accessCount: 0,
      ...(item.project ? { project: item.project } : {}), ...(item.superseded ? { supersededBy: 'newer' } : {}),
      ...(item.quality !== undefined ? { quality: item.quality } : {}),
    };
    const candidate: FusedCandidate = { id: record.id, fused: item.fused, rank: { lexical: i + 1, vector: null }, legScore: { lexical: item.fused, vector: null } };
    return { candidate, record, penalty: item.superseded ? 0.5 : 1 };
  });
}

describe('adjust stage', () => {
  it('scores (fused + qualityWeight × quality) × penalty × recency × boost, best first (stable on ties), and applies minScore unless raw', () => {
    const qualityWeight = fc.constantFrom(undefined, 0, 0.1, 0.5);
    fc.assert(
      fc.property(arbEligible, fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean(), fc.constantFrom(undefined, 'web'), qualityWeight, fc.constantFrom('sequences', 'all'), (items, minScore, raw, project, weight, decayScope) => {
        const options = resolveSearchOptions({ minScore, raw, project, qualityWeight: weight, decayScope });
        const eligible = toEligible(items);
        const inSequence = (id: string) => items[Number(id.slice(1))]!.inSequence === true;
        const added = (r: MemoryRecord) => (weight ?? 0.1) * (r.quality ?? 0);
        const decayed = (r: MemoryRecord) => recency(r, NOW, options, decayScope === 'all' || inSequence(r.id));
        const naive = eligible
          .map((e, order) => ({ id: e.record.id, order, score: (e.candidate.fused + added(e.record)) * e.penalty * decayed(e.record) * boost(e.record, options) }))
          .sort((a, b) => b.score - a.score || a.order - b.order)
          .filter((s) => raw || s.score >= minScore);
        const out = adjust(eligible, options, NOW, inSequence);
        expect(out.map((s) => s.record.id)).toEqual(naive.map((s) => s.id));
        out.forEach((s, i) => {
          expect(s.score).toBe(naive[i]!.score);
          expect(s.score).toBe((s.candidate.fused + s.quality) * s.penalty * s.recency * s.boost);
        });
      }),
      { numRuns: runs(200) },
    );
  });
});

describe('filter stage', () => {
  it('drops candidates whose memory is gone or not eligible, and gives superseded ones the deep-recall penalty', () => {
    const eligible = toEligible([
      { fused: 1, ageDays: 0, priority: 1, pinned: false, project: 'web', superseded: false },
      { fused: 0.9, ageDays: 0, priority: 1, pinned: false, project: 'api', superseded: false },
      { fused: 0.8, ageDays: 0, priority: 1, pinned: false, project: 'web', superseded: true },
    ]);
    const records = new Map(eligible.map((e) => [e.record.id, e.record]));
    const fused = [...eligible.map((e) => e.candidate), { id: 'removed', fused: 0.7, rank: { lexical: 4, vector: null }, legScore: { lexical: 0.7, vector: null } }];
    const webOnly = (r: MemoryRecord) => r.project === 'web';
    const out = filterCandidates(fused, (id) => records.get(id), webOnly, defaultSearchOptions.deepRecallPenalty, 0);
    expect(out.map((e) => [e.record.id, e.penalty])).toEqual([['m0', 1], ['m2', 0.5]]);
    expect(filterCandidates(fused, (id) => records.get(id), null, 0.25, 0).map((e) => e.penalty)).toEqual([1, 1, 0.25]);
  });
});
