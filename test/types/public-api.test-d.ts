/**
 * The public types, checked by the compiler (`vitest --typecheck` runs this file through tsc), the way idb and
 * Comlink test theirs: what a caller writes must compile, and what it must not write must fail to.
 */
import { describe, expectTypeOf, test } from 'vitest';
import {
  createEmbedder,
  createEngine,
  createMemory,
  EngramError,
  ErrorCode,
  isEngramError,
  memoryStore,
  type Engine,
  type EncryptionOptions,
  type EngineOptions,
  type Hit,
  type LocalEmbedder,
  type Memory,
  type MemoryOptions,
  type Association,
  type Why,
  type LearningOptions,
  type MemoryRecord,
  type MemoryStatus,
  type RemoteSearchOptions,
  type SearchOptions,
  type SearchResult,
  type Trace,
  functionModel,
  type LanguageModel,
  type Reranker,
  type Timeline,
  type ConsolidateOptions,
  type ConsolidateResult,
  type ConversationMessage,
  type FormationFallback,
  type LlmCallOptions,
  type RememberOptions,
  type RememberResult,
} from '../../src/index.js';
import * as nodeEntry from '../../src/node.js';

describe('createMemory and Memory', () => {
  test('createMemory resolves to a Memory; every option is optional', () => {
    expectTypeOf(createMemory).returns.resolves.toEqualTypeOf<Memory>();
    expectTypeOf(createMemory).toBeCallableWith();
    expectTypeOf(createMemory).toBeCallableWith({ name: 'notes', storage: 'opfs', embedder: null, persist: false });
    expectTypeOf(createMemory).toBeCallableWith({ limits: { maxTags: 10, maxMetaDepth: 8 }, writeTimeoutMs: 60_000, debug: true });
    expectTypeOf<MemoryOptions['storage']>().toEqualTypeOf<'auto' | 'opfs' | 'idb' | 'memory' | undefined>();
    // @ts-expect-error: not a storage kind
    void createMemory({ storage: 'disk' });
  });

  test('encryption takes a passphrase or a CryptoKey, never both', () => {
    expectTypeOf(createMemory).toBeCallableWith({ name: 'vault', encryption: { passphrase: 'p' } });
    expectTypeOf(createMemory).toBeCallableWith({ encryption: { key: {} as CryptoKey } });
    expectTypeOf(createMemory).toBeCallableWith({ encryption: null });
    expectTypeOf<MemoryOptions['encryption']>().toEqualTypeOf<EncryptionOptions | null | undefined>();
    // @ts-expect-error: one of the two
    void createMemory({ encryption: { passphrase: 'p', key: {} as CryptoKey } });
    // @ts-expect-error: a passphrase is a string
    void createMemory({ encryption: { passphrase: new Uint8Array(4) } });
    expectTypeOf<Memory['changePassphrase']>().parameters.toEqualTypeOf<[current: string, next: string]>();
    expectTypeOf<Memory['changePassphrase']>().returns.resolves.toEqualTypeOf<void>();
    expectTypeOf<MemoryStatus['encrypted']>().toEqualTypeOf<boolean>();
    expectTypeOf<Memory['unlock']>().parameters.toEqualTypeOf<[secret: string | EncryptionOptions]>();
    expectTypeOf<Memory['unlock']>().returns.resolves.toEqualTypeOf<void>();
    expectTypeOf<MemoryStatus['locked']>().toEqualTypeOf<boolean>();
    expectTypeOf(createMemory).toBeCallableWith({ encryption: { passphrase: 'p' }, lockAfterIdleMs: 60_000 });
  });

  test('Memory methods', () => {
    expectTypeOf<Memory['search']>().parameters.toEqualTypeOf<[query: string, options?: Partial<RemoteSearchOptions>]>();
    expectTypeOf<Memory['search']>().returns.resolves.toEqualTypeOf<SearchResult>();
    expectTypeOf<Memory['add']>().returns.resolves.toEqualTypeOf<string[]>();
    expectTypeOf<Memory['get']>().returns.resolves.toEqualTypeOf<MemoryRecord | null>();
    expectTypeOf<Memory['status']>().returns.resolves.toEqualTypeOf<MemoryStatus>();
    expectTypeOf<MemoryStatus['error']>().toEqualTypeOf<{ code: ErrorCode; message: string } | null>();
  });

  test('the boost hook runs only in-process, so a Memory cannot take it', () => {
    expectTypeOf<SearchOptions>().toHaveProperty('boost');
    expectTypeOf<RemoteSearchOptions>().not.toHaveProperty('boost');
    const search = (memory: Memory) =>
      // @ts-expect-error: boost is not a Memory search option
      memory.search('q', { boost: () => 1 });
    void search;
  });
});

