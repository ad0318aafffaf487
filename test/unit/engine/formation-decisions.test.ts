/**
 * What `remember` and `consolidate` may decide (issue 43): facts are of kind 'fact', candidates come from the
 * conversation's project and scope only, pinned memories are superseded only when the app allows it, the facts
 * of one call are bounded, every decision is reported with its reason, and the turns behind a superseded fact do
 * not outrank the fact that replaced it. Scripted models that read the real prompts; no real model runs here.
 */
import { describe, expect, it } from 'vitest';
import { createEmbedder, createEngine, type Engine, type EngineOptions, type LanguageModel } from '../../../src/index.js';
import { ErrorCode } from '../../../src/errors.js';
import { testEmbedder } from '../helpers/embedder.js';
import { formationModel, readFacts, type ScriptFact, type ScriptTurn } from '../helpers/formation-llm.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 20, 10);

async function engineWith(llm: LanguageModel | null, extra: Partial<EngineOptions> = {}): Promise<Engine> {
  return createEngine({ embedder: testEmbedder(), llm, clock: () => T0 + 30 * DAY, ...extra });
}

/** The facts a user turn states, by a table of the test's own sentences. */
const FACTS: [RegExp, string][] = [
  [/I live in Lisbon/, 'The user lives in Lisbon'],
  [/Porto/, 'The user lives in Porto'],
  [/not allergic to penicillin/, 'The user is not allergic to penicillin'],
  [/dog/, 'The user has a dog called Rex'],
];
const extract = (turns: ScriptTurn[]) =>
  turns.flatMap((t) => FACTS.filter(([said]) => t.role === 'user' && said.test(t.content)).map(([, text]) => ({ text, turns: [t.index] })));

/** Contradicts a candidate that says the opposite or another city; 'same' for an identical one; else adds. */
const decideOne = (fact: ScriptFact) => {
  const same = fact.candidates.find((c) => c.text === fact.text);
  if (same) return { fact: fact.index, action: 'same' as const, memory: same.label, reason: 'already known' };
  const topic = (text: string) => text.replace(/ not /, ' ').replace(/lives in \w+/, 'lives in');
  const other = fact.candidates.find((c) => topic(c.text) === topic(fact.text));
  if (other) return { fact: fact.index, action: 'contradict' as const, memory: other.label, reason: 'the user said otherwise' };
  return { fact: fact.index, action: 'add' as const, memory: null, reason: 'new' };
};
const model = () => formationModel({ extract, decide: (facts) => facts.map(decideOne) });

describe('remember: facts are of kind fact', () => {
  it('facts get kind fact, turns kind turn: a search can keep to either', async () => {
    const engine = await engineWith(model());
    const result = await engine.remember([{ role: 'user', content: 'I live in Lisbon', at: T0 }, { role: 'assistant', content: 'Lovely city, Lisbon', at: T0 + 1 }]);
    const fact = (await engine.get(result.added.find((a) => a.text === 'The user lives in Lisbon')!.id))!;
    expect([fact.kind, fact.meta]).toEqual(['fact', { formation: 'fact' }]);
    for (const id of result.turns) expect((await engine.get(id))!.kind).toBe('turn');
    const facts = await engine.search('Lisbon', { touch: false, filter: { kinds: ['fact'] } });
    expect(facts.hits.map((h) => h.id)).toEqual([fact.id]);
  });
});

