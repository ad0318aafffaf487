import { describe, expect, it } from 'vitest';
import { createEngine, memoryStore } from '../../../src/index.js';
import { testEmbedder } from '../helpers/embedder.js';
import { randomSource } from '../helpers/vectors.js';

const WORDS = 'river stone garden lamp violin harbor pepper winter ticket cobalt meadow falcon quartz ember saddle'.split(' ');

function texts(seed: number, n: number): string[] {
  const { random } = randomSource(seed);
  return Array.from({ length: n }, () => Array.from({ length: 4 + Math.floor(random() * 6) }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' '));
}

async function engineWith(vectorMemory: 'float32' | 'compact') {
  let now = 1_700_000_000_000;
  return createEngine({ store: memoryStore(), embedder: testEmbedder({ dim: 64 }), vectorMemory, clock: () => (now += 1000) });
}

describe("engine option vectorMemory: 'compact'", () => {
  it('answers every search mode as float32 does (same ids, same scores) and supersedes the same memories', async () => {
    const [float, compact] = [await engineWith('float32'), await engineWith('compact')];
    const corpus = texts(3, 400);
    // Duplicated texts: supersede must mark the same ones in both.
    const input = [...corpus, ...corpus.slice(0, 20)].map((text, i) => ({ id: `m${i}`, text }));
    for (let start = 0; start < input.length; start += 50) {
      await float.add(input.slice(start, start + 50));
      await compact.add(input.slice(start, start + 50));
    }
    const superseded = async (engine: typeof float) => (await engine.export()).filter((r) => r.supersededBy).map((r) => [r.id, r.supersededBy]);
    expect(await superseded(compact)).toEqual(await superseded(float));
    expect((await superseded(float)).length).toBeGreaterThan(0);
    for (const query of texts(9, 12)) {
      for (const mode of ['vector', 'hybrid'] as const) {
        const a = await float.search(query, { mode, touch: false });
        const b = await compact.search(query, { mode, touch: false });
        expect(b.hits.map((h) => [h.id, h.score])).toEqual(a.hits.map((h) => [h.id, h.score]));
      }
    }
    // Import of unchanged texts reuses the stored vectors (exact, read from the store): nothing is embedded again.
    const embedder = compact.embedder as ReturnType<typeof testEmbedder>;
    const callsBefore = embedder.calls.length;
    await compact.import((await compact.export()).slice(0, 30));
    await float.import((await float.export()).slice(0, 30));
    expect(embedder.calls.length).toBe(callsBefore);
    const a = await float.search(corpus[5]!, { mode: 'vector', touch: false });
    const b = await compact.search(corpus[5]!, { mode: 'vector', touch: false });
    expect(b.hits.map((h) => [h.id, h.score])).toEqual(a.hits.map((h) => [h.id, h.score]));
    await float.close();
    await compact.close();
  });

  it('refuses an unknown vectorMemory', async () => {
    await expect(createEngine({ vectorMemory: 'int4' as never })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
