import { describe, expect, it } from 'vitest';
import type { ScoredCandidate } from '../../../src/search/adjust.js';
import { placeSupersededSources, SOURCE_BELOW } from '../../../src/search/superseded-sources.js';
import type { RecordSummary } from '../../../src/store/store.js';
import { memoryRecord } from '../helpers/records.js';

function scored(id: string, score: number): ScoredCandidate {
  const candidate = { id, fused: score, rank: { lexical: 1, vector: null }, legScore: { lexical: score, vector: null } };
  return { candidate, record: memoryRecord(id), penalty: 1, recency: 1, boost: 1, quality: 0, score };
}

/** Memories: id → what supersedes it; `derives` fact → the sources it derives from. */
function world(superseded: Record<string, string>, derives: Record<string, string[]>, stored: string[]) {
  const summaries = new Map<string, RecordSummary>(stored.map((id) => [id, { id, createdAt: 0, tags: [], ...(superseded[id] ? { supersededBy: superseded[id] } : {}) }]));
  const derivedFrom = (id: string) => Object.entries(derives).flatMap(([fact, sources]) => (sources.includes(id) ? [fact] : []));
  return { provenance: { derivedFrom }, records: { summary: (id: string) => summaries.get(id) } };
}

const ids = (list: readonly ScoredCandidate[]) => list.map((s) => s.record.id);

describe('placeSupersededSources', () => {
  it('puts a source of a superseded memory just below the memory that replaced it, and nothing else moves', () => {
    const { provenance, records } = world({ old: 'new' }, { old: ['turn'] }, ['old', 'new', 'turn', 'other']);
    const input = [scored('turn', 0.9), scored('other', 0.85), scored('new', 0.8)];
    const out = placeSupersededSources(input, provenance, records);
    expect(ids(out.scored)).toEqual(['other', 'new', 'turn']);
    expect(out.demoted).toBe(1);
    expect(out.scored[2]).toMatchObject({ score: 0.8 * SOURCE_BELOW, source: { of: 'old', by: 'new' } });
    // The input is not changed.
    expect(input[0]!.score).toBe(0.9);
    expect(input[0]!.source).toBeUndefined();
  });

  it('follows a chain of supersedes to the live version', () => {
    const { provenance, records } = world({ v1: 'v2', v2: 'v3' }, { v1: ['turn'] }, ['v1', 'v2', 'v3', 'turn']);
    const out = placeSupersededSources([scored('turn', 1), scored('v3', 0.5)], provenance, records);
    expect(ids(out.scored)).toEqual(['v3', 'turn']);
    expect(out.scored[1]!.source).toEqual({ of: 'v1', by: 'v3' });
  });

  it('leaves a source alone when it is below the replacement already, when the replacement is not a candidate, or the memory is live', () => {
    const { provenance, records } = world({ old: 'new' }, { old: ['below', 'alone'], live: ['kept'] }, ['old', 'new', 'below', 'alone', 'live', 'kept']);
    const below = placeSupersededSources([scored('new', 0.9), scored('below', 0.89)], provenance, records);
    expect(below).toMatchObject({ demoted: 0 });
    expect(below.scored.map((s) => s.score)).toEqual([0.9, 0.89]);
    expect(placeSupersededSources([scored('alone', 1)], provenance, records).demoted).toBe(0);
    expect(placeSupersededSources([scored('kept', 1), scored('live', 0.1)], provenance, records).demoted).toBe(0);
  });

  it('a source of two superseded memories goes below the lower of their replacements; a tie counts as outranking', () => {
    const { provenance, records } = world({ a: 'a2', b: 'b2' }, { a: ['turn'], b: ['turn'] }, ['a', 'a2', 'b', 'b2', 'turn']);
    const out = placeSupersededSources([scored('turn', 0.7), scored('a2', 0.7), scored('b2', 0.4)], provenance, records);
    expect(ids(out.scored)).toEqual(['a2', 'b2', 'turn']);
    expect(out.scored[2]!.source).toEqual({ of: 'b', by: 'b2' });
  });

  it('a replacement that is itself demoted is read at its new score', () => {
    // f1, derived from t1, was replaced by x; x is itself the source of g1, which g2 replaced.
    const { provenance, records } = world({ f1: 'x', g1: 'g2' }, { f1: ['t1'], g1: ['x'] }, ['f1', 'x', 'g1', 'g2', 't1']);
    const out = placeSupersededSources([scored('t1', 1), scored('x', 0.9), scored('g2', 0.5)], provenance, records);
    expect(ids(out.scored)).toEqual(['g2', 'x', 't1']);
    expect(out.scored[1]!.score).toBeCloseTo(0.5 * SOURCE_BELOW, 12);
    expect(out.scored[2]!.score).toBeCloseTo(0.5 * SOURCE_BELOW * SOURCE_BELOW, 12);
  });
});
