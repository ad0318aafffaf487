/**
 * Memory formation through the engine in Node (in-memory store, bag-of-words embedder, a scripted model that reads
 * the real prompts): contradiction, repeat, provenance, relative dates, consolidation with and without a model,
 * every fallback, bad input and the idle schedule.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineOptions, type LanguageModel } from '../../../src/index.js';
import { DECIDE_PROMPT, EXTRACT_PROMPT, parseDecisions, parseFacts, SUMMARIZE_PROMPT } from '../../../src/engine/formation-prompts.js';
import { ErrorCode } from '../../../src/errors.js';
import { testEmbedder } from '../helpers/embedder.js';
import { formationModel, type FormationScript, type ScriptFact } from '../helpers/formation-llm.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 20, 10);

async function engineWith(llm: LanguageModel | null, extra: Partial<EngineOptions> = {}): Promise<Engine> {
  return createEngine({ embedder: testEmbedder(), llm, clock: () => T0 + 30 * DAY, ...extra });
}

/** Facts: every user turn, restated in the third person ("I live" → "The user lives"). */
const restate: FormationScript['extract'] = (turns) =>
  turns
    .filter((t) => t.role === 'user')
    .map((t) => ({ text: t.content.replace(/^I /, 'The user ').replace(/\blive\b/, 'lives').replace(/\bwent\b/, 'went'), turns: [t.index] }));

/** A decider that contradicts a candidate naming another city, says 'same' for an identical one, and adds otherwise. */
const cities = (fact: ScriptFact) => {
  const same = fact.candidates.find((c) => c.text === fact.text);
  if (same) return { fact: fact.index, action: 'same' as const, memory: same.label, reason: 'already known' };
  const other = fact.candidates.find((c) => /lives in/.test(c.text) && /lives in/.test(fact.text));
  if (other) return { fact: fact.index, action: 'contradict' as const, memory: other.label, reason: 'moved: a new city' };
  return { fact: fact.index, action: 'add' as const, memory: null, reason: 'new' };
};

