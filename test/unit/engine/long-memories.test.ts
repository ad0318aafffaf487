/**
 * A collection of long documents (mean memory at least LONG_MEMORY_TERMS indexed terms) searches with the documents
 * defaults (no matched-terms factor, feedback, scaled fusion); chat-length memories keep the others; any option the
 * app sets wins.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, type Engine, type EngineOptions } from '../../../src/index.js';
import { LexicalIndex, LONG_MEMORY_TERMS } from '../../../src/lexical/lexical-index.js';
import { mergeSearchOptions, resolveSearchOptions } from '../../../src/search/options.js';
import { testEmbedder } from '../helpers/embedder.js';
import { memoryRecord } from '../helpers/records.js';

const TOPICS = ['violin', 'harbour', 'garden', 'invoice', 'backup', 'orchestra', 'cello', 'ferry'];

/** `n` memories of `words` distinct content words each, one topic word among them. */
function texts(n: number, words: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const filler = Array.from({ length: words - 1 }, (_, w) => `w${(i * 7 + w * 13) % 997}x`);
    return [TOPICS[i % TOPICS.length], ...filler].join(' ');
  });
}

async function engineOf(memories: string[], extra: Partial<EngineOptions> = {}): Promise<Engine> {
  const engine = await createEngine({ embedder: testEmbedder(), ...extra });
  await engine.add(memories.map((text) => ({ text })));
  return engine;
}

const stageNames = (result: Awaited<ReturnType<Engine['search']>>) => result.trace.stages.map((s) => s.name);
const lexicalNote = (result: Awaited<ReturnType<Engine['search']>>) => result.trace.stages.find((s) => s.name === 'lexical')?.note ?? '';

describe('long memories', () => {
  it('the index tells a collection of long documents from chat-length memories by its mean indexed terms', () => {
    const short = new LexicalIndex();
    short.addAll(texts(20, 15).map((text, i) => memoryRecord(`s${i}`, { text })));
    const long = new LexicalIndex();
    long.addAll(texts(20, LONG_MEMORY_TERMS).map((text, i) => memoryRecord(`l${i}`, { text })));
    expect(short.meanTerms()).toBe(15);
    expect(short.longMemories()).toBe(false);
    expect(long.meanTerms()).toBe(LONG_MEMORY_TERMS);
    expect(long.longMemories()).toBe(true);
    expect(new LexicalIndex().longMemories()).toBe(false);
  });

  it('long: feedback runs, fusion is scaled, the factor is off; short: none of it', async () => {
    const long = await engineOf(texts(40, 120));
    const onLong = await long.search('violin orchestra', { touch: false });
    expect(stageNames(onLong)).toContain('feedback');
    expect(onLong.trace.stages.find((s) => s.name === 'fuse')?.note).toContain('scaled');
    expect(lexicalNote(onLong)).toMatch(/long memories \(mean 120 terms\)/);
    // No factor: a memory matching both terms scores the plain sum, as an engine told so.
    const plain = await engineOf(texts(40, 120), { lexical: { matchedTermsFactor: false } });
    const counted = await engineOf(texts(40, 120), { lexical: { matchedTermsFactor: true } });
    const lexicalOnly = { touch: false, mode: 'lexical', feedback: false, neighbours: false } as const;
    const bm25Of = async (engine: Engine) => (await engine.search('violin w13x', lexicalOnly)).hits[0]!.explain.bm25;
    expect(await bm25Of(long)).toBe(await bm25Of(plain));
    expect(await bm25Of(counted)).toBeCloseTo(2 * (await bm25Of(plain))!, 9);

    const short = await engineOf(texts(40, 12));
    const onShort = await short.search('violin orchestra', { touch: false });
    expect(stageNames(onShort)).not.toContain('feedback');
    expect(onShort.trace.stages.find((s) => s.name === 'fuse')?.note).toBe('convex');
    expect(lexicalNote(onShort)).not.toMatch(/long memories/);
  });

  it('options the app sets win over the documents defaults, from the engine or the call', async () => {
    const byCall = await engineOf(texts(40, 120));
    const result = await byCall.search('violin orchestra', { touch: false, feedback: false, fusion: 'convex' });
    expect(stageNames(result)).not.toContain('feedback');
    expect(result.trace.stages.find((s) => s.name === 'fuse')?.note).toBe('convex');
    const byEngine = await engineOf(texts(40, 120), { search: { fusion: 'rrf' } });
    expect((await byEngine.search('violin', { touch: false })).trace.stages.find((s) => s.name === 'fuse')?.note).toBe('rrf');
  });

  it('mergeSearchOptions keeps what the layers set and nothing else; resolving it later gives the full merge', () => {
    const merged = mergeSearchOptions({ k: 3, feedback: { docs: 4 } as never }, { rerank: { inputLimit: 9 } as never });
    expect(merged).toEqual({ k: 3, feedback: { docs: 4 }, rerank: { inputLimit: 9 } });
    expect(resolveSearchOptions(merged)).toEqual(resolveSearchOptions({ k: 3, feedback: { docs: 4 } as never }, { rerank: { inputLimit: 9 } as never }));
    expect(resolveSearchOptions(merged).feedback).toEqual({ docs: 4, terms: 20, originalWeight: 0.5 });
  });
});
