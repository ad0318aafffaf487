import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { selectAcrossSessions } from '../../../src/search/diverse-sessions.js';
import { mmrSelect } from '../../../src/search/mmr.js';
import { understandByRules } from '../../../src/search/understand.js';

const options = { lambda: 0.78, duplicateThreshold: 0.94 };
// Similarity 0.5 inside a session, 0 across.
const sameSession = (sessions: (string | undefined)[]) => (a: number, b: number) => (sessions[a] !== undefined && sessions[a] === sessions[b] ? 0.5 : 0);

describe('selectAcrossSessions (assembly: diverse)', () => {
  it('takes the best memory of each session before a second one from any session; greedy MMR keeps the one session', () => {
    const scores = [1, 0.95, 0.9, 0.5, 0.3];
    const sessions = ['s1', 's1', 's1', 's2', 's3'];
    expect(selectAcrossSessions(scores, sessions, 3, options, () => 0).map((p) => p.index).sort()).toEqual([0, 3, 4]);
    expect(mmrSelect(scores, 3, options, () => 0).picked.map((p) => p.index)).toEqual([0, 1, 2]);
  });

  it('fills the rest by MMR over all, the first picks counting for novelty', () => {
    const sessions = ['s1', 's1', 's2', 's2'];
    const picks = selectAcrossSessions([1, 0.95, 0.9, 0.5], sessions, 3, options, sameSession(sessions));
    expect(picks.map((p) => p.index)).toEqual([0, 2, 1]);
  });

  it('without sessions is plain MMR', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }), fc.integer({ min: 1, max: 10 }), (scores, k) => {
        const sim = (a: number, b: number) => Math.abs(Math.sin(a * 7 + b * 7)) * 0.9;
        const plain = mmrSelect(scores, k, options, sim).picked.map((p) => p.index);
        expect(selectAcrossSessions(scores, scores.map(() => undefined), k, options, sim).map((p) => p.index)).toEqual(plain);
      }),
    );
  });

  it('returns at most k distinct candidates, every session represented while places last', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ score: fc.double({ min: 0.01, max: 1, noNaN: true }), session: fc.constantFrom('a', 'b', 'c', 'd', undefined) }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 12 }),
        (items, k) => {
          const sessions = items.map((i) => i.session);
          const picks = selectAcrossSessions(items.map((i) => i.score), sessions, k, options, () => 0).map((p) => p.index);
          expect(new Set(picks).size).toBe(picks.length);
          expect(picks.length).toBe(Math.min(k, items.length));
          const distinct = new Set(sessions.filter((s) => s !== undefined));
          expect(new Set(picks.map((i) => sessions[i]).filter((s) => s !== undefined)).size).toBe(Math.min(distinct.size, k));
        },
      ),
    );
  });

  it('mmrSelect with preselected indices never returns them and drops their near-duplicates', () => {
    const sim = (a: number, b: number) => (Math.min(a, b) === 0 && Math.max(a, b) === 1 ? 0.99 : 0);
    const { picked, duplicates } = mmrSelect([1, 0.9, 0.8], 3, options, sim, [0]);
    expect(picked.map((p) => p.index)).toEqual([2]);
    expect(duplicates).toEqual([1]);
  });
});

describe('understand by rules', () => {
  it.each([
    'What books has Tim read?',
    'Which cities have they visited?',
    'How many times did we discuss the budget?',
    'What kinds of music does she like?',
    'List every restaurant we tried',
    'What hobbies does he have?',
  ])('reads %s as aggregation', (q) => expect(understandByRules(q).type).toBe('aggregation'));
  it.each([
    ['When did Caroline go to the support group?', 'temporal'],
    ['What is the wifi password?', 'factual'],
    ['What kind of pot did they make?', 'factual'],
    ['Can you recommend a lens for my vlog?', 'preference'],
    ['src/auth/middleware.ts', 'identifier'],
  ])('reads %s as %s', (q, type) => expect(understandByRules(q).type).toBe(type));
  it('grades complexity by signals and length', () => {
    expect(understandByRules('wifi password').complexity).toBe('simple');
    expect(understandByRules('when did we first list the budget items').complexity).toBe('complex');
    expect(understandByRules('what did the doctor say about the test results').complexity).toBe('moderate');
  });
});
