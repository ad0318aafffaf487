/** The framework adapters' public types: each takes a Memory or an Engine and speaks its framework's own types. */
import type { DocumentInterface } from '@langchain/core/documents';
import type { BaseRetriever } from '@langchain/core/retrievers';
import type { Tool, ToolSet } from 'ai';
import { describe, expectTypeOf, test } from 'vitest';
import { useMemory, useSearch, type UseMemoryResult, type UseSearchResult } from '../../src/adapters/react.js';
import { engramTools, type EngramToolsOptions, type RecallOutput } from '../../src/adapters/ai-sdk.js';
import { EngramRetriever, type EngramDocumentMetadata, type EngramRetrieverInput } from '../../src/adapters/langchain.js';
import type { Memory } from '../../src/index.js';
import type { Engine, Hit, SearchResult } from '../../src/node.js';

describe('engram/langchain', () => {
  test('a Memory and an Engine are both accepted', () => {
    expectTypeOf<Memory>().toExtend<EngramRetrieverInput['memory']>();
    expectTypeOf<Engine>().toExtend<EngramRetrieverInput['memory']>();
    // @ts-expect-error a retriever needs something that searches
    void new EngramRetriever({ memory: { add: async () => [] } });
  });

  test('is a BaseRetriever whose documents carry the hit', () => {
    expectTypeOf<EngramRetriever>().toExtend<BaseRetriever<EngramDocumentMetadata>>();
    expectTypeOf<ReturnType<EngramRetriever['invoke']>>().resolves.toExtend<DocumentInterface<EngramDocumentMetadata>[]>();
    expectTypeOf<EngramDocumentMetadata['explain']>().toEqualTypeOf<Hit['explain']>();
    expectTypeOf<EngramRetrieverInput['searchOptions']>().toExtend<object | undefined>();
    // @ts-expect-error the in-process boost hook does not cross to a worker, so it is not a retriever option
    expectTypeOf<NonNullable<EngramRetrieverInput['searchOptions']>>().toHaveProperty('boost');
  });
});

describe('engram/ai-sdk', () => {
  test('a Memory and an Engine are both accepted; a search-only object is not', () => {
    expectTypeOf<Memory>().toExtend<EngramToolsOptions['memory']>();
    expectTypeOf<Engine>().toExtend<EngramToolsOptions['memory']>();
    // @ts-expect-error the tools also write and delete
    void engramTools({ memory: { search: async () => ({}) as never } });
  });

  test('the tools are AI SDK tools, typed by their input and output', () => {
    expectTypeOf(engramTools).returns.toExtend<ToolSet>();
    expectTypeOf(engramTools).returns.toHaveProperty('recall').toEqualTypeOf<Tool<{ query: string; k?: number; project?: string }, RecallOutput>>();
    expectTypeOf<RecallOutput>().toEqualTypeOf<{ context: string; tokens: number; ids: string[] }>();
  });
});

describe('engram/react', () => {
  test('useMemory takes createMemory options and gives the Memory once open', () => {
    expectTypeOf(useMemory).parameter(0).toEqualTypeOf<Parameters<typeof import('../../src/index.js').createMemory>[0]>();
    expectTypeOf<UseMemoryResult['memory']>().toEqualTypeOf<Memory | null>();
    expectTypeOf<UseMemoryResult['status']>().toEqualTypeOf<'opening' | 'open' | 'error'>();
  });

  test("useSearch takes useMemory's memory (null while opening) or an Engine", () => {
    expectTypeOf(useSearch).toBeCallableWith(null as UseMemoryResult['memory'], 'query');
    expectTypeOf(useSearch).toBeCallableWith(null as unknown as Engine, 'query', { debounceMs: 0, search: { k: 3 } });
    expectTypeOf<UseSearchResult['result']>().toEqualTypeOf<SearchResult | null>();
    // @ts-expect-error search options are the worker's: no in-process boost hook
    useSearch(null, 'query', { search: { boost: () => 1 } });
  });
});