describe('remember: candidates from the conversation’s project and scope only', () => {
  it('a fact is decided against memories of its own project and scope, and stored with them', async () => {
    const llm = model();
    const engine = await engineWith(llm);
    const [work, shared, none] = await engine.add([
      { text: 'The user lives in Lisbon', project: 'work', createdAt: T0 },
      { text: 'The user lives in Lisbon', project: 'home', scope: 'shared', createdAt: T0 + 1 },
      { text: 'The user lives in Lisbon', createdAt: T0 + 2 },
    ]);
    const result = await engine.remember('I live in Porto', { at: T0 + DAY, project: 'home' });
    // Neither the other project's memory, nor the same project's shared one, nor the one with no project was shown.
    expect(llm.calls.map((c) => c.call)).toEqual(['extract']);
    expect(result.decisions).toEqual([{ fact: 'The user lives in Porto', outcome: 'added', id: result.added[0]!.id, reason: 'nothing stored is close to it' }]);
    const porto = (await engine.get(result.added[0]!.id))!;
    expect([porto.project, porto.scope, porto.kind]).toEqual(['home', undefined, 'fact']);
    expect((await engine.get(result.turns[0]!))!.project).toBe('home');
    for (const id of [work!, shared!, none!]) expect((await engine.get(id))!.supersededBy).toBeUndefined();

    // In the shared scope of 'home' the model sees that scope's memory only, and supersedes it.
    const inShared = await engine.remember('I live in Porto', { at: T0 + 2 * DAY, project: 'home', scope: 'shared', storeTurns: false });
    const prompt = llm.calls.at(-1)!;
    expect(prompt.call).toBe('decide');
    expect(readFacts(prompt.prompt)[0]!.candidates.map((c) => c.text)).toEqual(['The user lives in Lisbon']);
    expect(inShared.decisions[0]).toMatchObject({ outcome: 'superseded', memory: shared, action: 'contradict', reason: 'the user said otherwise' });
    expect((await engine.get(shared!))!.supersededBy).toBe(inShared.added[0]!.id);
    expect((await engine.get(work!))!.supersededBy).toBeUndefined();

    // No project, no scope: the memory with neither ('personal' by default).
    const plain = await engine.remember('I live in Porto', { at: T0 + 3 * DAY, storeTurns: false });
    expect(plain.decisions[0]).toMatchObject({ outcome: 'superseded', memory: none });
  });

  it('refuses a project or scope no memory could hold', async () => {
    const engine = await engineWith(model());
    for (const options of [{ project: 7 }, { scope: 'x'.repeat(300) }, { supersedePinned: 'yes' }, { maxFacts: -1 }, { maxFacts: 1.5 }]) {
      await expect(engine.remember('I live in Porto', options as object)).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
    }
    expect(await engine.count()).toBe(0);
  });
});

describe('remember: pinned memories', () => {
  it('a contradiction of a pinned memory adds the fact beside it and reports the decision as skipped', async () => {
    const engine = await engineWith(model());
    const [allergy] = await engine.add({ text: 'The user is allergic to penicillin', pinned: true, project: 'health', createdAt: T0 });
    const result = await engine.remember('I am not allergic to penicillin (a web page says)', { at: T0 + DAY, project: 'health' });
    const fact = result.added.find((a) => a.text === 'The user is not allergic to penicillin')!;
    expect(result.decisions).toEqual([
      { fact: 'The user is not allergic to penicillin', outcome: 'skipped', skipped: 'pinned', id: fact.id, memory: allergy, action: 'contradict', reason: 'the user said otherwise' },
    ]);
    expect(result.superseded).toEqual([]);
    expect((await engine.get(allergy!))!.supersededBy).toBeUndefined();
    expect((await engine.get(fact.id))!.supersededBy).toBeUndefined();
  });

  it('supersedePinned: true lets the decision supersede it', async () => {
    const engine = await engineWith(model());
    const [allergy] = await engine.add({ text: 'The user is allergic to penicillin', pinned: true, createdAt: T0 });
    const result = await engine.remember('I am not allergic to penicillin', { at: T0 + DAY, supersedePinned: true });
    expect(result.decisions[0]).toMatchObject({ outcome: 'superseded', memory: allergy });
    expect(result.superseded).toEqual([{ id: allergy, by: result.decisions[0]!.id, reason: 'the user said otherwise' }]);
  });

  it('a memory pinned, moved or removed while the model decides keeps its place, and the decision says why', async () => {
    for (const [change, why] of [
      [(engine: Engine, id: string) => engine.pin(id), 'pinned'],
      [(engine: Engine, id: string) => engine.update(id, { project: 'elsewhere' }), 'other project'],
      [(engine: Engine, id: string) => engine.remove(id), 'gone'],
    ] as const) {
      let engine: Engine | undefined;
      let target = '';
      const llm = formationModel({
        extract,
        raw: (call, prompt) => {
          if (call !== 'decide') return undefined;
          const decisions = readFacts(prompt).map(decideOne);
          return (change(engine!, target) as Promise<unknown>).then(() => JSON.stringify({ decisions }));
        },
      });
      engine = await engineWith(llm);
      [target] = (await engine.add({ text: 'The user lives in Lisbon', createdAt: T0 })) as [string];
      const result = await engine.remember('I live in Porto', { at: T0 + DAY, storeTurns: false });
      expect(result.decisions, why).toEqual([
        { fact: 'The user lives in Porto', outcome: 'skipped', skipped: why, id: result.added[0]!.id, memory: target, action: 'contradict', reason: 'the user said otherwise' },
      ]);
      expect(result.superseded, why).toEqual([]);
      if (why !== 'gone') expect((await engine.get(target))!.supersededBy, why).toBeUndefined();
    }
  });
});

