import { describe, expect, it } from 'vitest';
import { createEngine, type Hit } from '../../../src/index.js';
import { DAY_MS } from '../../../src/util/time.js';

const NOW = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const YEAR_AGO = NOW - 365 * DAY_MS;
/** The default curve a year on: hyperbolic, half-life 60 days, α 0.1. */
const YEAR_OLD = Math.pow(1 / (1 + 365 / 60), 0.1);

const memories = [
  // One-off notes and files: each alone in its stretch of time.
  { id: 'old-note', text: 'The spare house key is under the blue flowerpot', createdAt: YEAR_AGO },
  { id: 'new-note', text: 'The spare car key hangs by the kitchen door', createdAt: NOW - DAY_MS },
  // A sitting a year ago: three notes a minute apart.
  { id: 's0', text: 'Ferry to the island leaves at seven', createdAt: YEAR_AGO + 10 * DAY_MS },
  { id: 's1', text: 'The ferry key card is in the blue wallet', createdAt: YEAR_AGO + 10 * DAY_MS + MINUTE },
  { id: 's2', text: 'Return ferry at six in the evening', createdAt: YEAR_AGO + 10 * DAY_MS + 2 * MINUTE },
  // A chat turn a year ago, alone in its thread.
  { id: 'turn', text: 'I keep a spare bike key in the blue toolbox', createdAt: YEAR_AGO + 20 * DAY_MS, meta: { thread: 'chat-1' } },
];

const byId = (hits: Hit[]) => new Map(hits.map((h) => [h.id, h]));

describe("decayScope through createEngine", () => {
  it("'sequences' (default): a one-off note keeps its score at any age; a sitting's and a thread's decay; 'all' decays each", async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(memories);
    const search = async (options: object) => byId((await engine.search('blue key', { k: 10, mode: 'lexical', touch: false, ...options })).hits);
    const hits = await search({});
    expect(hits.get('old-note')!.explain.recency).toBe(1);
    expect(hits.get('s1')!.explain.recency).toBeCloseTo(Math.pow(1 / (1 + 355 / 60), 0.1), 6);
    expect(hits.get('turn')!.explain.recency).toBeCloseTo(Math.pow(1 / (1 + 345 / 60), 0.1), 9);
    // The old one-off note scores as with decay off; the others as with every memory decayed.
    const off = await search({ decay: false });
    const all = await search({ decayScope: 'all' });
    expect(hits.get('old-note')!.score).toBe(off.get('old-note')!.score);
    expect(all.get('old-note')!.explain.recency).toBeCloseTo(YEAR_OLD, 9);
    for (const id of ['s1', 'turn']) expect(hits.get(id)!.score).toBe(all.get(id)!.score);
    expect(hits.get('s1')!.score).toBeLessThan(off.get('s1')!.score);
    await engine.close();
  });

  it('a sitting is read as neighbour support reads it: its gap, kept current as notes arrive', async () => {
    const engine = await createEngine({ clock: () => NOW });
    await engine.add(memories);
    const recencyOf = async (id: string, options: object = {}) =>
      (await engine.search('blue key', { k: 10, mode: 'lexical', touch: false, decayScope: 'sequences', ...options })).hits.find((h) => h.id === id)!.explain.recency;
    // Neighbour support off: the sitting is still one (the default gap).
    expect(await recencyOf('s1', { neighbours: false })).toBeLessThan(1);
    // A gap shorter than the notes' minute: no sitting, no decay.
    expect(await recencyOf('s1', { neighbours: { window: 2, weight: 0.5, lenders: 20, timeGapMs: 30_000 } })).toBe(1);
    // Two notes written just after the old one-off note make it a sitting.
    await engine.add([
      { id: 'after-1', text: 'Bins go out on Tuesday', createdAt: YEAR_AGO + 5 * MINUTE },
      { id: 'after-2', text: 'Call the plumber about the tap', createdAt: YEAR_AGO + 9 * MINUTE },
    ]);
    expect(await recencyOf('old-note')).toBeCloseTo(YEAR_OLD, 9);
    await engine.close();
  });

  it("'sequences': an imported batch at one instant is no sitting; a dated import ranks as the undated one", async () => {
    const texts = ['Blue whales feed on krill', 'Krill swarms under sea ice', 'Sea ice thins each spring', 'Blue ice forms under pressure'];
    const undated = await createEngine({ clock: () => NOW });
    await undated.add(texts.map((text, i) => ({ id: `d${i}`, text })));
    const dated = await createEngine({ clock: () => NOW });
    // Dates a month or more apart: no sitting.
    await dated.add(texts.map((text, i) => ({ id: `d${i}`, text, createdAt: NOW - (i * 40 + 30) * DAY_MS })));
    for (const query of ['blue krill', 'sea ice', 'blue ice']) {
      const a = (await undated.search(query, { k: 4, mode: 'lexical', touch: false })).hits;
      const b = (await dated.search(query, { k: 4, mode: 'lexical', touch: false, decayScope: 'sequences' })).hits;
      expect(b.map((h) => [h.id, h.score])).toEqual(a.map((h) => [h.id, h.score]));
    }
    await undated.close();
    await dated.close();
  });
});
