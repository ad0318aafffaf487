/**
 * Embed calls sized by how long the last one took (BatchSizer), on a clock the embedder itself advances: a slow
 * model gets small batches, so progress (and a follower's write timeout, an abort, a search) comes about every
 * EMBED_BATCH_TARGET_MS; a fast one grows to `embedBatchSize`, doubling at most per batch.
 */
import { describe, expect, it } from 'vitest';
import { BatchSizer, EMBED_BATCH_TARGET_MS, embedInBatches } from '../../../src/engine/embed.js';
import type { Embedder, Progress } from '../../../src/types.js';
import { testEmbedder } from '../helpers/embedder.js';

/** The bag-of-words embedder on a clock it advances by `msPerText(call)` for each text of a call. */
function timedEmbedder(msPerText: (call: number) => number) {
  const clock = { now: 0 };
  const inner = testEmbedder({ dim: 16 });
  const embedder: Embedder = {
    id: inner.id,
    dim: inner.dim,
    async embed(texts) {
      clock.now += msPerText(inner.calls.length) * texts.length;
      return inner.embed(texts);
    },
  };
  return { embedder, clock, sizes: () => inner.calls.map((c) => c.length) };
}

const texts = (n: number) => Array.from({ length: n }, (_, i) => `text number ${i}`);

describe('embedInBatches with a BatchSizer', () => {
  it('a fast model starts at 8 texts and doubles up to the maximum', async () => {
    const { embedder, clock, sizes } = timedEmbedder(() => 0.1);
    const progress: Progress[] = [];
    const out = await embedInBatches(embedder, texts(600), new BatchSizer(128, () => clock.now), (p) => progress.push(p));
    expect(out).toHaveLength(600);
    expect(sizes()).toEqual([8, 16, 32, 64, 128, 128, 128, 96]);
    expect(progress.map((p) => p.done)).toEqual([8, 24, 56, 120, 248, 376, 504, 600]);
    expect(progress.every((p) => p.total === 600)).toBe(true);
  });

  it('a slow model gets batches that each take about the target, so progress keeps coming', async () => {
    const { embedder, clock, sizes } = timedEmbedder(() => 120);
    const reported: number[] = [];
    await embedInBatches(embedder, texts(40), new BatchSizer(128, () => clock.now), () => reported.push(clock.now));
    const fits = Math.floor(EMBED_BATCH_TARGET_MS / 120);
    expect(sizes()).toEqual([8, ...Array<number>(Math.ceil(32 / fits) - 1).fill(fits), 32 % fits || fits]);
    // After the first batch, no gap between two progress reports is longer than the target.
    const gaps = reported.slice(1).map((t, i) => t - reported[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(EMBED_BATCH_TARGET_MS);
  });

  it('shrinks at once when the model slows down, and never below one text', async () => {
    const { embedder, clock, sizes } = timedEmbedder((call) => (call < 3 ? 1 : 2000));
    await embedInBatches(embedder, texts(124), new BatchSizer(64, () => clock.now));
    expect(sizes()).toEqual([8, 16, 32, 64, 1, 1, 1, 1]);
  });

  it('a maximum below the first size is the size of every batch', async () => {
    const { embedder, clock, sizes } = timedEmbedder(() => 0);
    await embedInBatches(embedder, texts(7), new BatchSizer(2, () => clock.now));
    expect(sizes()).toEqual([2, 2, 2, 1]);
  });

  it('a number is the maximum of a sizer on the real clock', async () => {
    const { embedder, sizes } = timedEmbedder(() => 0);
    await embedInBatches(embedder, texts(100), 32);
    expect(sizes().every((n) => n <= 32)).toBe(true);
    expect(sizes()[0]).toBe(8);
    expect(sizes().reduce((a, b) => a + b, 0)).toBe(100);
  });
});
