import { describe, expect, it } from 'vitest';
import { defaultSearchOptions, MAX_CANDIDATE_POOL, MAX_K, resolveSearchOptions, validateSearchOptions, type SearchOptions } from '../../../src/search/options.js';

describe('search options', () => {
  it('defaults are the documented ones', () => {
    expect(validateSearchOptions(resolveSearchOptions())).toMatchObject({
      mode: 'auto', k: 5, candidatePool: 50, fusion: 'convex', rrfK: 60, weights: { lexical: 0.8, vector: 0.2 }, topRankBonus: false,
      neighbours: { window: 2, weight: 0.5, lenders: 20, time: true, timeGapMs: 1_800_000 },
      deepRecall: false, deepRecallPenalty: 0.5, minScore: 0, raw: false, decay: { kind: 'hyperbolic', halfLifeDays: 60 },
      decayFrom: 'created', decayAlpha: 0.1, decayScope: 'sequences', projectBoost: { same: 1.3, other: 0.8, none: 0.9 }, pinnedBoost: 1.1, dateBoost: 4,
      diversity: { lambda: 1, tagWeight: 0.35 }, tokenBudget: 2000, touch: true,
      understand: 'rules', synthesis: false, originalQueryWeight: 2, hyde: false, rerank: false, llmTimeoutMs: 20_000,
      assembly: 'hedge', qualityWeight: 0.1, feedback: false,
    });
  });

  it('layers merge in order, nested objects one level deep, decay replaced whole', () => {
    const o = resolveSearchOptions({ k: 3, weights: { lexical: 2 } as never, decay: { kind: 'exponential', tauMs: 5 } }, { weights: { vector: 0.5 } as never, k: undefined });
    expect(o.k).toBe(3);
    expect(o.weights).toEqual({ lexical: 2, vector: 0.5 });
    expect(o.decay).toEqual({ kind: 'exponential', tauMs: 5 });
  });

  it('a partial object after false merges over the default', () => {
    const o = resolveSearchOptions({ diversity: false }, { diversity: { lambda: 0.5 } as never });
    expect(o.diversity).toEqual({ lambda: 0.5, tagWeight: 0.35 });
    expect(resolveSearchOptions({ diversity: false }).diversity).toBe(false);
  });

  it('rejects a bad fusion method or neighbour setting', () => {
    expect(() => validateSearchOptions(resolveSearchOptions({ fusion: 'sum' as never }))).toThrow(/fusion/);
    expect(() => validateSearchOptions(resolveSearchOptions({ neighbours: { window: 1.5, weight: 0.5, lenders: 20 } }))).toThrow(/neighbours.window/);
    expect(() => validateSearchOptions(resolveSearchOptions({ neighbours: { window: 2, weight: -1, lenders: 20 } }))).toThrow(/neighbours.weight/);
    expect(() => validateSearchOptions(resolveSearchOptions({ neighbours: { window: 2, weight: 0.5, lenders: -3 } }))).toThrow(/neighbours.lenders/);
    expect(validateSearchOptions(resolveSearchOptions({ neighbours: false })).neighbours).toBe(false);
    expect(resolveSearchOptions({ neighbours: { weight: 0.2 } as never }).neighbours).toEqual({ window: 2, weight: 0.2, lenders: 20, time: true, timeGapMs: 1_800_000 });
  });

  it('checks the stage options, and a partial rerank fills in the rest', () => {
    const bad: [Partial<SearchOptions>, RegExp][] = [
      [{ understand: 'model' as never }, /understand/],
      [{ synthesis: true as never }, /synthesis/],
      [{ originalQueryWeight: -1 }, /originalQueryWeight/],
      [{ hyde: 'yes' as never }, /hyde/],
      [{ rerank: { by: 'magic' } as never }, /rerank.by/],
      [{ rerank: { inputLimit: 201 } as never }, /rerank.inputLimit/],
      [{ llmTimeoutMs: 0 }, /llmTimeoutMs/],
      [{ assembly: 'random' as never }, /assembly/],
      [{ qualityWeight: Number.NaN }, /qualityWeight/],
      [{ diversity: { tagWeight: 2 } as never }, /diversity.tagWeight/],
      [{ feedback: true as never }, /feedback/],
      [{ feedback: { docs: 0 } as never }, /feedback.docs/],
      [{ feedback: { docs: 101 } as never }, /feedback.docs/],
      [{ feedback: { terms: 2.5 } as never }, /feedback.terms/],
      [{ feedback: { terms: 201 } as never }, /feedback.terms/],
      [{ feedback: { originalWeight: 0 } as never }, /feedback.originalWeight/],
      [{ feedback: { originalWeight: 1.5 } as never }, /feedback.originalWeight/],
      [{ feedback: { originalWeight: Number.NaN } as never }, /feedback.originalWeight/],
    ];
    for (const [options, message] of bad) expect(() => validateSearchOptions(resolveSearchOptions(options))).toThrow(message);
    expect(resolveSearchOptions({ rerank: { by: 'llm' } as never }).rerank).toEqual({ by: 'llm', inputLimit: 40 });
    expect(resolveSearchOptions({ rerank: { inputLimit: 10 } as never }, { rerank: false }).rerank).toBe(false);
    expect(resolveSearchOptions({ feedback: {} as never }).feedback).toEqual({ docs: 10, terms: 20, originalWeight: 0.5 });
    expect(resolveSearchOptions({ feedback: { terms: 5 } as never }).feedback).toEqual({ docs: 10, terms: 5, originalWeight: 0.5 });
  });

  it('never mutates the frozen defaults', () => {
    resolveSearchOptions({ weights: { lexical: 9, vector: 9 } });
    expect(defaultSearchOptions.weights).toEqual({ lexical: 0.8, vector: 0.2 });
    expect(Object.isFrozen(defaultSearchOptions)).toBe(true);
  });

  it('k is at most 1,000 and candidatePool at most 10,000 (k: 2**31 is refused, not allocated)', () => {
    expect([MAX_K, MAX_CANDIDATE_POOL]).toEqual([1_000, 10_000]);
    expect(() => validateSearchOptions(resolveSearchOptions({ k: 1_000, candidatePool: 10_000 }))).not.toThrow();
    for (const options of [{ k: 2 ** 31 }, { k: 1_001 }, { candidatePool: 10_001 }, { candidatePool: Number.MAX_SAFE_INTEGER }]) {
      expect(() => validateSearchOptions(resolveSearchOptions(options))).toThrow(/search option (k|candidatePool) must be an integer from 1 to/);
    }
  });
});
