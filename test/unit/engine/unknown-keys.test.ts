/**
 * Unknown option names and record fields are refused with INVALID_INPUT naming the key and the nearest valid one,
 * wherever they enter the engine: createEngine and its nested options, search options and their nested objects,
 * records on add, import and update, and createEmbedder. A createdAt that can only be seconds is refused on add.
 */
import { describe, expect, it } from 'vitest';
import { createEmbedder, createEngine, type EngineOptions, type SearchOptions } from '../../../src/node.js';
import { ENGINE_OPTION_KEYS } from '../../../src/engine/options.js';
import { SEARCH_OPTION_KEYS } from '../../../src/search/option-keys.js';
import { defaultSearchOptions } from '../../../src/search/options.js';

const refused = (message: string) => expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining(message) });

describe('createEngine options', () => {
  it('refuses a misspelt option, naming the one meant', async () => {
    await expect(createEngine({ embeder: null } as EngineOptions)).rejects.toEqual(refused("unknown option 'embeder' (did you mean 'embedder'?)"));
    await expect(createEngine({ serach: {} } as EngineOptions)).rejects.toEqual(refused("(did you mean 'search'?)"));
    await expect(createEngine({ colour: 'red' } as EngineOptions)).rejects.toEqual(refused("unknown option 'colour': valid options are 'store', 'embedder'"));
  });

  it('refuses misspelt fields of its nested options', async () => {
    const cases: [EngineOptions, string][] = [
      [{ limits: { maxTextLenght: 10 } } as EngineOptions, "'limits.maxTextLenght' (did you mean 'limits.maxTextLength'?)"],
      [{ learning: { directBost: 0.1 } } as EngineOptions, "(did you mean 'learning.directBoost'?)"],
      [{ learning: { core: { accessCount: 1, stability: 0.5, session: 2 } } } as never, "(did you mean 'learning.core.sessions'?)"],
      [{ lexical: { stopwords: false } } as EngineOptions, "(did you mean 'lexical.stopWords'?)"],
      [{ lexical: { bm25: { k: 1, b: 0.7, d: 0.5, k1: 2 } } } as EngineOptions, "unknown option 'lexical.bm25.k1'"],
      [{ consolidation: { idleMs: 10, option: {} } } as EngineOptions, "(did you mean 'consolidation.options'?)"],
      [{ search: { limit: 3 } } as EngineOptions, "unknown search option 'limit' (did you mean 'k'?)"],
    ];
    for (const [options, message] of cases) await expect(createEngine(options), message).rejects.toEqual(refused(message));
  });

  it('takes every declared option name', async () => {
    // `supersede` is declared ahead of its implementation; every other name is an EngineOptions field.
    expect(ENGINE_OPTION_KEYS).toContain('supersede');
    const engine = await createEngine({ store: undefined, embedder: null, search: {}, limits: {}, learning: {}, lexical: {}, consolidation: false });
    await engine.close();
  });
});

describe('search options', () => {
  it('refuses a misspelt search option or field, suggesting the one meant', async () => {
    const engine = await createEngine();
    await engine.add({ text: 'Staging moved to eu-west-2', project: 'infra' });
    const cases: [object, string][] = [
      [{ limit: 1 }, "unknown search option 'limit' (did you mean 'k'?)"],
      [{ topK: 1 }, "(did you mean 'k'?)"],
      [{ projet: 'infra' }, "(did you mean 'project'?)"],
      [{ filter: { projects: ['infra'] } }, "unknown search option 'filter.projects' (did you mean 'filter.project'?)"],
      [{ weights: { bm25: 1 } }, "unknown search option 'weights.bm25' (did you mean 'weights.lexical'?)"],
      [{ rerank: { by: 'rules', inputLimt: 5 } }, "(did you mean 'rerank.inputLimit'?)"],
      [{ rerank: { by: 'rules', weights: { coverge: 1, proximity: 0 } } }, "(did you mean 'rerank.weights.coverage'?)"],
      [{ decay: { kind: 'hyperbolic', halfLife: 3 } }, "(did you mean 'decay.halfLifeDays'?)"],
      [{ decay: { kind: 'exponential', tauMs: 3, halfLifeDays: 3 } }, "unknown search option 'decay.halfLifeDays'"],
      [{ neighbours: { windows: 2 } }, "(did you mean 'neighbours.window'?)"],
      [{ diversity: { lamda: 0.5 } }, "(did you mean 'diversity.lambda'?)"],
      [{ associations: { flor: 0.2 } }, "(did you mean 'associations.floor'?)"],
      [{ feedback: { doc: 5 } }, "(did you mean 'feedback.docs'?)"],
      [{ projectBoost: { sme: 1 } }, "(did you mean 'projectBoost.same'?)"],
    ];
    for (const [options, message] of cases) await expect(engine.search('staging', options as Partial<SearchOptions>), message).rejects.toEqual(refused(message));
    await engine.close();
  });

  it('declares every option the defaults hold, and takes them all', async () => {
    expect([...SEARCH_OPTION_KEYS].sort()).toEqual(Object.keys(defaultSearchOptions).sort());
    const engine = await createEngine();
    await engine.add({ text: 'Staging moved to eu-west-2' });
    const { boost: _boost, ...plain } = defaultSearchOptions;
    expect((await engine.search('staging', { ...plain, boost: () => 1 })).hits).toHaveLength(1);
    await engine.close();
  });
});

