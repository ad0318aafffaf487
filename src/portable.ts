/** The in-process engine and its parts, for any JavaScript runtime: no worker, DOM or Node module. Re-exported by the package entry and `engram/node`. */
export { createEngine } from './engine/engine.js';
export { memoryStore } from './store/memory-store.js';
export { createEmbedder } from './embedder/index.js';
export { EngramError, ErrorCode, isEngramError } from './errors.js';
export { defaultRecordLimits, type RecordLimits } from './engine/validate.js';
export { openBackup, sealBackup, type SealBackupOptions } from './store/backup.js';
export { s3Transport, type S3TransportConfig } from './sync/s3.js';
export type { SyncOptions, SyncProblem, SyncStatus, SyncWait } from './sync/sync.js';
export type { SyncNotice } from './sync/log.js';
export type { SyncKeyInput } from './engine/api.js';
export type { SyncTransport, TransportCall } from './sync/transport.js';

export type { AddOptions, Engine, EngineOptions, EngineStats } from './engine/engine.js';
export type { AssociationEdge, PackedVectors, Store, StoreWrite } from './store/store.js';
export type { EmbedderOptions, EmbedderProgress, LocalEmbedder } from './embedder/index.js';
export type { AssociationOptions, DecayOptions, DiversityOptions, ProjectBoost, RerankOptions, SearchFilter, SearchOptions } from './search/options.js';
export type { StabilityDecay } from './search/retention.js';
export { defaultLearningOptions, type LearningOptions } from './search/reinforce.js';
export { LINK_KINDS, TRACE_STAGE_NAMES } from './types.js';
export type { LexicalOptions } from './lexical/lexical-index.js';
export type { AssembledContext, Embedder, Hit, MemoryInput, MemoryPatch, MemoryRecord, Progress, SearchResult, Trace, TraceStage, TraceStageName } from './types.js';
export { functionModel, promptApiModel, webLlmModel } from './llm/index.js';
export type { CompletionFunction, LanguageModel, LlmCallOptions, LlmCompletion, PromptApiAvailability, PromptApiModel, PromptApiModelOptions, RerankCandidate, Reranker, WebLlmEngine, WebLlmModelOptions } from './llm/index.js';
export type { DateMention, QueryType, Timeline, TimelineOptions, TraceQuery, Understanding } from './types.js';
export type { Association, Link, LinkKind, Why, WhyOptions } from './types.js';
export type {
  ConsolidateOptions, ConsolidateResult, ConversationMessage, FormationDecision, FormationFallback, FormationSkip, FormationTokens, RememberOptions, RememberResult,
} from './types.js';
export { DECIDE_PROMPT, EXTRACT_PROMPT, SUMMARIZE_PROMPT } from './engine/formation-prompts.js';