describe('SearchResult, Hit and explain', () => {
  test('a hit says why it ranked where it did', () => {
    expectTypeOf<SearchResult['hits']>().toEqualTypeOf<Hit[]>();
    expectTypeOf<Hit['explain']['bm25Rank']>().toEqualTypeOf<number | null>();
    expectTypeOf<Hit['explain']['vecRank']>().toEqualTypeOf<number | null>();
    expectTypeOf<Hit['explain']['cosine']>().toEqualTypeOf<number | null>();
    expectTypeOf<Hit['explain']['fused']>().toEqualTypeOf<number>();
    expectTypeOf<Hit['explain']['recency']>().toEqualTypeOf<number>();
    expectTypeOf<Hit['explain']['neighbour']>().toEqualTypeOf<{ from: string; bonus: number } | undefined>();
    expectTypeOf<Trace['mode']>().toEqualTypeOf<'lexical' | 'vector' | 'hybrid'>();
    expectTypeOf<SearchResult['context']['text']>().toBeString();
  });
});

describe('language models, re-rankers and the timeline', () => {
  test('a language model is any object with complete(); adapters make one', () => {
    expectTypeOf(createEngine).toBeCallableWith({ llm: { complete: async () => 'text' } });
    expectTypeOf(createEngine).toBeCallableWith({ llm: { complete: async () => ({ text: 'x', promptTokens: 3, completionTokens: 1 }) } });
    expectTypeOf(createMemory).toBeCallableWith({ llm: functionModel(async () => 'x'), reranker: (_q, candidates) => candidates.map((c) => c.id) });
    expectTypeOf(functionModel(async () => 'x')).toMatchTypeOf<LanguageModel>();
    expectTypeOf<Reranker>().returns.toEqualTypeOf<Promise<string[]> | string[]>();
    // @ts-expect-error: complete must resolve to text
    void createEngine({ llm: { complete: async () => 42 } });
  });

  test('stage options are closed unions, and the trace carries tokens and the queries searched', () => {
    expectTypeOf<SearchOptions['synthesis']>().toEqualTypeOf<false | 'offline' | 'llm'>();
    expectTypeOf<SearchOptions['assembly']>().toEqualTypeOf<'greedy' | 'diverse' | 'auto' | 'cover' | 'hedge'>();
    expectTypeOf<SearchOptions['fusion']>().toEqualTypeOf<'convex' | 'scaled' | 'rrf' | 'blend'>();
    expectTypeOf<Trace['totalTokens']>().toEqualTypeOf<number>();
    expectTypeOf<Trace['stages'][number]['promptTokens']>().toEqualTypeOf<number>();
    expectTypeOf<Trace['queries'][number]['source']>().toEqualTypeOf<'original' | 'llm' | 'offline' | 'hyde'>();
    expectTypeOf<Hit['explain']['rerank']>().toEqualTypeOf<{ by: 'llm' | 'hook' | 'rules'; from: number; to: number } | undefined>();
    // @ts-expect-error: not a re-ranker
    void ((engine: Engine) => engine.search('q', { rerank: { by: 'magic', inputLimit: 40 } }));
  });

  test('timeline on Engine and Memory', () => {
    expectTypeOf<Engine['timeline']>().returns.resolves.toEqualTypeOf<Timeline>();
    expectTypeOf<Memory['timeline']>().returns.resolves.toEqualTypeOf<Timeline>();
    expectTypeOf<Timeline['by']>().toEqualTypeOf<'thread' | 'time'>();
  });
});

describe('memory formation', () => {
  test('remember and consolidate on Engine and Memory alike', () => {
    expectTypeOf<Memory['remember']>().toEqualTypeOf<Engine['remember']>();
    expectTypeOf<Memory['consolidate']>().toEqualTypeOf<Engine['consolidate']>();
    expectTypeOf<Memory['remember']>().parameters.toEqualTypeOf<[conversation: string | ConversationMessage[], options?: RememberOptions]>();
    expectTypeOf<Memory['remember']>().returns.resolves.toEqualTypeOf<RememberResult>();
    expectTypeOf<Memory['consolidate']>().returns.resolves.toEqualTypeOf<ConsolidateResult>();
    expectTypeOf<FormationFallback['code']>().toEqualTypeOf<'NO_MODEL' | 'MODEL_FAILED' | 'MODEL_TIMEOUT' | 'MODEL_UNREADABLE'>();
    expectTypeOf<ConsolidateOptions>().toMatchTypeOf<object>();
    expectTypeOf<LlmCallOptions['responseConstraint']>().toEqualTypeOf<object | undefined>();
    // @ts-expect-error: a message needs content
    void ((memory: Memory) => memory.remember([{ role: 'user' }]));
  });
});

