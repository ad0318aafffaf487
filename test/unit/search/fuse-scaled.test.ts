/** `'scaled'` and `'blend'` fusion against naive references, and min-max's two defects in a store of a handful of memories. */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder, type LocalEmbedder } from '../../../src/embedder/index.js';
import { createEngine, type Engine, type SearchOptions } from '../../../src/index.js';
import { LexicalIndex } from '../../../src/lexical/lexical-index.js';
import { fuse, fuseBlend, fuseScaled, LEXICAL_BOUND_SHARE, type LegAnchors, type LegResult } from '../../../src/search/fuse.js';
import { scored } from '../helpers/legs.js';
import { runs } from '../helpers/tier.js';

const noBonus = { topRankBonus: false };
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** The formula at the top of fuse.ts, the slow and obvious way. */
function naiveScaled(legs: LegResult[], anchors: LegAnchors): Map<string, number> {
  const active = legs.filter((l) => l.items.length > 0);
  const total = active.reduce((s, l) => s + l.weight, 0);
  const out = new Map<string, number>();
  for (const l of active) {
    const max = Math.max(...l.items.map((i) => i.score));
    for (const { id, score } of l.items) {
      let n: number;
      if (l.leg === 'lexical') {
        const divisor = Math.max((anchors.lexicalBound ?? 0) / 4, max);
        n = divisor > 0 ? Math.max(0, score) / divisor : 0;
      } else {
        const q = anchors.queryBaseline;
        n = q > 0 ? (score >= 1 ? 1 : q >= 1 ? 0 : clamp01((score - q) / (1 - q))) : clamp01(score);
      }
      out.set(id, (out.get(id) ?? 0) + (total > 0 ? l.weight / total : 0) * n);
    }
  }
  return out;
}

const idArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g');
const legArb = (leg: 'lexical' | 'vector', score: fc.Arbitrary<number>) =>
  fc
    .record({ weight: fc.double({ min: 0, max: 2, noNaN: true }), items: fc.uniqueArray(fc.tuple(idArb, score), { selector: ([id]) => id, maxLength: 6 }) })
    .map(({ weight, items }) => scored(leg, [...items].sort((x, y) => y[1] - x[1]), weight));
const lexicalArb = legArb('lexical', fc.double({ min: 0.01, max: 30, noNaN: true }));
const vectorArb = legArb('vector', fc.double({ min: -0.5, max: 1, noNaN: true }));
const anchorsArb = fc.record({
  lexicalBound: fc.option(fc.double({ min: 0, max: 40, noNaN: true }), { nil: null }),
  queryBaseline: fc.double({ min: -0.2, max: 0.99, noNaN: true }),
});

describe("fuse: 'scaled' (absolute scale per leg)", () => {
  it('matches the naive formula for any legs and anchors, best first', () => {
    expect(LEXICAL_BOUND_SHARE).toBe(0.25);
    fc.assert(
      fc.property(lexicalArb, vectorArb, anchorsArb, (lexical, vector, anchors) => {
        const fused = fuse([lexical, vector], { fusion: 'scaled', rrfK: 60, topRankBonus: false }, anchors);
        const expected = naiveScaled([lexical, vector], anchors);
        expect(fused.length).toBe(expected.size);
        for (const c of fused) expect(c.fused).toBeCloseTo(expected.get(c.id)!, 9);
        for (let i = 1; i < fused.length; i++) expect(fused[i - 1]!.fused).toBeGreaterThanOrEqual(fused[i]!.fused);
      }),
      { numRuns: runs(500) },
    );
  });

  it('never gives a lexical match 0, and gives the lexical top full weight only from a quarter of the bound', () => {
    const anchors = { lexicalBound: 20, queryBaseline: 0.8 };
    const weak = fuseScaled([scored('lexical', [['x', 3], ['y', 1]])], noBonus, anchors);
    // max(20 / 4, 3) = 5: the top earns 3/5, the weakest 1/5 (min-max would give it 0).
    expect(weak.map((c) => [c.id, +c.fused.toFixed(12)])).toEqual([['x', 0.6], ['y', 0.2]]);
    expect(fuseScaled([scored('lexical', [['x', 9], ['y', 1]])], noBonus, anchors)[0]!.fused).toBe(1);
  });

  it("gives a vector hit no closer than the query's mean cosine 0, however it ranks", () => {
    const anchors = { lexicalBound: null, queryBaseline: 0.8 };
    expect(fuseScaled([scored('vector', [['top', 0.79], ['next', 0.6]])], noBonus, anchors).map((c) => c.fused)).toEqual([0, 0]);
    expect(fuseScaled([scored('vector', [['top', 0.9]])], noBonus, anchors)[0]!.fused).toBeCloseTo(0.5, 12);
  });
});

