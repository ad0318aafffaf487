import { describe, expect, it } from 'vitest';
import { compileEligibility, penaltyFactor } from '../../../src/search/filter.js';
import { isEngramError } from '../../../src/errors.js';
import type { SearchFilter } from '../../../src/search/options.js';
import type { MemoryRecord } from '../../../src/types.js';
import { memoryRecord } from '../helpers/records.js';

const now = Date.UTC(2024, 5, 1);
const rec = (id: string, extra: Partial<MemoryRecord> = {}) => memoryRecord(id, { text: id, createdAt: Date.UTC(2024, 0, 15), ...extra });
const records = [
  rec('web', { project: 'web', scope: 'team', tags: ['ui', 'bug'], kind: 'fact' }),
  rec('api', { project: 'api', scope: 'me', tags: ['bug'], kind: 'decision', createdAt: Date.UTC(2024, 2, 1) }),
  rec('plain'),
  rec('expired', { validUntil: now - 1 }),
  rec('valid-now', { validUntil: now }),
  rec('old', { supersededBy: 'plain' }),
];
const pass = (filter: SearchFilter, deepRecall = false) =>
  records.filter(compileEligibility({ filter, deepRecall, now }) ?? (() => true)).map((r) => r.id);

describe('filter: hard eligibility', () => {
  it('excludes expired and superseded memories by default', () => {
    expect(pass({})).toEqual(['web', 'api', 'plain', 'valid-now']);
    expect(pass({}, true)).toEqual(['web', 'api', 'plain', 'valid-now', 'old']);
  });

  it('filters by project, scope, tags (all), kinds, since and until', () => {
    expect(pass({ project: 'web' })).toEqual(['web']);
    expect(pass({ project: ['web', 'api'] })).toEqual(['web', 'api']);
    expect(pass({ scope: 'me' })).toEqual(['api']);
    expect(pass({ tags: ['bug'] })).toEqual(['web', 'api']);
    expect(pass({ tags: ['bug', 'ui'] })).toEqual(['web']);
    expect(pass({ kinds: ['decision'] })).toEqual(['api']);
    expect(pass({ since: '2024-02-01' })).toEqual(['api']);
    expect(pass({ until: new Date(Date.UTC(2024, 0, 31)) })).toEqual(['web', 'plain', 'valid-now']);
    expect(pass({ since: Date.UTC(2024, 2, 1), until: Date.UTC(2024, 2, 1) })).toEqual(['api']);
  });

  it("reads scope as personal | shared | both, a memory without scope being personal", () => {
    const scoped = [rec('mine', { scope: 'personal' }), rec('team', { scope: 'shared' }), rec('unscoped'), rec('other', { scope: 'me' })];
    const scopePass = (scope: SearchFilter['scope']) => scoped.filter(compileEligibility({ filter: { scope }, deepRecall: false, now })!).map((r) => r.id);
    expect(scopePass('personal')).toEqual(['mine', 'unscoped']);
    expect(scopePass('shared')).toEqual(['team']);
    expect(scopePass('both')).toEqual(['mine', 'team', 'unscoped']);
    expect(scopePass(['shared', 'me'])).toEqual(['team', 'other']);
    expect(scopePass('me')).toEqual(['other']);
  });

  it('rejects unparsable dates and malformed lists with INVALID_INPUT', () => {
    for (const filter of [{ since: 'not a date' }, { until: NaN }, { since: new Date('x') }, { tags: 'bug' }, { kinds: [1] }] as SearchFilter[]) {
      let thrown: unknown;
      try {
        compileEligibility({ filter, deepRecall: false, now });
      } catch (error) {
        thrown = error;
      }
      expect(isEngramError(thrown, 'INVALID_INPUT'), JSON.stringify(filter)).toBe(true);
    }
  });

  it('is null (no per-memory check) only when there is no filter and nothing is expired or superseded', () => {
    expect(compileEligibility({ filter: {}, deepRecall: false, now, anyRestricted: false })).toBeNull();
    expect(compileEligibility({ filter: {}, deepRecall: false, now, anyRestricted: true })).not.toBeNull();
    expect(compileEligibility({ filter: { project: 'web' }, deepRecall: false, now, anyRestricted: false })).not.toBeNull();
  });

  describe('validity of transient memories (the seed: plan and transient_state)', () => {
    const transient = [
      rec('plan-expired', { kind: 'plan', validUntil: now - 1 }),
      rec('state-expired', { kind: 'transient_state', validUntil: now - 1 }),
      rec('fact-expired', { kind: 'fact', validUntil: now - 1 }),
      rec('plan-valid', { kind: 'plan', validUntil: now + 1 }),
      rec('plain-plan', { kind: 'plan' }),
    ];
    const passing = (options: Partial<Parameters<typeof compileEligibility>[0]>) =>
      transient.filter(compileEligibility({ filter: {}, deepRecall: false, now, ...options })!).map((r) => r.id);

    it('drops expired plans and transient states unless asked for', () => {
      expect(passing({})).toEqual(['plan-valid', 'plain-plan']);
      expect(passing({ includeExpiredTransients: true })).toEqual(['plan-expired', 'state-expired', 'plan-valid', 'plain-plan']);
    });

    it('deep recall keeps every expired memory only with includeExpiredInDeepRecall', () => {
      expect(passing({ deepRecall: true })).toEqual(['plan-valid', 'plain-plan']);
      expect(passing({ includeExpiredInDeepRecall: true })).toEqual(['plan-valid', 'plain-plan']);
      expect(passing({ deepRecall: true, includeExpiredInDeepRecall: true })).toEqual(transient.map((r) => r.id));
    });
  });

  it('filter.core selects core memories, or leaves them out', () => {
    const some = [rec('core', { core: true }), rec('plain')];
    const pick = (core: boolean) => some.filter(compileEligibility({ filter: { core }, deepRecall: false, now })!).map((r) => r.id);
    expect(pick(true)).toEqual(['core']);
    expect(pick(false)).toEqual(['plain']);
    expect(() => compileEligibility({ filter: { core: 'yes' as unknown as boolean }, deepRecall: false, now })).toThrow(/filter.core/);
  });

  it('superseded memories take the deepRecall penalty, expired ones too, both: twice', () => {
    expect(penaltyFactor(rec('x', { supersededBy: 'y' }), 0.5, now)).toBe(0.5);
    expect(penaltyFactor(rec('x'), 0.5, now)).toBe(1);
    expect(penaltyFactor(rec('x', { validUntil: now - 1 }), 0.5, now)).toBe(0.5);
    expect(penaltyFactor(rec('x', { validUntil: now }), 0.5, now)).toBe(1);
    expect(penaltyFactor(rec('x', { validUntil: now - 1, supersededBy: 'y' }), 0.5, now)).toBe(0.25);
  });
});
