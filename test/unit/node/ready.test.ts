/** `engine.ready` in Node, on a file: memories stored without a model get vectors once the built-in model attaches. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createEmbedder, createEngine, isEngramError, openNodeStore, type Embedder } from '../../../src/node.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-ready-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('resolves once every stored memory has a vector for the built-in model, after a reopen', async () => {
  const path = join(dir, 'ready.sqlite3');
  const lexical = await createEngine({ store: await openNodeStore({ path }), embedder: null });
  await lexical.add(Array.from({ length: 300 }, (_, i) => ({ text: `note ${i}: grandma likes tulips and orchids number ${i}` })));
  await lexical.close();

  const engine = await createEngine({ store: await openNodeStore({ path }), embedder: await createEmbedder(), embedBatchSize: 32 });
  // Re-indexing runs in the background: not done at open.
  expect(engine.indexing()).not.toBeNull();
  await engine.ready;
  expect(engine.indexing()).toBeNull();
  const { trace } = await engine.search('which flowers does grandma like?', { k: 3 });
  expect(trace.mode).toBe('hybrid');
  await engine.close();
  // The vectors were stored: the next open has nothing to embed.
  const again = await createEngine({ store: await openNodeStore({ path }), embedder: await createEmbedder() });
  expect(again.indexing()).toBeNull();
  await again.ready;
  await again.close();
}, 120_000);

it('rejects with the coded error when the model fails on the stored memories', async () => {
  const path = join(dir, 'fails.sqlite3');
  const lexical = await createEngine({ store: await openNodeStore({ path }) });
  await lexical.add([{ text: 'one' }, { text: 'two' }]);
  await lexical.close();
  // An app's own embedder whose model breaks after loading.
  const broken: Embedder = { id: 'broken@1', dim: 4, embed: async () => Promise.reject(new Error('the session died')) };
  const engine = await createEngine({ store: await openNodeStore({ path }), embedder: broken });
  const error = await engine.ready.catch((e: unknown) => e);
  expect(isEngramError(error, 'EMBEDDER_FAILED')).toBe(true);
  await engine.close();
});