describe('records', () => {
  it('refuses an unknown field on add, import and update, naming the memory and the field meant', async () => {
    const engine = await createEngine();
    await expect(engine.add({ text: 'a', tag: 'x' } as never)).rejects.toEqual(refused("unknown field 'memory.tag' (did you mean 'memory.tags'?)"));
    await expect(engine.add([{ text: 'a' }, { text: 'b', projcet: 'p' } as never])).rejects.toEqual(refused("unknown field 'memory[1].projcet' (did you mean 'memory[1].project'?)"));
    await expect(engine.import([{ text: 'a', acessCount: 3 } as never])).rejects.toEqual(refused("(did you mean 'records[0].accessCount'?)"));
    const [id] = await engine.add({ text: 'a' });
    await expect(engine.update(id!, { txt: 'b' } as never)).rejects.toEqual(refused("unknown field 'patch.txt' (did you mean 'patch.text'?)"));
    // Nothing was written by the refused calls.
    expect(await engine.count()).toBe(1);
    // What export gives, import takes back.
    const exported = await engine.export();
    await engine.remove(id!);
    expect(await engine.import(exported)).toEqual([id]);
    await engine.close();
  });

  it('refuses a createdAt that can only be seconds on add and update, and says so; import keeps a stored one', async () => {
    const engine = await createEngine();
    await expect(engine.add({ text: 'a', createdAt: 1_714_000_000 })).rejects.toEqual(refused('memory.createdAt is 1714000000, which looks like seconds'));
    const [id] = await engine.add({ text: 'a', createdAt: 1_714_000_000_000 });
    await expect(engine.update(id!, { createdAt: 1_714_000_000 })).rejects.toEqual(refused('looks like seconds'));
    // 0 (the epoch itself), dates as strings or Dates, and anything from 1973 on in ms are dates.
    await engine.add([{ text: 'b', createdAt: 0 }, { text: 'c', createdAt: '1970-01-02' }, { text: 'd', createdAt: 1e11 }, { text: 'e', createdAt: -5 }]);
    // A record as stored keeps its date, whatever it is: an export always imports again.
    expect(await engine.import([{ id: 'old', text: 'kept as it was', createdAt: 5 }])).toEqual(['old']);
    expect((await engine.get('old'))!.createdAt).toBe(5);
    await engine.close();
  });
});

describe('createEmbedder options', () => {
  it('refuses a misspelt option before loading anything', async () => {
    await expect(createEmbedder({ modelId: 'Xenova/all-MiniLM-L6-v2' } as never)).rejects.toEqual(refused("unknown option 'modelId' (did you mean 'model'?)"));
    await expect(createEmbedder({ prompts: { passage: 'p: ' } } as never)).rejects.toEqual(refused("(did you mean 'prompts.document'?)"));
  });
});

describe('method options', () => {
  it('timeline, why, link, remember (and its messages) and consolidate refuse a misspelt option, as a rejection', async () => {
    const engine = await createEngine();
    const [a, b] = await engine.add([{ text: 'a' }, { text: 'b' }]);
    await expect(engine.timeline(a!, { befor: 2 } as never)).rejects.toEqual(refused("unknown timeline option 'befor' (did you mean 'before'?)"));
    await expect(engine.why(a!, { dept: 2 } as never)).rejects.toEqual(refused("(did you mean 'depth'?)"));
    await expect(engine.link(a!, b!, 'references', { confidense: 0.5 } as never)).rejects.toEqual(refused("(did you mean 'confidence'?)"));
    await expect(engine.remember('hello', { storeTurn: false } as never)).rejects.toEqual(refused("(did you mean 'storeTurns'?)"));
    await expect(engine.remember([{ role: 'user', text: 'hello' }] as never)).rejects.toEqual(refused("unknown field 'remember: messages[0].text' (did you mean 'remember: messages[0].content'?)"));
    await expect(engine.consolidate({ minClusters: 2 } as never)).rejects.toEqual(refused("(did you mean 'minCluster'?)"));
    expect(await engine.count()).toBe(2);
    await engine.close();
  });
});
