/**
 * The language-model stages (understand, synthesize, hyde, rerank) and the reranker hook, driven by a scripted
 * model: their prompts, list weights, token counts and every failure path. Their quality with a real model cannot
 * be measured offline.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, EngramError, ErrorCode, type EngineOptions, type MemoryInput, type SearchOptions } from '../../../src/index.js';
import { testEmbedder } from '../helpers/embedder.js';
import { scriptedLlm, type StageName } from '../helpers/scripted-llm.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 1);

const memories: MemoryInput[] = [
  { id: 'editor', text: 'I edit my videos in Adobe Premiere Pro on the desktop', createdAt: NOW - 3 * DAY },
  { id: 'camera', text: 'Bought a Sony mirrorless camera for filming the vlog', createdAt: NOW - 10 * DAY },
  { id: 'mic', text: 'The vlog audio comes from a Rode shotgun microphone', createdAt: NOW - 12 * DAY },
  { id: 'garden', text: 'Watered the tomatoes in the garden this morning', createdAt: NOW - 2 * DAY },
  { id: 'trip', text: 'Flew to Lisbon for the conference in March', createdAt: NOW - 60 * DAY },
  { id: 'lens', text: 'A wide lens helps with filming in small rooms', createdAt: NOW - 20 * DAY },
];

/** Stage options with every language-model stage asked for. */
const ALL_LLM: Partial<SearchOptions> = { understand: 'llm', synthesis: 'llm', hyde: true, rerank: { by: 'llm', inputLimit: 40 } };

async function engineWith(options: Partial<EngineOptions> = {}) {
  const engine = await createEngine({ clock: () => NOW, embedder: testEmbedder(), ...options });
  await engine.add(memories);
  return engine;
}

const answers = {
  understand: { text: '{"type":"preference","complexity":"moderate"}', promptTokens: 120, completionTokens: 9 },
  synthesize: { text: 'video editing software\nfilming equipment\nvlog microphone', promptTokens: 80, completionTokens: 12 },
  hyde: { text: 'I use Adobe Premiere Pro to edit my vlog.', promptTokens: 70, completionTokens: 11 },
  rerank: { text: '2, 1', promptTokens: 300, completionTokens: 3 },
} satisfies Record<StageName, unknown>;

