/**
 * The currency stage (search/currency.ts): of two versions of one fact among the hits, the later comes first and the
 * earlier stays, naming it. Through the engine with the real lexical leg (and the built-in model for the demo).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sampleMemories } from '../../../demo/sample-memories.js';
import { createEmbedder } from '../../../src/embedder/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { ScoredCandidate } from '../../../src/search/adjust.js';
import { orderByCurrency } from '../../../src/search/currency.js';
import { memoryRecord } from '../helpers/records.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 2, 1);

describe('currency through createEngine', () => {
  it('in a conversation, the later message with another number comes first; the earlier names it and stays', async () => {
    const engine = await createEngine({ clock: () => T0 + DAY });
    const session = { thread: 'session_2' };
    await engine.add([
      { id: 'first', text: 'My monthly budget for books and subscriptions is 60 euros, and I track it in a spreadsheet', createdAt: T0, meta: session },
      { id: 'chat', text: 'Can you suggest a few novels for the winter?', createdAt: T0 + 60_000, meta: session },
      { id: 'update', text: 'Update: the books budget is now 85 euros a month', createdAt: T0 + 120_000, meta: session },
    ]);
    const { hits, trace } = await engine.search('what is my monthly budget for books and subscriptions', { touch: false });
    const ids = hits.map((h) => h.id);
    expect(ids.indexOf('update')).toBeLessThan(ids.indexOf('first'));
    expect(hits.find((h) => h.id === 'first')!.explain.newerVersion).toBe('update');
    expect(trace.stages.find((s) => s.name === 'currency')!.note).toBe('1 later version placed above the earlier');
    // Off: the earlier, which matches more of the question, is first again.
    const off = await engine.search('what is my monthly budget for books and subscriptions', { touch: false, currency: false });
    expect(off.hits[0]!.id).toBe('first');
    // A question naming what only the earlier says is about the earlier.
    expect((await engine.search('budget spreadsheet 60 euros', { touch: false })).hits[0]!.id).toBe('first');
    await engine.close();
  });

  it('a fact changed twice, with a reply repeating the first version: the newest first, then each below every later one', async () => {
    const engine = await createEngine({ clock: () => T0 + DAY });
    const session = { thread: 'session_4' };
    await engine.add([
      { id: 'v1', text: 'I mentor 5 women in Caribbean media and highlight their success stories in my portfolio', createdAt: T0, meta: session },
      { id: 'reply', text: 'Mentoring 5 women in Caribbean media is a strong story: highlight each mentee in your portfolio with 2 outcomes', createdAt: T0 + 60_000, meta: session },
      { id: 'v2', text: 'My mentees now number 6, all highlighted in my portfolio', createdAt: T0 + 120_000, meta: session },
      { id: 'v3', text: 'The number of mentees highlighted in my portfolio has increased to 7', createdAt: T0 + 180_000, meta: session },
    ]);
    // The question shares a name (Caribbean) with the first version only; an update need not repeat it.
    const { hits } = await engine.search('how many women mentees have I highlighted in my portfolio in Caribbean media', { touch: false });
    const ids = hits.map((h) => h.id);
    expect(ids[0]).toBe('v3');
    expect(ids.indexOf('v2')).toBeLessThan(ids.indexOf('v1'));
    expect(ids.indexOf('v3')).toBeLessThan(ids.indexOf('reply'));
    expect(['v2', 'v3']).toContain(hits.find((h) => h.id === 'v1')!.explain.newerVersion);
    await engine.close();
  });

  it('notes written apart that differ in a detail are other facts, not versions; worded alike, they are', async () => {
    const engine = await createEngine({ clock: () => T0 + 9 * DAY });
    await engine.add([
      { id: 'cabin', text: 'The wifi password at the cabin is pinecone42', createdAt: T0 },
      { id: 'office', text: 'The wifi password at the office is harbour77', createdAt: T0 + DAY },
      { id: 'netlify', text: 'Tidepool is deployed to Netlify from the main branch.', createdAt: T0 + 2 * DAY },
      { id: 'pages', text: 'Tidepool is deployed to Cloudflare Pages from the main branch.', createdAt: T0 + 3 * DAY, tags: ['a', 'b', 'c'] },
    ]);
    const cabin = await engine.search('cabin wifi password', { touch: false });
    expect(cabin.hits[0]!.id).toBe('cabin');
    expect(cabin.hits.find((h) => h.id === 'cabin')!.explain.newerVersion).toBeUndefined();
    const deployed = await engine.search('where is Tidepool deployed from the main branch', { touch: false });
    expect(deployed.hits.map((h) => h.id).slice(0, 2)).toEqual(['pages', 'netlify']);
    expect(deployed.hits[1]!.explain.newerVersion).toBe('pages');
    await engine.close();
  });

  it('one-off notes under one label are its versions; tags count as words the note holds; a run of turns opening with a name is not', async () => {
    const engine = await createEngine({ clock: () => T0 + 400 * DAY });
    await engine.add([
      { id: 'anjos', text: 'Home address: Rua dos Anjos 42, Arroios, Lisbon.', createdAt: T0 },
      { id: 'broker-40', text: 'The Mosquitto broker runs on the Pi at 192.168.1.40.', createdAt: T0 + DAY, tags: ['mqtt', 'network'] },
      { id: 'camoes', text: 'Home address: Rua Luís de Camões 17, Alcântara, Lisbon.', createdAt: T0 + 200 * DAY },
      { id: 'broker-52', text: 'The Mosquitto broker runs on the Pi at 192.168.1.52.', createdAt: T0 + 201 * DAY, tags: ['mqtt', 'network'] },
      // Three turns a minute apart (a sitting), each opening with its speaker: not versions of "Caroline".
      { id: 't1', text: 'Caroline: I went to the pottery class on Sunday and painted a bowl', createdAt: T0 + 300 * DAY },
      { id: 't2', text: 'Melanie: that sounds lovely, what colour was it?', createdAt: T0 + 300 * DAY + 60_000 },
      { id: 't3', text: 'Caroline: I painted a blue vase at the pottery class too', createdAt: T0 + 300 * DAY + 120_000 },
      // A turn stored alone at a later session's date: a speaker's name is no label.
      { id: 't4', text: 'Caroline: the pottery class moved to Tuesdays', createdAt: T0 + 310 * DAY },
    ]);
    // Undated here: no decay, so only the version rule can put the newer first.
    const search = (q: string) => engine.search(q, { touch: false, decay: false });
    const home = await search('home address');
    expect(home.hits.slice(0, 2).map((h) => h.id)).toEqual(['camoes', 'anjos']);
    expect(home.hits[1]!.explain.newerVersion).toBe('camoes');
    const broker = await search('mqtt broker address');
    expect(broker.hits.slice(0, 2).map((h) => h.id)).toEqual(['broker-52', 'broker-40']);
    const pottery = await search('Caroline pottery class bowl');
    expect(pottery.hits[0]!.id).toBe('t1');
    expect(pottery.hits.find((h) => h.id === 't1')!.explain.newerVersion).toBeUndefined();
    await engine.close();
  });

  it("the demo's five changed facts answer with the newer version first (built-in model, defaults, and decay off)", async () => {
    const now = Date.UTC(2026, 11, 1);
    const engine = await createEngine({ embedder: await createEmbedder(), clock: () => now });
    await engine.add(sampleMemories(now));
    const cases: [string, RegExp, RegExp][] = [
      ['where is Tidepool deployed', /Cloudflare Pages/, /Netlify from/],
      ['mqtt broker address', /192\.168\.1\.52/, /192\.168\.1\.40/],
      ['what font do I use in my editor', /Berkeley Mono/, /JetBrains Mono/],
      ['coffee order', /oat milk/, /regular milk/],
      ['home address', /Camões/, /Anjos/],
    ];
    // With decay off too: the version rule, not recency, puts the newer first.
    for (const extra of [{}, { decay: false as const }]) {
      for (const [query, newer, older] of cases) {
        const texts = (await engine.search(query, { touch: false, ...extra })).hits.map((h) => h.text);
        const at = (pattern: RegExp) => texts.findIndex((text) => pattern.test(text));
        expect(at(newer), query).toBe(0);
        expect(at(older), query).toBeGreaterThan(0); // the older version stays findable below it
      }
    }
    await engine.close();
  });
});

describe('orderByCurrency', () => {
  const parts = (later: (a: string, b: string) => boolean) => ({
    query: 'budget euros',
    queryTerms: ['budget', 'euro'],
    textTerms: (text: string) => text.toLowerCase().split(/\W+/).map((w) => w.replace(/s$/, '')),
    isLater: later,
    sameThread: () => true,
  });
  const candidate = (id: string, text: string, score: number): ScoredCandidate => ({
    candidate: { id, fused: score, rank: { lexical: null, vector: null }, legScore: { lexical: null, vector: null } } as unknown as ScoredCandidate['candidate'],
    record: memoryRecord(id, { text }),
    penalty: 1,
    recency: 1,
    boost: 1,
    score,
    quality: 0,
  });

  it('keeps every candidate, only within the k hits, scores in order, and every later version above every earlier one (naive reference)', () => {
    let moves = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 9 }), fc.double({ min: 0.1, max: 1, noNaN: true })), { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 12 }), (rows, k) => {
        const list = rows.map(([n, score], i) => candidate(`m${i}`, `budget ${n} euros`, score)).sort((a, b) => b.score - a.score);
        const before = new Map(list.map((c) => [c.record.id, c.score]));
        const amount = (c: ScoredCandidate) => c.record.text.split(' ')[1];
        const written = (c: ScoredCandidate) => Number(c.record.id.slice(1));
        // Ids in the order written, scores at random: a later version is often ranked below an earlier one.
        const { scored, placed } = orderByCurrency(list, k, { ratio: 0.5 }, parts((a, b) => Number(b.slice(1)) > Number(a.slice(1))));
        moves += placed;
        expect(scored.map((c) => c.record.id).sort()).toEqual(list.map((c) => c.record.id).sort());
        expect(scored.slice(k).map((c) => c.record.id)).toEqual(list.slice(k).map((c) => c.record.id));
        for (let i = 1; i < scored.length; i++) expect(scored[i]!.score).toBeLessThanOrEqual(scored[i - 1]!.score);
        // The reference: of two of the k hits with other amounts, the later is above the earlier when it scored at
        // least half of it.
        const hits = scored.slice(0, k);
        for (let above = 0; above < hits.length; above++) {
          for (let below = above + 1; below < hits.length; below++) {
            const [a, b] = [hits[above]!, hits[below]!];
            const version = written(b) > written(a) && amount(a) !== amount(b) && before.get(b.record.id)! >= 0.5 * before.get(a.record.id)!;
            expect(version, `${b.record.id} (${amount(b)}) is a later version of ${a.record.id} (${amount(a)})`).toBe(false);
          }
        }
        const olders = scored.filter((c) => c.newerVersion !== undefined);
        expect(olders).toHaveLength(placed);
        for (const older of olders) {
          const newer = scored.find((c) => c.record.id === older.newerVersion)!;
          expect(scored.indexOf(newer)).toBeLessThan(scored.indexOf(older));
          const rank = (c: ScoredCandidate) => list.findIndex((l) => l.record.id === c.record.id);
          expect(rank(newer)).toBeGreaterThan(rank(older));
          expect(written(newer)).toBeGreaterThan(written(older));
        }
      }),
    );
    expect(moves).toBeGreaterThan(0);
  });
});
