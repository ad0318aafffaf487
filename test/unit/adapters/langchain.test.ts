/**
 * engram/langchain inside a real LangChain chain: retriever → format → prompt → FakeListChatModel → parser, with
 * the prompt the model received read through LangChain's own callbacks.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import type { Document } from '@langchain/core/documents';
import { describe, expect, test } from 'vitest';
import { EngramRetriever } from '../../../src/adapters/langchain.js';
import { createEngine, memoryStore } from '../../../src/node.js';
import { testEmbedder } from '../helpers/embedder.js';

async function engineWithMemories() {
  const engine = await createEngine({ store: memoryStore(), embedder: testEmbedder({ dim: 64 }), clock: () => Date.UTC(2025, 4, 1) });
  await engine.add([
    { id: 'tulips', text: 'Grandma likes tulips and orchids', createdAt: '2025-03-02' },
    { id: 'staging', text: 'Staging moved to eu-west-2 in March' },
    { id: 'coffee', text: 'The team drinks oat milk flat whites' },
  ]);
  return engine;
}

describe('EngramRetriever', () => {
  test('returns Documents with the text, id, score, explain and date of each hit', async () => {
    const engine = await engineWithMemories();
    const docs = await new EngramRetriever({ memory: engine, searchOptions: { k: 2 } }).invoke('which flowers does grandma like?');
    expect(docs.length).toBeGreaterThan(0);
    expect(docs.length).toBeLessThanOrEqual(2);
    const [first] = docs;
    expect(first!.pageContent).toBe('Grandma likes tulips and orchids');
    expect(first!.id).toBe('tulips');
    expect(first!.metadata).toMatchObject({ id: 'tulips', createdAt: Date.UTC(2025, 2, 2) });
    expect(first!.metadata.score).toBeGreaterThan(0);
    expect(first!.metadata.explain.bm25Rank).toBe(1);
    expect(first!.metadata.explain.cosine).toEqual(expect.any(Number));
    await engine.close();
  });

  test('feeds the recalled memory into the prompt of a runnable chain', async () => {
    const engine = await engineWithMemories();
    const retriever = new EngramRetriever({ memory: engine, searchOptions: { k: 1 } });
    const prompt = ChatPromptTemplate.fromMessages([
      ['system', 'Answer from these memories:\n{context}'],
      ['human', '{question}'],
    ]);
    const model = new FakeListChatModel({ responses: ['Tulips and orchids.'] });
    const chain = RunnableSequence.from([
      {
        context: retriever.pipe((docs: Document[]) => docs.map((doc) => `- ${doc.pageContent}`).join('\n')),
        question: new RunnablePassthrough(),
      },
      prompt,
      model,
      new StringOutputParser(),
    ]);

    const received: BaseMessage[][] = [];
    const answer = await chain.invoke('which flowers does grandma like?', {
      callbacks: [{ handleChatModelStart: (_llm: unknown, messages: BaseMessage[][]) => void received.push(...messages) }],
    });

    expect(answer).toBe('Tulips and orchids.');
    expect(received).toHaveLength(1);
    const [system, human] = received[0]!;
    expect(system!.content).toBe('Answer from these memories:\n- Grandma likes tulips and orchids');
    expect(human!.content).toBe('which flowers does grandma like?');
    await engine.close();
  });

  test('refuses a misspelt search option at construction, naming the one meant', async () => {
    const engine = await engineWithMemories();
    expect(() => new EngramRetriever({ memory: engine, searchOptions: { limit: 2 } as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining("unknown search option 'limit' (did you mean 'k'?)") }),
    );
    await engine.close();
  });

  test('refuses anything that cannot search, with a coded error', () => {
    expect(() => new EngramRetriever({ memory: {} as never })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    expect(() => new EngramRetriever(undefined as never)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
