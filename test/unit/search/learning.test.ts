/**
 * The seed formulas of learning from use, each against its worked values and a naive reference: stability
 * retention, the spaced-repetition increments, core promotion, association strengthening, decay, the 0.3
 * activation floor and the per-memory cap.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssociationGraph, decayedWeight } from '../../../src/engine/associations.js';
import type { ScoredCandidate } from '../../../src/search/adjust.js';
import { associate } from '../../../src/search/associate.js';
import { defaultSearchOptions } from '../../../src/search/options.js';
import { DAY_MS } from '../../../src/util/time.js';
import { recency } from '../../../src/search/decay.js';
import { defaultLearningOptions, qualifiesForCore, reinforced, spacingFactor } from '../../../src/search/reinforce.js';
import { isCold, stabilityRetention } from '../../../src/search/retention.js';
import type { MemoryRecord } from '../../../src/types.js';
import { memoryRecord } from '../helpers/records.js';

const NOW = Date.UTC(2026, 0, 1);
const record = (extra: Partial<MemoryRecord> = {}) => memoryRecord('m', { text: 't', createdAt: NOW, ...extra });
const daysAgo = (days: number) => NOW - days * DAY_MS;
const stability = { kind: 'stability' } as const;

describe('retention with stability (R = max(floor, exp(−Δt / (S·B·β))))', () => {
  it("matches the seed's worked values", () => {
    // S 0.3, importance 0.5 (priority 1.5: B = 2), 30 days: exp(−30 / 72) = 0.6592
    expect(stabilityRetention(record({ stability: 0.3, priority: 1.5, lastAccessedAt: daysAgo(30) }), NOW, stability)).toBeCloseTo(0.6592, 4);
    // importance 0: exp(−30 / 36) = 0.4346
    expect(stabilityRetention(record({ stability: 0.3, lastAccessedAt: daysAgo(30) }), NOW, stability)).toBeCloseTo(0.4346, 4);
    // never reinforced: S₀ = 0.3, counted from creation
    expect(stabilityRetention(record({ createdAt: daysAgo(30) }), NOW, stability)).toBeCloseTo(0.4346, 4);
  });

  it('never falls below the floor: 0.02, or 0.6 for a core memory', () => {
    const ancient = { lastAccessedAt: daysAgo(5000) };
    expect(stabilityRetention(record(ancient), NOW, stability)).toBe(0.02);
    expect(stabilityRetention(record({ ...ancient, core: true }), NOW, stability)).toBe(0.6);
    expect(stabilityRetention(record({ ...ancient, stability: 0 }), NOW, { kind: 'stability', floor: 0.1 })).toBe(0.1);
  });

  it('agrees with a naive reference for any stability, priority and age', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 1, max: 2, noNaN: true }), fc.double({ min: 0, max: 2000, noNaN: true }), fc.boolean(), (s, priority, days, core) => {
        const lastAccessedAt = daysAgo(days);
        const r = stabilityRetention(record({ stability: s, priority, lastAccessedAt, ...(core ? { core } : {}) }), NOW, stability);
        const tau = s * Math.min(3, 1 + 2 * (priority - 1)) * 120;
        const naive = Math.max(core ? 0.6 : 0.02, tau > 0 ? Math.exp(-((NOW - lastAccessedAt) / DAY_MS) / tau) : 0);
        expect(r).toBeCloseTo(naive, 10);
      }),
    );
  });

  it("decay: { kind: 'stability' } gives R^α as the recency factor, counted from the last access", () => {
    const r = record({ stability: 0.3, createdAt: daysAgo(400), lastAccessedAt: daysAgo(30) });
    // Stability counts from use: the scope of age-based decay does not apply to it.
    for (const inSequence of [true, false]) expect(recency(r, NOW, { decay: stability, decayFrom: 'created', decayAlpha: 0.5, decayScope: 'sequences' }, inSequence)).toBeCloseTo(Math.sqrt(0.4346), 4);
  });

  it('a memory is cold once R has sat at the floor for 7 days; core memories never', () => {
    // τ = 36 days; the floor 0.02 is reached after 36 · ln 50 = 140.8 days
    const reached = 36 * Math.log(50);
    expect(isCold(record({ lastAccessedAt: daysAgo(reached + 6.9) }), NOW)).toBe(false);
    expect(isCold(record({ lastAccessedAt: daysAgo(reached + 7.1) }), NOW)).toBe(true);
    expect(isCold(record({ lastAccessedAt: daysAgo(10_000), core: true }), NOW)).toBe(false);
  });
});

describe('reinforcement (spaced repetition)', () => {
  const learning = defaultLearningOptions;

  it("matches the seed's worked example: S 0.3, last access 10 days ago", () => {
    const before = record({ stability: 0.3, lastAccessedAt: daysAgo(10) });
    expect(spacingFactor(before, NOW, learning)).toBeCloseTo(10 / 7, 12);
    expect(reinforced(before, false, NOW, 's', learning).stability).toBeCloseTo(0.4429, 4);
    expect(reinforced(before, true, NOW, 's', learning).stability).toBeCloseTo(0.3429, 4);
  });

  it('caps the factor at 2 and stability at 1; a retrieval counts an access, sets the last access and records the session', () => {
    const before = record({ stability: 0.95, lastAccessedAt: daysAgo(100), accessCount: 4, sessions: ['a', 'b'] });
    const after = reinforced(before, false, NOW, 'a', learning);
    expect(spacingFactor(before, NOW, learning)).toBe(2);
    expect(after).toMatchObject({ stability: 1, accessCount: 5, lastAccessedAt: NOW, sessions: ['b', 'a'] });
    expect(before.stability).toBe(0.95); // the input is not changed
  });

  it('keeps the latest 8 distinct sessions', () => {
    let r = record();
    for (let i = 0; i < 12; i++) r = reinforced(r, false, NOW, `s${i}`, learning);
    expect(r.sessions).toEqual(['s4', 's5', 's6', 's7', 's8', 's9', 's10', 's11']);
  });

  it('promotes to core exactly at accessCount ≥ 10, stability ≥ 0.85 and ≥ 3 sessions', () => {
    const at = { accessCount: 10, stability: 0.85, sessions: ['a', 'b', 'c'] };
    expect(qualifiesForCore(at, learning)).toBe(true);
    expect(qualifiesForCore({ ...at, accessCount: 9 }, learning)).toBe(false);
    expect(qualifiesForCore({ ...at, stability: 0.8499 }, learning)).toBe(false);
    expect(qualifiesForCore({ ...at, sessions: ['a', 'b'] }, learning)).toBe(false);
    expect(qualifiesForCore(at, { ...learning, core: false })).toBe(false);
    // through reinforcement: the tenth retrieval, spaced a week apart, in a third session
    let r = record({ createdAt: daysAgo(70) });
    for (let i = 0; i < 10; i++) {
      r = reinforced(r, false, daysAgo(63 - 7 * i), `s${i % 3}`, learning);
      expect(r.core === true).toBe(i === 9);
    }
  });
});

describe('associations', () => {
  const rules = { step: 0.1, decayDays: 90, maxPerMemory: 32 };

  it('strengthens every pair of direct hits, both directions, by 0.1 up to 1', () => {
    const graph = new AssociationGraph(rules);
    const changed = graph.strengthen(['a', 'b', 'c', 'a'], NOW);
    expect(changed.map((e) => [e.a, e.b]).sort()).toEqual([['a', 'b'], ['a', 'c'], ['b', 'c']]);
    expect(graph.size).toBe(3);
    for (let i = 0; i < 12; i++) graph.strengthen(['b', 'a'], NOW);
    expect(graph.related('a', NOW)).toEqual([
      { id: 'b', weight: 1, lastAt: NOW },
      { id: 'c', weight: 0.1, lastAt: NOW },
    ]);
    expect(graph.related('b', NOW).map((x) => x.id)).toEqual(['a', 'c']);
  });

  it('decays a weight with time since the pair last formed, and strengthens the decayed weight', () => {
    const graph = new AssociationGraph(rules);
    for (let i = 0; i < 5; i++) graph.strengthen(['a', 'b'], daysAgo(90));
    expect(graph.related('a', NOW)[0]!.weight).toBeCloseTo(0.5 * Math.exp(-1), 12);
    graph.strengthen(['a', 'b'], NOW);
    expect(graph.related('a', NOW)[0]!.weight).toBeCloseTo(0.5 * Math.exp(-1) + 0.1, 12);
    expect(decayedWeight({ weight: 0.8, lastAt: daysAgo(45) }, NOW, 90)).toBeCloseTo(0.8 * Math.exp(-0.5), 12);
  });

  it('follows only associations at or above the 0.3 floor after decay', () => {
    const graph = new AssociationGraph(rules);
    for (let i = 0; i < 3; i++) graph.strengthen(['a', 'b'], NOW); // 0.3
    for (let i = 0; i < 2; i++) graph.strengthen(['a', 'c'], NOW); // 0.2
    expect(graph.around('a', NOW, 0.3).map((x) => x.id)).toEqual(['b']);
    // a day later 0.3 has decayed below the floor
    expect(graph.around('a', NOW + DAY_MS, 0.3)).toEqual([]);
    for (let i = 0; i < 4; i++) graph.strengthen(['a', 'd'], daysAgo(30)); // 0.4 · e^(−1/3) = 0.287
    expect(graph.around('a', NOW, 0.3).map((x) => x.id)).toEqual(['b']);
  });

  it('keeps at most maxPerMemory edges per memory, evicting the weakest after decay, and reports it', () => {
    const graph = new AssociationGraph({ ...rules, maxPerMemory: 3 });
    graph.strengthen(['hub', 'x1'], daysAgo(60)); // the weakest once decayed
    for (const other of ['x2', 'x3']) for (let i = 0; i < 2; i++) graph.strengthen(['hub', other], NOW);
    const changed = graph.strengthen(['hub', 'x4'], NOW);
    expect(changed.map((e) => [e.a, e.b])).toContainEqual(['hub', 'x1']);
    expect(graph.asWrite(changed).remove).toEqual([['hub', 'x1']]);
    expect(graph.related('hub', NOW).map((x) => x.id).sort()).toEqual(['x2', 'x3', 'x4']);
    expect(graph.related('x1', NOW)).toEqual([]);
    expect(graph.size).toBe(3);
  });

  it('removeMemory drops every edge of the memory from both ends', () => {
    const graph = new AssociationGraph(rules);
    graph.strengthen(['a', 'b', 'c'], NOW);
    graph.removeMemory('b');
    expect(graph.size).toBe(1);
    expect(graph.related('a', NOW).map((x) => x.id)).toEqual(['c']);
    expect(graph.related('b', NOW)).toEqual([]);
  });

  it('agrees with a naive pair map under any sequence of co-retrievals', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { maxLength: 4 }), fc.integer({ min: 0, max: 200 })), { maxLength: 30 }), (steps) => {
        const graph = new AssociationGraph({ ...rules, maxPerMemory: 100 });
        const naive = new Map<string, { weight: number; lastAt: number }>();
        let time = NOW;
        for (const [ids, days] of steps) {
          time += days * DAY_MS;
          graph.strengthen(ids, time);
          for (let i = 0; i < ids.length; i++) {
            for (let j = i + 1; j < ids.length; j++) {
              const key = [ids[i], ids[j]].sort().join('|');
              const old = naive.get(key);
              const decayed = old ? old.weight * Math.exp(-(time - old.lastAt) / DAY_MS / 90) : 0;
              naive.set(key, { weight: Math.min(1, decayed + 0.1), lastAt: time });
            }
          }
        }
        for (const [key, edge] of naive) {
          const [a, b] = key.split('|') as [string, string];
          expect(graph.related(a, time).find((x) => x.id === b)?.weight).toBeCloseTo(edge.weight * Math.exp(-(time - edge.lastAt) / DAY_MS / 90), 10);
        }
        expect(graph.size).toBe(naive.size);
      }),
    );
  });
});

describe('the associate stage', () => {
  const unit = (...xs: number[]) => {
    const v = Float32Array.from(xs);
    const n = Math.hypot(...xs);
    return v.map((x) => x / n);
  };
  const query = unit(1, 0, 0);
  const vectorOf: Record<string, Float32Array> = { A: unit(1, 0, 0), B: unit(1, 1, 0), C: unit(1, 0, 3), D: unit(0, 1, 0) };
  const records = new Map(Object.keys(vectorOf).map((id) => [id, record({ id })]));
  const directA: ScoredCandidate = {
    candidate: { id: 'A', fused: 0.8, rank: { lexical: 1, vector: 1 }, legScore: { lexical: 3, vector: 1 } },
    record: records.get('A')!,
    penalty: 1,
    recency: 1,
    boost: 1,
    quality: 0,
    score: 0.8,
  };
  const graph = new AssociationGraph({ step: 0.1, decayDays: 90, maxPerMemory: 32 });
  for (let i = 0; i < 6; i++) graph.strengthen(['A', 'B'], NOW); // 0.6
  for (let i = 0; i < 5; i++) graph.strengthen(['B', 'C'], NOW); // 0.5
  for (let i = 0; i < 2; i++) graph.strengthen(['A', 'D'], NOW); // 0.2: below the floor
  const ctx = (baseline: number) => ({
    graph,
    query,
    summary: (id: string) => (records.has(id) ? { id, createdAt: NOW, tags: [] } : undefined),
    readRecords: () => undefined,
    record: (id: string) => records.get(id),
    vectors: async (ids: string[]) => new Map(ids.map((id) => [id, vectorOf[id]!])),
    eligible: null,
    now: NOW,
    inSequence: () => true,
    baseline,
  });
  const run = (bridgeMinCosine: number, baseline = 0) =>
    associate([directA], { ...defaultSearchOptions, k: 1, decay: false, associations: { floor: 0.3, bridges: true, bridgeMinCosine, limit: 5 } }, ctx(baseline));

  it('scores a first hop fused(via) × calibrated cosine × weight, and a bridge with the product of both weights', async () => {
    const { scored, added, bridges } = await run(0.3);
    expect(added).toBe(2);
    expect(bridges).toBe(1);
    const [a, b, c] = scored;
    expect(a!.candidate.id).toBe('A');
    expect(b!.candidate).toMatchObject({ id: 'B', associative: { via: 'A' } });
    expect(b!.candidate.fused).toBeCloseTo(0.8 * Math.SQRT1_2 * 0.6, 6);
    expect(c!.candidate).toMatchObject({ id: 'C', associative: { via: 'A', bridge: 'B' } });
    expect(c!.candidate.associative!.weight).toBeCloseTo(0.3, 9);
    expect(c!.candidate.fused).toBeCloseTo(0.8 * (1 / Math.sqrt(10)) * 0.3, 6);
    expect(scored.some((s) => s.candidate.id === 'D')).toBe(false); // 0.2 < floor
  });

  it('keeps a bridge only when its cosine reaches bridgeMinCosine, and calibrates to the baseline', async () => {
    expect((await run(0.4)).scored.map((s) => s.candidate.id)).toEqual(['A', 'B']);
    const calibrated = (await run(0.3, 0.5)).scored.find((s) => s.candidate.id === 'B')!;
    expect(calibrated.candidate.fused).toBeCloseTo(0.8 * ((Math.SQRT1_2 - 0.5) / 0.5) * 0.6, 6);
  });
});