describe("fuse: 'blend' (CEMS score blending)", () => {
  it('is ½ · rrf / max rrf + ½ · clamped cosine, against a naive reference', () => {
    fc.assert(
      fc.property(lexicalArb, vectorArb, fc.constantFrom(15, 60), (lexical, vector, rrfK) => {
        const fused = fuseBlend([lexical, vector], { rrfK, topRankBonus: false });
        const rrf = new Map<string, number>();
        const cos = new Map<string, number>();
        for (const l of [lexical, vector]) {
          l.items.forEach(({ id, score }, i) => {
            rrf.set(id, (rrf.get(id) ?? 0) + l.weight / (rrfK + i + 1));
            if (l.leg === 'vector') cos.set(id, score);
          });
        }
        const max = Math.max(0, ...rrf.values());
        for (const c of fused) {
          expect(c.fused).toBeCloseTo(0.5 * (max > 0 ? rrf.get(c.id)! / max : 0) + 0.5 * clamp01(cos.get(c.id) ?? 0), 9);
          expect(c.rrf).toBeCloseTo(rrf.get(c.id)!, 12);
        }
        for (let i = 1; i < fused.length; i++) expect(fused[i - 1]!.fused).toBeGreaterThanOrEqual(fused[i]!.fused);
      }),
    );
  });
});

describe('LexicalIndex.scoreBound', () => {
  it('is the score of a memory holding each indexed query term once at average length; unknown terms are left out', () => {
    const index = new LexicalIndex();
    index.addAll(
      ['alpha beta', 'gamma delta', 'alpha epsilon', 'zeta theta'].map((text, i) => ({ id: `m${i}`, text, tags: [], priority: 1, pinned: false, createdAt: 0, accessCount: 0 })),
    );
    const [top] = index.search('alpha beta', 5);
    const bound = index.scoreBound('alpha beta')!;
    expect(top!.id).toBe('m0');
    expect(top!.score).toBeCloseTo(bound.reference, 12);
    expect(index.scoreBound('alpha beta unknownword')!.reference).toBeCloseTo(bound.reference, 12);
    expect(bound.ceiling).toBeGreaterThan(bound.reference);
    expect([...bound.idf.keys()]).toEqual(['alpha', 'beta']);
    expect(bound.idf.get('beta')!).toBeGreaterThan(bound.idf.get('alpha')!);
    expect(index.scoreBound('unknownword')!.reference).toBe(0);
  });
});

// A store of a handful of memories, with the built-in model: the two defects of plain min-max fusion (issues 15
// and 28), which 'scaled' fixes, and the default 'convex' too since its lexical floor is half the weakest match.
describe("a handful of memories: 'scaled' and 'convex' avoid plain min-max fusion's two defects", () => {
  let embedder: LocalEmbedder;
  let garden: Engine;
  let notes: Engine;
  beforeAll(async () => {
    embedder = await createEmbedder();
    garden = await createEngine({ embedder });
    await garden.add([
      { id: 'g1', text: 'Garden irrigation schedule: water the tomatoes every morning at six.' },
      { id: 'g2', text: 'Garden irrigation schedule moved to every other evening because of the drought rules.', priority: 2 },
    ]);
    notes = await createEngine({ embedder });
    await notes.add([
      { id: 'migration', text: 'Breadbook migration locked the orders table: migrate at night, then backfill.' },
      { id: 'blog', text: 'Blog post "How long does the browser keep your data?" is drafted; the Firefox numbers need measuring again.' },
      { id: 'coffee', text: 'Switched to a lighter roast coffee from the shop on Rua da Rosa.' },
      { id: 'postgres', text: 'Decided to keep Postgres as the database for Tidepool.' },
      { id: 'basil', text: 'Repotted the basil on the balcony greenhouse.' },
    ]);
  });
  afterAll(async () => {
    await garden.close();
    await notes.close();
    await embedder.dispose?.();
  });

  const hits = async (engine: Engine, query: string, fusion: SearchOptions['fusion']) =>
    // neighbours: false: these memories share one instant, and support over time would blur the fusion being tested.
    (await engine.search(query, { fusion, k: 5, touch: false, neighbours: false })).hits.map((h) => ({ id: h.id, score: h.score }));

  it('ranks the priority-2 memory first, with a score > 0, when both contain every query term', async () => {
    const convex = await hits(garden, 'garden irrigation schedule', 'convex');
    // Plain min-max gave the weaker of the two matches 0.
    expect(convex.find((h) => h.id === 'g2')?.score ?? 0).toBeGreaterThan(0);
    const scaled = await hits(garden, 'garden irrigation schedule', 'scaled');
    expect(scaled[0]!.id).toBe('g2');
    expect(scaled[0]!.score).toBeGreaterThan(0);
  });

  it("does not let a vector-only hit sharing no word with the query outrank a memory matching the query's words", async () => {
    const query = 'what did we decide about the database migration';
    const at = (list: { id: string }[], id: string) => list.findIndex((h) => h.id === id);
    for (const fusion of ['scaled', 'convex'] as const) {
      const ranked = await hits(notes, query, fusion);
      const blog = at(ranked, 'blog');
      for (const matching of ['migration', 'postgres']) {
        expect(at(ranked, matching), fusion).toBeGreaterThanOrEqual(0);
        if (blog >= 0) expect(at(ranked, matching), fusion).toBeLessThan(blog);
      }
    }
  });
});
