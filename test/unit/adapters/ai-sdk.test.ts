/**
 * engram/ai-sdk through the AI SDK itself: `generateText` with the SDK's mock language model scripted to call the
 * tools, against a real engine; each later step's prompt shows what the tools answered the model.
 */
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { describe, expect, test } from 'vitest';
import { engramTools } from '../../../src/adapters/ai-sdk.js';
import { createEngine, memoryStore } from '../../../src/node.js';
import { testEmbedder } from '../helpers/embedder.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** One model turn that calls a tool. */
const call = (id: string, toolName: string, input: unknown): LanguageModelV3GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});

const say = (text: string): LanguageModelV3GenerateResult => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
});

/** The tool results the model was shown in a step's prompt. */
function toolResults(model: MockLanguageModelV3, step: number): unknown[] {
  return model.doGenerateCalls[step]!.prompt.flatMap((message) =>
    message.role === 'tool' ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part.output] : [])) : [],
  );
}

const engine = () => createEngine({ store: memoryStore(), embedder: testEmbedder({ dim: 64 }), clock: () => Date.UTC(2025, 4, 1) });

describe('engramTools with generateText', () => {
  test('the model remembers, recalls and forgets through a real engine', async () => {
    const memory = await engine();
    await memory.add({ id: 'staging', text: 'Staging moved to eu-west-2 in March', project: 'infra' });
    const model = new MockLanguageModelV3({
      doGenerate: [
        call('c1', 'remember', { text: 'Grandma likes tulips and orchids', tags: ['family'] }),
        call('c2', 'recall', { query: 'which flowers does grandma like?', k: 1 }),
        call('c3', 'forget', { ids: ['staging'] }),
        say('Noted: tulips and orchids; the staging note is gone.'),
      ],
    });

    const result = await generateText({ model, tools: engramTools({ memory, defaults: { scope: 'personal' } }), stopWhen: stepCountIs(6), prompt: 'hi' });

    expect(result.text).toBe('Noted: tulips and orchids; the staging note is gone.');
    expect(model.doGenerateCalls).toHaveLength(4);
    // The model was offered the three tools, with their JSON schemas.
    expect(model.doGenerateCalls[0]!.tools?.map((t) => t.name).sort()).toEqual(['forget', 'recall', 'remember']);

    // remember: stored with the model's tags and the app's defaults.
    const [remembered] = result.steps[0]!.toolResults;
    const id = (remembered!.output as { id: string }).id;
    expect(await memory.get(id)).toMatchObject({ text: 'Grandma likes tulips and orchids', tags: ['family'], scope: 'personal' });

    // recall: the model's next prompt holds the token-budgeted context and the hit ids.
    expect(toolResults(model, 2).at(-1)).toEqual({
      type: 'json',
      value: { context: '[2025-05-01] Grandma likes tulips and orchids', tokens: expect.any(Number), ids: [id] },
    });

    // forget: removed from the engine.
    expect(toolResults(model, 3).at(-1)).toEqual({ type: 'json', value: { removed: 1 } });
    expect(await memory.get('staging')).toBeNull();
    await memory.close();
  });

  test('invalid input from the model is refused by the schema and reaches it as a tool error; nothing is stored', async () => {
    const memory = await engine();
    const model = new MockLanguageModelV3({ doGenerate: [call('c1', 'remember', { text: '' }), say('ok')] });
    const result = await generateText({ model, tools: engramTools({ memory }), stopWhen: stepCountIs(3), prompt: 'hi' });
    expect(result.steps[0]!.content.some((part) => part.type === 'tool-error')).toBe(true);
    expect((await memory.stats()).memories).toBe(0);
    await memory.close();
  });

  test("an Engram error reaches the model as that tool's error, with its message", async () => {
    const memory = await createEngine({ store: memoryStore(), limits: { maxTextLength: 10 } });
    const model = new MockLanguageModelV3({ doGenerate: [call('c1', 'remember', { text: 'far longer than ten characters' }), say('ok')] });
    const result = await generateText({ model, tools: engramTools({ memory }), stopWhen: stepCountIs(3), prompt: 'hi' });
    const failed = result.steps[0]!.content.find((part) => part.type === 'tool-error');
    expect(failed).toMatchObject({ toolName: 'remember', error: expect.objectContaining({ code: 'INVALID_INPUT' }) });
    expect(JSON.stringify(toolResults(model, 1))).toContain('limits.maxTextLength');
    expect((await memory.stats()).memories).toBe(0);
    await memory.close();
  });

  test('an argument the model made up is refused by name, with the one it meant, as a tool error; nothing is stored', async () => {
    const memory = await engine();
    const model = new MockLanguageModelV3({ doGenerate: [call('c1', 'remember', { text: 'Grandma likes tulips', tag: ['family'] }), call('c2', 'recall', { query: 'flowers', limit: 1 }), say('ok')] });
    const result = await generateText({ model, tools: engramTools({ memory }), stopWhen: stepCountIs(4), prompt: 'hi' });
    const errors = result.steps.flatMap((step) => step.content.filter((part) => part.type === 'tool-error'));
    expect(errors.map((part) => [part.toolName, (part.error as Error).message])).toEqual([
      ['remember', expect.stringContaining("unknown argument 'tag' (did you mean 'tags'?)")],
      ['recall', expect.stringContaining("unknown argument 'limit' (did you mean 'k'?)")],
    ]);
    expect((await memory.stats()).memories).toBe(0);
    await memory.close();
  });

  test('refuses misspelt options of its own, of its searches and of its defaults', async () => {
    const memory = await engine();
    expect(() => engramTools({ memory, searchOption: {} } as never)).toThrow("unknown engramTools option 'searchOption' (did you mean 'searchOptions'?)");
    expect(() => engramTools({ memory, searchOptions: { topK: 3 } } as never)).toThrow("unknown search option 'topK' (did you mean 'k'?)");
    expect(() => engramTools({ memory, defaults: { scop: 'personal' } } as never)).toThrow("unknown field 'defaults.scop' (did you mean 'defaults.scope'?)");
    await memory.close();
  });

  test('refuses a memory that cannot write, with a coded error', async () => {
    const memory = await engine();
    expect(() => engramTools({ memory: { search: memory.search.bind(memory) } as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining('add, remove') }),
    );
    await memory.close();
  });
});