describe('remember', () => {
  it('a contradiction supersedes the old fact: search answers the new one, deep recall still finds the old', async () => {
    const llm = formationModel({ extract: restate, decide: (facts) => facts.map(cities) });
    const engine = await engineWith(llm);
    const first = await engine.remember([{ role: 'user', content: 'I live in Lisbon', at: T0 }, { role: 'assistant', content: 'Nice city!', at: T0 + 1000 }]);
    expect(first.fallback).toBeUndefined();
    expect(first.added.map((a) => a.text)).toEqual(['The user lives in Lisbon']);
    expect(first.turns).toHaveLength(2);
    const lisbon = first.added[0]!.id;

    const second = await engine.remember([{ role: 'user', content: 'I live in Porto now', at: T0 + 10 * DAY }]);
    expect(second.added.map((a) => a.text)).toEqual(['The user lives in Porto now']);
    const porto = second.added[0]!.id;
    expect(second.superseded).toEqual([{ id: lisbon, by: porto, reason: 'moved: a new city' }]);
    // The decision call saw the old fact as a candidate.
    expect(llm.calls.map((c) => c.call)).toEqual(['extract', 'extract', 'decide']);
    expect(llm.calls[2]!.prompt).toContain(': The user lives in Lisbon');

    const plain = await engine.search('where does the user live', { touch: false });
    expect(plain.hits.map((h) => h.id)).toContain(porto);
    expect(plain.hits.map((h) => h.id)).not.toContain(lisbon);
    const deep = await engine.search('where does the user live', { touch: false, deepRecall: true });
    expect(deep.hits.map((h) => h.id)).toContain(lisbon);
    expect((await engine.get(lisbon))!.supersededBy).toBe(porto);
    expect(second.tokens.calls).toBe(2);
    expect(second.tokens.promptTokens).toBeGreaterThan(0);
  });

  it('a repeat adds nothing and reinforces the memory that already says it', async () => {
    const engine = await engineWith(formationModel({ extract: restate, decide: (facts) => facts.map(cities) }));
    const first = await engine.remember('I live in Lisbon', { at: T0 });
    const known = first.added[0]!.id;
    const before = (await engine.get(known))!;
    const count = await engine.count();
    const again = await engine.remember('I live in Lisbon', { at: T0 + DAY, storeTurns: false });
    expect(again.added).toEqual([]);
    expect(again.superseded).toEqual([]);
    expect(again.unchanged).toEqual([{ id: known, fact: 'The user lives in Lisbon', reason: 'already known' }]);
    expect(again.turns).toEqual([]);
    expect(await engine.count()).toBe(count);
    const after = (await engine.get(known))!;
    expect(after.accessCount).toBe(before.accessCount + 1);
    expect(after.stability).toBeGreaterThan(before.stability ?? 0);
  });

  it('two calls at once with the same fact store it once: the second decides against what the first wrote', async () => {
    const engine = await engineWith(formationModel({ extract: restate, decide: (facts) => facts.map(cities) }));
    const [a, b] = await Promise.all([
      engine.remember('I live in Lisbon', { at: T0, storeTurns: false }),
      engine.remember('I live in Lisbon', { at: T0 + 1000, storeTurns: false }),
    ]);
    expect(a.added.map((x) => x.text)).toEqual(['The user lives in Lisbon']);
    expect(b.added).toEqual([]);
    expect(b.unchanged).toEqual([{ id: a.added[0]!.id, fact: 'The user lives in Lisbon', reason: 'already known' }]);
    expect(await engine.count()).toBe(1);
  });

  it('provenance walks from each fact to the turns it came from', async () => {
    const llm = formationModel({
      extract: (turns) => [{ text: 'The user has a dog called Rex who is afraid of thunder', turns: [0, 2] }],
    });
    const engine = await engineWith(llm);
    const result = await engine.remember([
      { role: 'user', content: 'My dog is called Rex', at: T0 },
      { role: 'assistant', content: 'What a name!', at: T0 + 1 },
      { role: 'user', content: 'He hides under the bed when it thunders', at: T0 + 2 },
    ]);
    const fact = result.added[0]!.id;
    const why = await engine.why(fact);
    expect(why.edges.map((e) => [e.from, e.to, e.kind])).toEqual([
      [fact, result.turns[0], 'derives_from'],
      [fact, result.turns[2], 'derives_from'],
    ]);
    expect(why.memories.map((m) => [m.text, m.kind, m.meta?.role])).toEqual([
      ['My dog is called Rex', 'turn', 'user'],
      ['He hides under the bed when it thunders', 'turn', 'user'],
    ]);
    // The fact is dated by the latest turn it comes from.
    expect((await engine.get(fact))!.createdAt).toBe(T0 + 2);
  });

  it('resolves relative dates against the time the turn was said, and dates the memory then', async () => {
    const said = Date.UTC(2026, 10, 20, 9, 30); // a Friday
    const engine = await engineWith(
      formationModel({
        extract: () => [
          { text: 'The user went to the dentist yesterday', turns: [0] },
          { text: 'The user flies to Rome in two days and moved house last week', turns: [0] },
        ],
      }),
    );
    const result = await engine.remember([{ role: 'user', content: 'dentist yesterday; Rome in two days; moved last week', at: said }], { storeTurns: false });
    expect(result.added.map((a) => a.text)).toEqual([
      'The user went to the dentist yesterday (yesterday = 2026-11-19)',
      'The user flies to Rome in two days and moved house last week (in two days = 2026-11-22; last week = week of 2026-11-09)',
    ]);
    for (const { id } of result.added) expect((await engine.get(id))!.createdAt).toBe(said);
  });

  it('asks for structured output with a JSON schema, and reads the turns and dates in the prompt', async () => {
    const llm = formationModel({ extract: restate });
    const engine = await engineWith(llm);
    await engine.remember([{ role: 'user', content: 'I live in Lisbon', at: '2026-11-20T10:00:00Z' }]);
    const { prompt, options } = llm.calls[0]!;
    expect(prompt).toBe(EXTRACT_PROMPT.replace('{{conversation}}', '[0] (2026-11-20 10:00) user: I live in Lisbon'));
    expect(options.responseConstraint).toMatchObject({ type: 'object', required: ['facts'] });
    expect(options.maxTokens).toBeGreaterThan(0);
  });

  describe('stores the turns and says why when the model is not used', () => {
    const conversation = [
      { role: 'user', content: 'I live in Lisbon', at: T0 },
      { role: 'assistant', content: 'Noted.', at: T0 + 1 },
    ];
    const cases: [string, LanguageModel | null, string, Record<string, unknown>?][] = [
      ['no model', null, 'NO_MODEL'],
      ['a model that throws', formationModel({ raw: () => Promise.reject(new Error('quota exceeded')) }), 'MODEL_FAILED'],
      ['a model that never answers', formationModel({ raw: () => new Promise(() => {}) }), 'MODEL_TIMEOUT', { timeoutMs: 30 }],
      ['garbled JSON', formationModel({ raw: (call) => (call === 'extract' ? '{"facts": [{"text": "The user' : undefined) }), 'MODEL_UNREADABLE'],
      ['JSON of another shape', formationModel({ raw: () => JSON.stringify({ facts: [{ text: 'x', turns: [7] }] }) }), 'MODEL_UNREADABLE'],
      ['a fenced answer with an extra key', formationModel({ raw: () => '```json\n{"facts":[],"note":"none"}\n```' }), 'MODEL_UNREADABLE'],
    ];
    for (const [name, llm, code, options] of cases) {
      it(name, async () => {
        const engine = await engineWith(llm);
        const result = await engine.remember(conversation, { storeTurns: false, ...options });
        expect(result.fallback?.code).toBe(code);
        expect(result.fallback?.reason).toMatch(/\w/);
        expect(result.added.map((a) => a.text)).toEqual(['I live in Lisbon', 'Noted.']);
        expect(result.turns).toEqual(result.added.map((a) => a.id));
        expect(await engine.count()).toBe(2);
        const stored = await engine.get(result.turns[0]!);
        expect([stored!.kind, stored!.createdAt, stored!.meta]).toEqual(['turn', T0, { role: 'user' }]);
        expect(result.tokens.calls).toBe(llm ? 1 : 0);
      });
    }

    it('a fact too long for a memory is an unreadable answer: the turns are stored', async () => {
      const engine = await engineWith(formationModel({ extract: () => [{ text: 'x'.repeat(60), turns: [0] }] }), { limits: { maxTextLength: 50 } });
      const result = await engine.remember('I live in Lisbon');
      expect(result.fallback?.code).toBe('MODEL_UNREADABLE');
      expect(result.added.map((a) => a.text)).toEqual(['I live in Lisbon']);
    });

    it('no facts in the conversation: the turns are stored, nothing else, and no decision is asked for', async () => {
      const llm = formationModel({ extract: () => [] });
      const engine = await engineWith(llm);
      const result = await engine.remember([{ role: 'user', content: 'hello there' }]);
      expect(result).toMatchObject({ added: [], superseded: [], unchanged: [] });
      expect(result.fallback).toBeUndefined();
      expect(result.turns).toHaveLength(1);
      expect(llm.calls.map((c) => c.call)).toEqual(['extract']);
    });

    it('a failed decision adds the facts and says why in each reason', async () => {
      const llm = formationModel({ extract: restate, raw: (call) => (call === 'decide' ? 'not json' : undefined) });
      const engine = await engineWith(llm);
      await engine.remember('I live in Lisbon', { at: T0 });
      const result = await engine.remember('I live in Porto', { at: T0 + DAY });
      expect(result.fallback).toBeUndefined();
      expect(result.added.map((a) => a.text)).toEqual(['The user lives in Porto']);
      expect(result.added[0]!.reason).toMatch(/^added without a decision: .*could not be read/);
    });
  });

  it('refuses input of another shape with INVALID_INPUT', async () => {
    const engine = await engineWith(formationModel({}));
    const bad: [unknown, unknown?][] = [
      [42],
      [''],
      [[]],
      [[{ role: 'user' }]],
      [[{ role: '', content: 'hi' }]],
      [[{ role: 'user', content: 'hi', at: 'yesterday' }]],
      ['hi', { timeoutMs: -1 }],
      ['hi', { storeTurns: 'yes' }],
      ['hi', 'fast'],
    ];
    for (const [conversation, options] of bad) {
      await expect(engine.remember(conversation as string, options as object)).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
    }
    expect(await engine.count()).toBe(0);
  });
});