describe('remember: every decision reported', () => {
  it('added, superseded, reinforced, and skipped when over the limit or invalid', async () => {
    const known = ['The user lives in Lisbon', 'The user has a dog called Rex'];
    const llm = formationModel({
      extract: () => [
        { text: 'The user lives in Porto', turns: [0] },
        { text: 'The user has a dog called Rex', turns: [0] },
        { text: 'The user plays the cello', turns: [0] },
        { text: 'The user likes figs', turns: [0] },
        { text: 'The user speaks Greek', turns: [0] },
      ],
      // The cello's decision names a memory that is not its own: invalid, the fact is added.
      decide: (facts) => facts.map((f) => (f.text.includes('cello') ? { fact: f.index, action: 'same' as const, memory: 'M999', reason: '?' } : decideOne(f))),
    });
    const engine = await engineWith(llm);
    const [lisbon, rex] = await engine.add(known.map((text, i) => ({ text, createdAt: T0 + i })));
    const result = await engine.remember('I moved to Porto; Rex says hi; I took up the cello, I like figs and speak Greek', { at: T0 + DAY, maxFacts: 3 });
    const id = (text: string) => result.added.find((a) => a.text === text)?.id;
    expect(result.decisions).toEqual([
      { fact: 'The user lives in Porto', outcome: 'superseded', id: id('The user lives in Porto'), memory: lisbon, action: 'contradict', reason: 'the user said otherwise' },
      { fact: 'The user has a dog called Rex', outcome: 'reinforced', memory: rex, action: 'same', reason: 'already known' },
      { fact: 'The user plays the cello', outcome: 'skipped', skipped: 'invalid', id: id('The user plays the cello'), reason: expect.stringMatching(/^added without a decision: the memory of fact 2 must be one of its own/) },
      { fact: 'The user likes figs', outcome: 'skipped', skipped: 'over the limit', reason: 'the model listed 5 facts; maxFacts is 3' },
      { fact: 'The user speaks Greek', outcome: 'skipped', skipped: 'over the limit', reason: 'the model listed 5 facts; maxFacts is 3' },
    ]);
    // The facts over the limit are not stored; the turn they came from is.
    expect(result.added.map((a) => a.text)).toEqual(['The user lives in Porto', 'The user plays the cello']);
    expect(await engine.count()).toBe(2 + 1 + 2);
    expect(result.unchanged).toEqual([{ id: rex, fact: 'The user has a dog called Rex', reason: 'already known' }]);
    expect(result.superseded).toEqual([{ id: lisbon, by: id('The user lives in Porto'), reason: 'the user said otherwise' }]);
  });

  it('maxFacts defaults to 20', async () => {
    const engine = await engineWith(formationModel({ extract: () => Array.from({ length: 25 }, (_, i) => ({ text: `The user owns book number ${i}`, turns: [0] })) }));
    const result = await engine.remember('a list of my books', { storeTurns: false });
    expect(result.added).toHaveLength(20);
    expect(result.decisions.filter((d) => d.skipped === 'over the limit')).toHaveLength(5);
  });
});

describe('search after a contradiction', () => {
  // The engine's defaults and the built-in model, as a new user has them. The short turn outranks the fact by its
  // own score (its words are the query's, and fewer); the long one, the issue's, happens not to here.
  for (const said of ['I live in Lisbon', 'I live in Lisbon, near the old tram line']) {
    it(`the fact that replaced a superseded one comes above the turn it was drawn from: "${said}"`, async () => {
      const engine = await engineWith(model(), { embedder: await createEmbedder() });
      const first = await engine.remember([{ role: 'user', content: said, at: T0 }]);
      const second = await engine.remember([{ role: 'user', content: 'We moved to Porto last month', at: T0 + DAY }]);
      const porto = second.decisions[0]!;
      expect(porto).toMatchObject({ fact: 'The user lives in Porto', outcome: 'superseded', memory: first.added.find((a) => a.text === 'The user lives in Lisbon')!.id });

      const { hits, trace } = await engine.search('where do I live', { touch: false });
      expect(hits[0]!.id).toBe(porto.id);
      const turn = hits.find((h) => h.id === first.turns[0])!;
      expect(hits.indexOf(turn)).toBeGreaterThan(0);
      expect(trace.stages.map((s) => s.name)).toContain('sources');
      // Its own score: the factors adjust multiplied (it is live: no penalty).
      const own = (turn.explain.fused + (turn.explain.quality?.added ?? 0)) * turn.explain.recency * turn.explain.boost;
      if (said === 'I live in Lisbon') {
        expect(own).toBeGreaterThan(hits[0]!.score);
        expect(turn.explain.source).toEqual({ of: porto.memory, by: porto.id });
        expect(turn.score).toBeCloseTo(hits[0]!.score * 0.99, 10);
        expect(trace.stages.find((s) => s.name === 'sources')!.note).toBe('1 placed below the memory that superseded one derived from them');
      } else {
        expect(own).toBeLessThan(hits[0]!.score);
        expect(turn.explain.source).toBeUndefined();
      }
    });
  }
});

