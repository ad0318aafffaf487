/**
 * Memory.timeline in real Chromium: the call crosses to the worker (a read, on the method allowlist) and answers
 * the engine's timeline; its refusals keep their codes across the boundary.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser } from './harness.js';
import { openLab } from './pages/memory-lab.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser({ webgpu: false });
});
afterAll(async () => {
  await browser?.close();
});

test('timeline(id, { before, after }) answers the memories around one memory in its thread', async () => {
  const page = await openLab(browser);
  const outcome = await page.evaluate(async () => {
    const memory = await window.engram.createMemory({ name: 'timeline', storage: 'memory', embedder: null });
    const base = Date.UTC(2024, 0, 1);
    await memory.add(
      Array.from({ length: 6 }, (_, i) => ({ id: `t${i}`, text: `turn ${i} of the chat`, createdAt: base + i * 60_000, meta: { thread: 'chat-1' } })),
    );
    await memory.add({ id: 'other', text: 'a note in another thread', createdAt: base + 150_000, meta: { thread: 'chat-2' } });
    const around = await memory.timeline('t3', { before: 2, after: 1 });
    const defaults = await memory.timeline('t0');
    const refusals = await Promise.all(
      [memory.timeline('missing'), memory.timeline('t3', { before: -1 }), memory.timeline('t3', { after: 101 })].map((p) =>
        p.then(
          () => 'resolved',
          (error: { code?: string }) => error.code,
        ),
      ),
    );
    await memory.close();
    return {
      anchor: around.anchor.id,
      before: around.before.map((r) => r.id),
      after: around.after.map((r) => r.id),
      by: around.by,
      defaults: { before: defaults.before.map((r) => r.id), after: defaults.after.map((r) => r.id) },
      refusals,
    };
  });
  expect(outcome).toEqual({
    anchor: 't3',
    before: ['t1', 't2'],
    after: ['t4'],
    by: 'thread',
    defaults: { before: [], after: ['t1', 't2', 't3'] },
    refusals: ['NOT_FOUND', 'INVALID_INPUT', 'INVALID_INPUT'],
  });
  await page.close();
});