describe('consolidate', () => {
  const duplicates = [
    { id: 'old', text: 'the user likes green tea in the morning', createdAt: T0 },
    { id: 'new', text: 'the user likes green tea in the morning', createdAt: T0 + DAY },
    { id: 'other', text: 'a meeting with the bank about the mortgage', createdAt: T0 },
    { id: 'x1', text: 'quarterly report deadline for the finance team', createdAt: T0 },
    { id: 'x2', text: 'bicycle repair shop on the corner', createdAt: T0 },
  ];

  it('without a model folds near-duplicates into the newest; every original stays reachable', async () => {
    const engine = await engineWith(null);
    await engine.import(duplicates); // import keeps duplicates as given (no supersede on import)
    const result = await engine.consolidate();
    expect(result.folded).toEqual([{ id: 'old', into: 'new' }]);
    expect(result.summaries).toEqual([]);
    expect(result.fallback?.code).toBe('NO_MODEL');
    expect(await engine.count()).toBe(5);
    expect((await engine.get('old'))!.supersededBy).toBe('new');
    expect((await engine.search('green tea', { touch: false })).hits.map((h) => h.id)).not.toContain('old');
    // diversity off: the two texts are identical, and MMR would keep one of them.
    expect((await engine.search('green tea', { touch: false, deepRecall: true, diversity: false })).hits.map((h) => h.id)).toContain('old');
    // Done once: a second run finds nothing more to fold.
    expect((await engine.consolidate({ summarize: false })).folded).toEqual([]);
  });

  it('with a model summarises a cluster into one memory that supersedes and derives from each original', async () => {
    const garden = [
      { id: 'g1', text: 'grandma garden tulips spring', createdAt: T0 },
      { id: 'g2', text: 'grandma garden roses summer', createdAt: T0 + 1 },
      { id: 'g3', text: 'grandma garden orchids greenhouse', createdAt: T0 + 2 },
      { id: 'u1', text: 'car insurance renewal letter', createdAt: T0 },
      { id: 'u2', text: 'python conference talk slides', createdAt: T0 },
      { id: 'u3', text: 'winter boots size forty two', createdAt: T0 },
    ];
    const seen: string[][] = [];
    const llm = formationModel({
      summarize: (memories) => {
        seen.push(memories);
        return `Grandma's garden: ${memories.map((m) => m.split(' ').slice(2).join(' ')).join('; ')}`;
      },
    });
    const engine = await engineWith(llm);
    await engine.import(garden);
    const result = await engine.consolidate({ clusterSimilarity: 0.3 });
    expect(result.fallback).toBeUndefined();
    expect(result.summaries).toHaveLength(1);
    const summary = result.summaries[0]!;
    expect(new Set(summary.from)).toEqual(new Set(['g1', 'g2', 'g3']));
    expect(seen[0]!.sort()).toEqual(garden.slice(0, 3).map((m) => m.text).sort());
    expect(llm.calls[0]!.prompt.startsWith(SUMMARIZE_PROMPT.slice(0, SUMMARIZE_PROMPT.indexOf('{{memories}}')))).toBe(true);
    for (const id of ['g1', 'g2', 'g3']) expect((await engine.get(id))!.supersededBy).toBe(summary.id);
    const why = await engine.why(summary.id);
    expect(new Set(why.edges.map((e) => `${e.kind}:${e.to}`))).toEqual(new Set(['derives_from:g1', 'derives_from:g2', 'derives_from:g3']));
    expect(await engine.count()).toBe(7);
    const deep = await engine.search('grandma garden', { touch: false, deepRecall: true, k: 10 });
    expect(deep.hits.map((h) => h.id)).toEqual(expect.arrayContaining(['g1', 'g2', 'g3', summary.id]));
    expect((await engine.search('grandma garden', { touch: false })).hits[0]!.id).toBe(summary.id);
    expect(result.tokens.calls).toBe(1);
  });

  it('a failing model still folds, keeps the cluster as it was and says why', async () => {
    const engine = await engineWith(formationModel({ raw: () => 'no' }));
    await engine.import([...duplicates, { id: 'g4', text: 'the user likes green tea and jasmine', createdAt: T0 }]);
    const result = await engine.consolidate({ clusterSimilarity: 0, minCluster: 2 });
    expect(result.folded).toEqual([{ id: 'old', into: 'new' }]);
    expect(result.summaries).toEqual([]);
    expect(result.fallback?.code).toBe('MODEL_UNREADABLE');
    expect(await engine.count()).toBe(6);
  });

  it('refuses options of another shape', async () => {
    const engine = await engineWith(null);
    for (const options of [1, { minCluster: 1 }, { maxCluster: 2, minCluster: 3 }, { summarize: 'yes' }, { timeoutMs: 0 }, { clusterSimilarity: 'high' }]) {
      await expect(engine.consolidate(options as object)).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
    }
  });

  it('runs by itself once writes pause for idleMs, when asked to', async () => {
    const engine = await engineWith(null, { consolidation: { idleMs: 20, options: { summarize: false } } });
    await engine.import(duplicates);
    await new Promise((resolve) => setTimeout(resolve, 120));
    await engine.flush();
    expect((await engine.get('old'))!.supersededBy).toBe('new');
    await engine.close();
    await expect(createEngine({ consolidation: { idleMs: -5 } })).rejects.toMatchObject({ code: ErrorCode.INVALID_INPUT });
  });
});