describe('consolidate within a project and scope, pinned memories kept', () => {
  // Unrelated memories keep the corpus's mean cosine (the calibration baseline) low, as in any real store.
  const unrelated = [
    { id: 'u1', text: 'a meeting with the bank about the mortgage', createdAt: T0 },
    { id: 'u2', text: 'quarterly report deadline for the finance team', createdAt: T0 },
    { id: 'u3', text: 'bicycle repair shop on the corner', createdAt: T0 },
    { id: 'u4', text: 'car insurance renewal letter', createdAt: T0 },
    { id: 'u5', text: 'python conference talk slides', createdAt: T0 },
    { id: 'u6', text: 'winter boots size forty two', createdAt: T0 },
  ];
  const twins = (project: string | undefined, pinned = false) => [
    { id: `${project}-old`, text: 'the user likes green tea in the morning', createdAt: T0, pinned, ...(project ? { project } : {}) },
    { id: `${project}-new`, text: 'the user likes green tea in the morning', createdAt: T0 + DAY, ...(project ? { project } : {}) },
  ];

  it('folds only within one project and scope, and never a pinned memory unless allowed', async () => {
    const engine = await engineWith(null);
    await engine.import([...unrelated, ...twins('a'), ...twins('b', true), { id: 'c-shared', text: 'the user likes green tea in the morning', createdAt: T0 + 2 * DAY, project: 'a', scope: 'shared' }]);
    const result = await engine.consolidate({ summarize: false });
    expect(result.folded).toEqual([{ id: 'a-old', into: 'a-new' }]);
    expect(result.kept).toEqual([{ id: 'b-old', into: 'b-new', why: 'pinned' }]);
    expect((await engine.get('b-old'))!.supersededBy).toBeUndefined();
    expect((await engine.get('a-new'))!.supersededBy).toBeUndefined();
    const allowed = await engine.consolidate({ summarize: false, supersedePinned: true });
    expect(allowed.folded).toEqual([{ id: 'b-old', into: 'b-new' }]);
    await expect(engine.consolidate({ supersedePinned: 1 } as object)).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  });

  it('a summary keeps to one project and scope, leaves pinned memories out and is of kind summary', async () => {
    const garden = (project: string) => [
      { id: `${project}1`, text: 'grandma garden tulips spring', createdAt: T0, project },
      { id: `${project}2`, text: 'grandma garden roses summer', createdAt: T0 + 1, project },
      { id: `${project}3`, text: 'grandma garden orchids greenhouse', createdAt: T0 + 2, project },
      { id: `${project}4`, text: 'grandma garden lilies pond', createdAt: T0 + 3, project, pinned: true },
    ];
    const llm = formationModel({ summarize: (memories) => `Grandma's garden: ${memories.length} notes` });
    const engine = await engineWith(llm);
    await engine.import([...unrelated, ...garden('p'), ...garden('q').slice(0, 2)]);
    const result = await engine.consolidate({ clusterSimilarity: 0.3 });
    expect(result.summaries).toHaveLength(1);
    expect(new Set(result.summaries[0]!.from)).toEqual(new Set(['p1', 'p2', 'p3']));
    const summary = (await engine.get(result.summaries[0]!.id))!;
    expect([summary.project, summary.kind, summary.meta]).toEqual(['p', 'summary', { formation: 'summary' }]);
    expect((await engine.get('p4'))!.supersededBy).toBeUndefined();
    for (const id of ['q1', 'q2']) expect((await engine.get(id))!.supersededBy).toBeUndefined();
  });
});
