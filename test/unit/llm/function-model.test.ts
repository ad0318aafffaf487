/**
 * functionModel: the options reach the function as the stage passed them, and the answer is shape-checked. The
 * function here is a scripted stand-in for an app's server call (no real model can run here).
 */
import { describe, expect, it } from 'vitest';
import { EngramError } from '../../../src/errors.js';
import { functionModel } from '../../../src/llm/function-model.js';
import type { LlmCallOptions } from '../../../src/llm/types.js';

describe('functionModel', () => {
  it('passes the prompt, maxTokens and signal through and returns text or text with counts', async () => {
    const calls: { prompt: string; options: LlmCallOptions }[] = [];
    const model = functionModel(async (prompt, options) => {
      calls.push({ prompt, options });
      return prompt.startsWith('count') ? { text: 'counted', promptTokens: 7, completionTokens: 2 } : 'plain';
    });
    const controller = new AbortController();
    expect(await model.complete('hello', { maxTokens: 12, signal: controller.signal })).toBe('plain');
    expect(await model.complete('count me', {})).toEqual({ text: 'counted', promptTokens: 7, completionTokens: 2 });
    expect(calls[0]).toEqual({ prompt: 'hello', options: { maxTokens: 12, signal: controller.signal } });
    expect(calls[1]).toEqual({ prompt: 'count me', options: {} });
  });

  it('the signal lets the function stop its own work (as fetch does)', async () => {
    const model = functionModel(
      (_prompt, { signal }) =>
        new Promise<string>((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true })),
    );
    const controller = new AbortController();
    const pending = model.complete('slow', { signal: controller.signal });
    controller.abort(new Error('stage gave up'));
    await expect(pending).rejects.toThrow('stage gave up');
  });

  it.each([
    ['a number', 42],
    ['null', null],
    ['an object without text', { answer: 'x' }],
    ['a negative count', { text: 'x', promptTokens: -1 }],
    ['an infinite count', { text: 'x', completionTokens: Infinity }],
    ['a NaN count', { text: 'x', promptTokens: Number.NaN }],
    ['a count that is a string', { text: 'x', promptTokens: '3' }],
  ])('refuses %s with INVALID_INPUT', async (_label, answer) => {
    const model = functionModel(async () => answer as never);
    const error = await model.complete('q', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngramError);
    expect(error).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('errors the function throws reach the caller unchanged', async () => {
    const failure = new Error('server said 503');
    const model = functionModel(async () => {
      throw failure;
    });
    await expect(model.complete('q', {})).rejects.toBe(failure);
  });

  it('refuses a non-function with INVALID_INPUT', () => {
    expect(() => functionModel('nope' as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