describe('the answers are read strictly', () => {
  it('facts', () => {
    expect(parseFacts('{"facts":[{"text":" a ","turns":[0,0,1]}]}', 2)).toEqual([{ text: 'a', turns: [0, 1] }]);
    for (const bad of ['[]', '{"facts":{}}', '{"facts":[{"text":"","turns":[0]}]}', '{"facts":[{"text":"a","turns":[]}]}', '{"facts":[{"text":"a","turns":[0.5]}]}', '{"facts":[{"text":"a","turns":[0],"why":1}]}']) {
      expect(() => parseFacts(bad, 2), bad).toThrow();
    }
  });
  it('decisions: the envelope strictly, each fact on its own', () => {
    const labels = [['M1'], []];
    expect(parseDecisions('{"decisions":[{"fact":1,"action":"add","memory":null,"reason":""},{"fact":0,"action":"same","memory":"M1","reason":"r"}]}', labels)).toEqual([
      { action: 'same', memory: 'M1', reason: 'r' },
      { action: 'add', memory: null, reason: '' },
    ]);
    const add1 = '{"fact":1,"action":"add","memory":null,"reason":""}';
    const cases: [string, RegExp][] = [
      ['{"decisions":[{"fact":0,"action":"same","memory":"M1","reason":"r"}]}', /^fact 1 has no decision$/],
      [`{"decisions":[{"fact":0,"action":"same","memory":"M2","reason":"r"},${add1}]}`, /memory of fact 0 must be one of its own \(M1\)/],
      [`{"decisions":[{"fact":0,"action":"add","memory":"M1","reason":"r"},${add1}]}`, /must be null for add/],
      [`{"decisions":[{"fact":0,"action":"merge","memory":"M1","reason":"r"},${add1}]}`, /not add, update, contradict or same/],
      [`{"decisions":[{"fact":0,"action":"same","memory":"M1"},${add1}]}`, /exactly the keys/],
      [`{"decisions":[{"fact":0,"action":"same","memory":"M1","reason":"r"},{"fact":0,"action":"add","memory":null,"reason":""},${add1}]}`, /decided twice/],
    ];
    for (const [answer, problem] of cases) {
      const read = parseDecisions(answer, labels);
      const invalid = read.flatMap((d) => ('invalid' in d ? [d.invalid] : []));
      expect(invalid, answer).toHaveLength(1);
      expect(invalid[0], answer).toMatch(problem);
    }
    for (const bad of ['[]', '{"decisions":{}}', '{"decisions":[],"note":1}', 'not json']) expect(() => parseDecisions(bad, labels), bad).toThrow();
    expect(DECIDE_PROMPT).toContain('{{facts}}');
  });
});
