/**
 * Every search option the validator accepts, swept to the ends of its range: no accepted value may turn one search
 * into a hang (issue 30: `neighbours.window: 1e7` took 15 s over two memories on the leader's only thread). The
 * budget is a hang guard, far above any real search here, not a speed target (those are in `npm run bench`).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, type LocalEmbedder } from '../../../src/embedder/index.js';
import { createEngine, type Engine, type MemoryInput, type SearchOptions } from '../../../src/index.js';
import { MAX_FILTER_VALUES } from '../../../src/search/filter.js';
import { MAX_CANDIDATE_POOL, MAX_K, MAX_NEIGHBOUR_WINDOW, resolveSearchOptions, validateSearchOptions } from '../../../src/search/options.js';
import { runs } from '../helpers/tier.js';

const BUDGET_MS = 5_000;
const WORDS = 'garden coffee invoice deploy database migration token refresh budget meeting trip paris paint guitar dentist yaml backup'.split(' ');

function corpus(): MemoryInput[] {
  const out: MemoryInput[] = [];
  const start = Date.UTC(2026, 0, 1);
  for (let i = 0; i < 1_500; i++) {
    const words = [0, 1, 2, 3].map((j) => WORDS[(i * 7 + j * 5) % WORDS.length]);
    const text = `${words.join(' ')} note ${i} about the ${words[0]} and the ${words[2]}`;
    // A third in chat threads, a third as notes a minute apart, a third as one batch at one instant.
    const kind = i % 3;
    out.push({
      text,
      tags: [WORDS[i % WORDS.length] as string, `t${i % 7}`],
      createdAt: kind === 2 ? start : start + i * 60_000,
      ...(kind === 0 ? { meta: { thread: `s${Math.floor(i / 30)}` } } : {}),
      ...(i % 11 === 0 ? { pinned: true, project: 'p1' } : {}),
    });
  }
  return out;
}

const extreme = (low: number, high: number) => fc.oneof(fc.constantFrom(low, high), fc.double({ min: low, max: high, noNaN: true }));
const extremeInt = (low: number, high: number) => fc.oneof(fc.constantFrom(low, high), fc.integer({ min: low, max: high }));

const accepted: fc.Arbitrary<Partial<SearchOptions>> = fc.record(
  {
    mode: fc.constantFrom('auto', 'lexical', 'vector', 'hybrid'),
    k: extremeInt(1, MAX_K),
    candidatePool: extremeInt(1, MAX_CANDIDATE_POOL),
    fusion: fc.constantFrom('convex', 'scaled', 'rrf', 'blend'),
    rrfK: extreme(0, 1e12),
    weights: fc.record({ lexical: extreme(0, 1e9), vector: extreme(0, 1e9) }),
    topRankBonus: fc.boolean(),
    neighbours: fc.oneof(
      fc.constant(false as const),
      fc.record({
        window: extremeInt(0, MAX_NEIGHBOUR_WINDOW),
        weight: extreme(0, 1e9),
        lenders: extremeInt(0, MAX_CANDIDATE_POOL),
        time: fc.boolean(),
        timeGapMs: fc.constantFrom(0, 1, 60_000, Infinity),
      }),
    ),
    filter: fc.record({ tags: fc.array(fc.constantFrom(...WORDS, 't1', 't3'), { maxLength: 3 }), project: fc.constantFrom('p1', ['p1', 'p2']) }, { requiredKeys: [] }),
    deepRecall: fc.boolean(),
    deepRecallPenalty: extreme(0, 1e9),
    minScore: fc.constantFrom(-Infinity, -1, 0, 0.5, 1e9),
    raw: fc.boolean(),
    decay: fc.oneof(
      fc.constant(false as const),
      fc.record({ kind: fc.constant('hyperbolic' as const), halfLifeDays: fc.constantFrom(1e-9, 60, 1e12) }),
      fc.record({ kind: fc.constant('exponential' as const), tauMs: fc.constantFrom(1e-9, 1e3, 1e15) }),
      fc.record({ kind: fc.constant('stability' as const), betaDays: fc.constantFrom(1e-9, 30, 1e12), floor: fc.constantFrom(0, 1), coreFloor: fc.constantFrom(0, 1) }),
    ),
    decayFrom: fc.constantFrom('created', 'accessed'),
    decayScope: fc.constantFrom('sequences', 'all'),
    decayAlpha: extreme(0, 1e9),
    projectBoost: fc.record({ same: extreme(0, 1e9), other: extreme(0, 1e9), none: extreme(0, 1e9) }),
    pinnedBoost: extreme(0, 1e9),
    dateBoost: extreme(0, 1e9),
    qualityWeight: extreme(0, 1e9),
    diversity: fc.oneof(
      fc.constant(false as const),
      fc.record({ lambda: extreme(0, 1), duplicateThreshold: fc.constantFrom(-1e9, -1, 0, 0.94, 1, 1e9), tagWeight: extreme(0, 1) }),
    ),
    assembly: fc.constantFrom('greedy', 'diverse', 'auto', 'cover', 'hedge'),
    synthesis: fc.constantFrom(false as const, 'offline' as const),
    feedback: fc.oneof(fc.constant(false as const), fc.record({ docs: extremeInt(1, 100), terms: extremeInt(1, 200), originalWeight: fc.constantFrom(1e-9, 0.5, 1) })),
    originalQueryWeight: extreme(0, 1e9),
    listFusion: fc.constantFrom('scores', 'rrf'),
    rerank: fc.oneof(
      fc.constant(false as const),
      fc.record({ by: fc.constant('rules' as const), inputLimit: extremeInt(1, 200), weights: fc.record({ coverage: extreme(0, 1e9), proximity: extreme(0, 1e9) }) }),
    ),
    associations: fc.oneof(fc.constant(false as const), fc.record({ floor: extreme(0, 1), bridges: fc.boolean(), bridgeMinCosine: extreme(-1, 1), limit: extremeInt(1, MAX_K) })),
    tokenBudget: extreme(0, 1e12),
    touch: fc.boolean(),
    reinforce: fc.boolean(),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<Partial<SearchOptions>>;

describe('accepted search options stay within a budget', () => {
  let embedder: LocalEmbedder;
  let engine: Engine;

  beforeAll(async () => {
    embedder = await createEmbedder();
    engine = await createEngine({ embedder, clock: () => Date.UTC(2026, 6, 1) });
    await engine.add(corpus());
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    await embedder?.dispose();
  });

  it('the bounds refuse what lies past them', () => {
    const refused: Partial<SearchOptions>[] = [
      { neighbours: { window: MAX_NEIGHBOUR_WINDOW + 1, weight: 0.5, lenders: 20 } },
      { neighbours: { window: 1e7, weight: 0.5, lenders: 20 } },
      { neighbours: { window: 2, weight: 0.5, lenders: MAX_CANDIDATE_POOL + 1 } },
      { k: MAX_K + 1 },
      { candidatePool: MAX_CANDIDATE_POOL + 1 },
      { feedback: { docs: 101, terms: 20, originalWeight: 0.5 } },
      { feedback: { docs: 10, terms: 201, originalWeight: 0.5 } },
    ];
    for (const options of refused) expect(() => validateSearchOptions(resolveSearchOptions(options))).toThrow(/search option/);
    return expect(engine.search('garden', { filter: { tags: Array.from({ length: MAX_FILTER_VALUES + 1 }, (_, i) => `t${i}`) } })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('every search over the accepted ranges answers, well-formed, within the budget', async () => {
    let slowest = 0;
    await fc.assert(
      fc.asyncProperty(accepted, fc.constantFrom('garden coffee', 'database migration plan', 'note 42', 'what did we say about paris and the guitar?', 'the garden in june 2026'), async (options, query) => {
        const started = performance.now();
        const { hits, context } = await engine.search(query, options);
        const took = performance.now() - started;
        slowest = Math.max(slowest, took);
        expect(took).toBeLessThan(BUDGET_MS);
        expect(hits.length).toBeLessThanOrEqual(options.k ?? 5);
        for (const hit of hits) expect(Number.isNaN(hit.score)).toBe(false);
        expect(context).toBeDefined();
      }),
      { numRuns: runs(60) },
    );
    console.info(`accepted-range sweep: slowest search ${slowest.toFixed(0)} ms`);
    expect(slowest).toBeLessThan(BUDGET_MS);
  }, 600_000);

  it('a window of the largest accepted size over two memories answers at once (it used to walk every place)', async () => {
    const small = await createEngine({ clock: () => Date.UTC(2026, 0, 2) });
    await small.add([{ text: 'garden plan', meta: { thread: 'a' } }, { text: 'watering schedule', meta: { thread: 'a' } }]);
    const { hits } = await small.search('garden', { mode: 'lexical', neighbours: { window: MAX_NEIGHBOUR_WINDOW, weight: 0.5, lenders: MAX_CANDIDATE_POOL } });
    expect(hits.map((h) => h.text)).toEqual(['garden plan', 'watering schedule']);
    await small.close();
  });
});
