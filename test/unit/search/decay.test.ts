import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../../src/util/time.js';
import { dampen, recency, retention } from '../../../src/search/decay.js';
import type { MemoryRecord } from '../../../src/types.js';

const days = (n: number) => n * DAY_MS;
const fixed4 = (x: number) => x.toFixed(4);

describe('decay', () => {
  it('exponential, τ = 7 days: 1 day → 0.8669, 30 days → 0.0138', () => {
    const decay = { kind: 'exponential', tauMs: days(7) } as const;
    expect(fixed4(retention(days(1), decay))).toBe('0.8669');
    expect(fixed4(retention(days(30), decay))).toBe('0.0138');
    expect(retention(0, decay)).toBe(1);
  });

  it('hyperbolic, 60 days: 0, 30, 60, 120 days → 1.0, 0.6667, 0.5, 0.3333', () => {
    const decay = { kind: 'hyperbolic', halfLifeDays: 60 } as const;
    expect([0, 30, 60, 120].map((d) => fixed4(retention(days(d), decay)))).toEqual(['1.0000', '0.6667', '0.5000', '0.3333']);
  });

  it('R^α with α = 0.3: 0.6 at retention 0.95 → 0.5908; 0.9 at retention 0.25 → 0.5938, which wins', () => {
    const a = 0.6 * dampen(0.95, 0.3);
    const b = 0.9 * dampen(0.25, 0.3);
    expect(fixed4(a)).toBe('0.5908');
    expect(fixed4(b)).toBe('0.5938');
    expect(b).toBeGreaterThan(a);
    expect(dampen(0.25, 1)).toBe(0.25);
  });

  it('false means no decay; future dates count as age 0', () => {
    expect(retention(days(1000), false)).toBe(1);
    expect(retention(-days(5), { kind: 'exponential', tauMs: days(7) })).toBe(1);
  });

  it('decays from creation or from the last access', () => {
    const now = days(100);
    const record: MemoryRecord = { id: 'a', text: 't', createdAt: days(40), lastAccessedAt: days(70), priority: 1, pinned: false, tags: [], accessCount: 1 };
    const options = { decay: { kind: 'hyperbolic', halfLifeDays: 60 } as const, decayAlpha: 1, decayScope: 'all' } as const;
    expect(recency(record, now, { ...options, decayFrom: 'created' }, false)).toBeCloseTo(0.5, 12);
    expect(recency(record, now, { ...options, decayFrom: 'accessed' }, false)).toBeCloseTo(1 / 1.5, 12);
    const neverAccessed = { ...record, lastAccessedAt: undefined };
    expect(recency(neverAccessed, now, { ...options, decayFrom: 'accessed' }, false)).toBeCloseTo(0.5, 12);
    expect(recency(record, now, { ...options, decayFrom: 'created', decayAlpha: 0.3 }, false)).toBeCloseTo(Math.pow(0.5, 0.3), 12);
  });

  it("decayScope 'sequences': an age-based curve applies in a sequence only; 'all' everywhere (naive reference)", () => {
    const curve = fc.oneof(
      fc.record({ kind: fc.constant('hyperbolic' as const), halfLifeDays: fc.double({ min: 0.5, max: 400, noNaN: true }) }),
      fc.record({ kind: fc.constant('exponential' as const), tauMs: fc.double({ min: days(0.5), max: days(400), noNaN: true }) }),
    );
    fc.assert(
      fc.property(curve, fc.integer({ min: -days(30), max: days(2000) }), fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom('sequences' as const, 'all' as const), fc.boolean(), (decay, age, decayAlpha, decayScope, inSequence) => {
        const now = days(3000);
        const record: MemoryRecord = { id: 'a', text: 't', createdAt: now - age, priority: 1, pinned: false, tags: [], accessCount: 0 };
        const ageDays = Math.max(0, age) / DAY_MS;
        const raw = decay.kind === 'hyperbolic' ? 1 / (1 + ageDays / decay.halfLifeDays) : Math.exp(-Math.max(0, age) / decay.tauMs);
        const naive = decayScope === 'all' || inSequence ? Math.pow(raw, decayAlpha) : 1;
        expect(recency(record, now, { decay, decayFrom: 'created', decayAlpha, decayScope }, inSequence)).toBeCloseTo(naive, 12);
      }),
    );
  });
});