describe('language-model stages', () => {
  it("fuse the caller list at weight 2 and each synthesized list at weight 1 (listFusion 'rrf', exact to 4 decimals)", async () => {
    const llm = scriptedLlm({ synthesize: 'filming equipment\nvlog microphone' });
    const engine = await engineWith({ llm, embedder: null });
    const plain: Partial<SearchOptions> = { decay: false, diversity: false, neighbours: false, touch: false, k: 20, raw: true };
    const result = await engine.search('what should I use for my videos', { ...plain, synthesis: 'llm', listFusion: 'rrf' });
    expect(result.trace.queries).toEqual([
      { text: 'what should I use for my videos', source: 'original', weight: 2 },
      { text: 'filming equipment', source: 'llm', weight: 1 },
      { text: 'vlog microphone', source: 'llm', weight: 1 },
    ]);
    // Each list on its own, as the engine ranks that query alone.
    const lists = await Promise.all(result.trace.queries.map(async (q) => (await engine.search(q.text, plain)).hits.map((h) => h.id)));
    const weights = [2, 1, 1];
    const expected = new Map<string, number>();
    lists.forEach((ids, list) => ids.forEach((id, i) => expected.set(id, (expected.get(id) ?? 0) + (weights[list] as number) / (60 + i + 1))));
    const best = weights.reduce((sum, w) => sum + w / 61, 0);
    expect(result.hits.map((h) => h.id).sort()).toEqual([...expected.keys()].sort());
    for (const hit of result.hits) {
      expect(hit.explain.lists!.rrf).toBeCloseTo(expected.get(hit.id)!, 4);
      expect(hit.explain.fused).toBeCloseTo(expected.get(hit.id)! / best, 4);
      expect(hit.explain.lists!.ranks).toEqual(lists.map((ids) => (ids.includes(hit.id) ? ids.indexOf(hit.id) + 1 : null)));
    }
    // The ranking follows the fused score.
    const scores = result.hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it("fuse lists by the weighted mean of each query's fused score with listFusion 'scores' (the default)", async () => {
    const llm = scriptedLlm({ synthesize: 'filming equipment\nvlog microphone' });
    const engine = await engineWith({ llm, embedder: null });
    const plain: Partial<SearchOptions> = { decay: false, diversity: false, neighbours: false, touch: false, k: 20, raw: true };
    const result = await engine.search('what should I use for my videos', { ...plain, synthesis: 'llm' });
    const alone = await Promise.all(result.trace.queries.map(async (q) => new Map((await engine.search(q.text, plain)).hits.map((h) => [h.id, h.explain.fused]))));
    const weights = [2, 1, 1];
    for (const hit of result.hits) {
      const expected = alone.reduce((sum, scores, i) => sum + (weights[i] as number) * (scores.get(hit.id) ?? 0), 0) / 4;
      expect(hit.explain.fused).toBeCloseTo(expected, 4);
      expect(hit.explain.lists!.rrf).toBeUndefined();
    }
    expect(result.hits.length).toBeGreaterThan(0);
  });

  it("make no call in mode 'vector', with every stage asked for", async () => {
    const llm = scriptedLlm(answers);
    const engine = await engineWith({ llm });
    const result = await engine.search('what should I use to edit my vlog', { ...ALL_LLM, mode: 'vector' });
    expect(llm.calls).toEqual([]);
    expect(result.trace.llmCalls).toBe(0);
    expect(result.trace.totalTokens).toBe(0);
    expect(result.trace.stages.find((s) => s.name === 'synthesize')!.note).toMatch(/mode 'vector'/);
    expect(result.hits.length).toBeGreaterThan(0);
  });

  it('make 4 calls in hybrid mode with every stage on (3 with rule routing), and the trace sums their tokens', async () => {
    const llm = scriptedLlm(answers);
    const engine = await engineWith({ llm });
    const result = await engine.search('what should I use to edit my vlog', { ...ALL_LLM, mode: 'hybrid' });
    expect(llm.calls.map((c) => c.stage)).toEqual(['understand', 'synthesize', 'hyde', 'rerank']);
    expect(result.trace.llmCalls).toBe(4);
    const byStage = Object.fromEntries(result.trace.stages.map((s) => [s.name, s]));
    for (const stage of ['understand', 'synthesize', 'hyde', 'rerank'] as const) {
      expect(byStage[stage]).toMatchObject({ promptTokens: answers[stage].promptTokens, completionTokens: answers[stage].completionTokens });
    }
    for (const stage of ['route', 'lexical', 'vector', 'fuse', 'neighbours', 'filter', 'adjust', 'diversify', 'assemble']) {
      expect(byStage[stage]).toMatchObject({ promptTokens: 0, completionTokens: 0 });
    }
    const prompt = Object.values(answers).reduce((n, a) => n + a.promptTokens, 0);
    const completion = Object.values(answers).reduce((n, a) => n + a.completionTokens, 0);
    expect(result.trace).toMatchObject({ promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion });
    expect(result.trace.understanding).toMatchObject({ type: 'preference', complexity: 'moderate', by: 'llm' });
    expect(result.trace.hyde).toBe(answers.hyde.text);
    expect(result.trace.queries.map((q) => q.source)).toEqual(['original', 'llm', 'llm', 'llm', 'hyde']);

    const rules = scriptedLlm(answers);
    const again = await (await engineWith({ llm: rules })).search('what should I use to edit my vlog', { ...ALL_LLM, understand: 'rules', mode: 'hybrid' });
    expect(rules.calls.map((c) => c.stage)).toEqual(['synthesize', 'hyde', 'rerank']);
    expect(again.trace.understanding).toMatchObject({ type: 'preference', by: 'rules' });
  });

  it('ask for 4–5 queries for preference questions, 3–4 for temporal ones, 2–3 otherwise, and cut extra lines', async () => {
    const llm = scriptedLlm({ synthesize: 'one\ntwo\nthree\nfour\nfive\nsix\nseven' });
    const engine = await engineWith({ llm });
    const cases: [string, number][] = [
      ['can you recommend a microphone', 5],
      ['when did I fly to Lisbon', 4],
      ['which camera did I buy', 3],
    ];
    for (const [query, max] of cases) {
      const result = await engine.search(query, { synthesis: 'llm' });
      expect(llm.calls.at(-1)!.prompt).toContain(`Write ${max} short search queries`);
      expect(result.trace.queries.filter((q) => q.source === 'llm')).toHaveLength(max);
    }
  });

  it('embed the HyDE answer as one more vector list only', async () => {
    const llm = scriptedLlm({ hyde: answers.hyde });
    const engine = await engineWith({ llm });
    const result = await engine.search('which program do I cut my films with', { hyde: true, mode: 'hybrid' });
    expect(result.trace.queries).toEqual([
      { text: 'which program do I cut my films with', source: 'original', weight: 2 },
      { text: answers.hyde.text, source: 'hyde', weight: 1 },
    ]);
    const hit = result.hits.find((h) => h.id === 'editor')!;
    expect(hit.explain.lists!.ranks[1]).toBe(1);
    expect(result.trace.stages.find((s) => s.name === 'lexical')!.note).toBe('1 query');
  });

  it('re-order the head by the model, keep the scores in descending order and say where each hit moved', async () => {
    const engine = await engineWith({ llm: scriptedLlm({ rerank: '3, 1' }) });
    const options: Partial<SearchOptions> = { diversity: false, k: 6, touch: false };
    const before = (await engine.search('filming vlog camera', options)).hits.map((h) => h.id);
    const result = await engine.search('filming vlog camera', { ...options, rerank: { by: 'llm', inputLimit: 4 } });
    const after = result.hits.map((h) => h.id);
    expect(after.slice(0, 4)).toEqual([before[2], before[0], before[1], before[3]]);
    expect(after.slice(4)).toEqual(before.slice(4));
    expect(result.hits[0]!.explain.rerank).toEqual({ by: 'llm', from: 3, to: 1 });
    const scores = result.hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('use the app reranker hook, and skip it when it fails', async () => {
    const seen: string[][] = [];
    const engine = await engineWith({
      reranker: (query, candidates) => {
        seen.push(candidates.map((c) => c.id));
        if (query === 'broken') throw new Error('hook down');
        if (query === 'garbled') return 'm1,m2' as never;
        return [...candidates].reverse().map((c) => c.id);
      },
    });
    const options: Partial<SearchOptions> = { diversity: false, k: 3, rerank: { by: 'hook', inputLimit: 3 }, touch: false };
    const result = await engine.search('filming vlog camera', options);
    expect(result.hits.map((h) => h.id)).toEqual([...seen[0]!].reverse());
    const failed = await engine.search('broken', options);
    expect(failed.trace.stages.find((s) => s.name === 'rerank')!.note).toBe('skipped: the reranker failed: hook down');
    const garbled = await engine.search('garbled', options);
    expect(garbled.trace.stages.find((s) => s.name === 'rerank')!.note).toMatch(/^skipped: the reranker answered string: expected an array of ids/);
  });

  describe('a failing model never fails a search', () => {
    const failures: [string, (prompt: string) => unknown, RegExp][] = [
      ['throws', () => Promise.reject(new Error('quota exhausted')), /failed: quota exhausted/],
      ['hangs past llmTimeoutMs', () => new Promise(() => undefined), /did not answer within 50 ms/],
      ['answers a number', () => 42, /something other than text/],
      ['answers an object without text', () => ({ completion: 'x' }), /something other than text/],
      ['answers nothing usable', () => '   ', /could not be read/],
    ];
    for (const [name, answer, note] of failures) {
      it(`when it ${name}`, async () => {
        const llm = scriptedLlm({ understand: answer, synthesize: answer, hyde: answer, rerank: answer });
        const engine = await engineWith({ llm });
        const options: Partial<SearchOptions> = { ...ALL_LLM, mode: 'hybrid', llmTimeoutMs: 50, touch: false };
        const result = await engine.search('what camera do I film the vlog with', options);
        const baseline = await (await engineWith()).search('what camera do I film the vlog with', { mode: 'hybrid', touch: false });
        expect(result.hits.map((h) => h.id)).toEqual(baseline.hits.map((h) => h.id));
        for (const stage of ['understand', 'synthesize', 'hyde', 'rerank']) {
          expect(result.trace.stages.find((s) => s.name === stage)!.note).toMatch(note);
        }
        expect(result.trace.understanding.by).toBe('rules');
        expect(result.trace.queries).toHaveLength(1);
      });
    }

    it('when the model says it is not there (MODEL_NOT_FOUND): no call and no tokens are counted', async () => {
      const absent = () => Promise.reject(new EngramError(ErrorCode.MODEL_NOT_FOUND, 'no model picked'));
      const engine = await engineWith({ llm: scriptedLlm({ understand: absent, synthesize: absent, hyde: absent, rerank: absent }) });
      const result = await engine.search('what camera do I film the vlog with', { ...ALL_LLM, mode: 'hybrid' });
      expect(result.trace.stages.find((s) => s.name === 'synthesize')!.note).toBe('skipped: no language model: no model picked');
      expect(result.trace).toMatchObject({ llmCalls: 0, totalTokens: 0 });
    });

    it('when the model is asked for but the engine has none', async () => {
      const result = await (await engineWith()).search('what camera do I film the vlog with', ALL_LLM);
      expect(result.trace.stages.find((s) => s.name === 'synthesize')!.note).toBe('skipped: no language model (engine option llm)');
      expect(result.trace.llmCalls).toBe(0);
    });
  });

  it('estimate tokens when the model reports none, and hand the stage its limits', async () => {
    const llm = scriptedLlm({ synthesize: 'filming gear' });
    const result = await (await engineWith({ llm })).search('which camera did I buy', { synthesis: 'llm' });
    const stage = result.trace.stages.find((s) => s.name === 'synthesize')!;
    expect(stage.promptTokens).toBe(Math.ceil(llm.calls[0]!.prompt.length / 4));
    expect(stage.completionTokens).toBe(Math.ceil('filming gear'.length / 4));
    expect(llm.calls[0]!.options.maxTokens).toBeGreaterThan(0);
    expect(llm.calls[0]!.options.signal).toBeInstanceOf(AbortSignal);
  });
});