describe('learning from use', () => {
  test('related, link, unlink and why on Engine and Memory alike', () => {
    expectTypeOf<Memory['related']>().toEqualTypeOf<Engine['related']>();
    expectTypeOf<Memory['link']>().toEqualTypeOf<Engine['link']>();
    expectTypeOf<Memory['unlink']>().toEqualTypeOf<Engine['unlink']>();
    expectTypeOf<Memory['why']>().toEqualTypeOf<Engine['why']>();
    expectTypeOf<Memory['related']>().returns.resolves.toEqualTypeOf<Association[]>();
    expectTypeOf<Memory['why']>().returns.resolves.toEqualTypeOf<Why>();
    expectTypeOf<MemoryStatus['core']>().toEqualTypeOf<number>();
    // @ts-expect-error: not a provenance kind
    void ((memory: Memory) => memory.link('a', 'b', 'likes'));
    void ((memory: Memory) => memory.link('a', 'b', 'derives_from', { confidence: 0.5 }));
  });

  test('hits say how they came in; the options switch each part', () => {
    expectTypeOf<Hit['explain']['associative']>().toEqualTypeOf<{ via: string; bridge?: string; weight: number; viaFused: number; similarity: number } | undefined>();
    void ((engine: Engine) => engine.search('q', { associations: { floor: 0.3, bridges: true, bridgeMinCosine: 0.3 }, reinforce: false, decay: { kind: 'stability' } }));
    void ((memory: Memory) => memory.search('q', { associations: false, session: 'today', filter: { core: true }, includeExpiredTransients: true }));
    // @ts-expect-error: a filter's core is a boolean
    void ((memory: Memory) => memory.search('q', { filter: { core: 'yes' } }));
    expectTypeOf<MemoryRecord['stability']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<LearningOptions['core']>().toEqualTypeOf<{ accessCount: number; stability: number; sessions: number } | false>();
  });
});

describe('errors', () => {
  test('codes are a closed union of string literals, stable across the worker boundary', () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      | 'INVALID_INPUT'
      | 'DUPLICATE_ID'
      | 'NOT_FOUND'
      | 'DIMENSION_MISMATCH'
      | 'EMBEDDER_FAILED'
      | 'MODEL_NOT_FOUND'
      | 'MODEL_INVALID'
      | 'STORE_FAILED'
      | 'STORE_CORRUPT'
      | 'QUOTA_EXCEEDED'
      | 'SCHEMA_TOO_NEW'
      | 'SNAPSHOT_INVALID'
      | 'WORKER_FAILED'
      | 'CLOSED'
      | 'TIMEOUT'
      | 'ABORTED'
      | 'WRONG_KEY'
      | 'WEAK_PASSPHRASE'
      | 'KEY_REQUIRED'
      | 'LOCKED'
      | 'NOT_ENCRYPTED'
      | 'STORE_LOCKED'
      | 'SYNC_FAILED'
      | 'SYNC_TAMPERED'
      | 'SYNC_CLOCK'
      | 'NOT_LEADER'
    >();
    expectTypeOf(ErrorCode.MODEL_NOT_FOUND).toEqualTypeOf<'MODEL_NOT_FOUND'>();
    expectTypeOf<EngramError['code']>().toEqualTypeOf<ErrorCode>();
  });

  test('isEngramError narrows an unknown', () => {
    const handle = (error: unknown) => {
      if (isEngramError(error, ErrorCode.QUOTA_EXCEEDED)) expectTypeOf(error).toEqualTypeOf<EngramError>();
      // @ts-expect-error: not a code
      isEngramError(error, 'NOPE');
    };
    void handle;
  });
});

describe('the in-process engine (engram and engram/node)', () => {
  test('createEngine takes one options type and resolves to an Engine', () => {
    expectTypeOf(createEngine).parameter(0).toEqualTypeOf<EngineOptions | undefined>();
    expectTypeOf(createEngine).returns.resolves.toEqualTypeOf<Engine>();
    expectTypeOf(createEngine).toBeCallableWith({ store: memoryStore(), search: { k: 5 }, supersedeThreshold: false });
    expectTypeOf<Engine['search']>().parameter(1).toEqualTypeOf<Partial<SearchOptions> | undefined>();
    expectTypeOf(createEmbedder).returns.resolves.toEqualTypeOf<LocalEmbedder>();
  });

  test('engram/node is the same API without createMemory', () => {
    expectTypeOf(nodeEntry.createEngine).toEqualTypeOf(createEngine);
    expectTypeOf(nodeEntry).not.toHaveProperty('createMemory');
  });
});
