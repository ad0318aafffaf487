/** The engine's options: what a caller may pass, and the checked, defaulted form the engine's parts read. */
import { invalidInput, type EngramError } from '../errors.js';
import type { IndexSnapshot } from '../lexical/snapshot.js';
import { DEFAULT_MAX_QUERY_CHARS, type LexicalOptions } from '../lexical/lexical-index.js';
import { checkSearchOptionKeys } from '../search/option-keys.js';
import { resolveSearchOptions, validateSearchOptions, type SearchOptions } from '../search/options.js';
import { defaultLearningOptions, MAX_SESSIONS, type LearningOptions } from '../search/reinforce.js';
import { memoryStore } from '../store/memory-store.js';
import type { Store } from '../store/store.js';
import type { Sync, SyncOptions } from '../sync/sync.js';
import { checkLanguageModel, checkReranker } from '../llm/completion.js';
import type { LanguageModel, Reranker } from '../llm/types.js';
import type { ConsolidateOptions, Embedder, Progress } from '../types.js';
import { IvfScan } from '../vector/ivf.js';
import type { VectorScan } from '../vector/scan.js';
import { checkKnownKeys, keysOf, type KeySet } from '../util/keys.js';
import { defaultRecordLimits, type RecordLimits } from './validate.js';

export interface EngineOptions {
  /** Where memories live. Default: `memoryStore()` (in memory, lost on exit). The engine closes it on `close()`. */
  store?: Store;
  /** The embedder for the vector leg. Default `null`: lexical only. */
  embedder?: Embedder | null;
  /**
   * The language model the LLM stages call (understand, synthesize, hyde, rerank), each only when a search asks for
   * it. Default `null`: no stage calls out.
   */
  llm?: LanguageModel | null;
  /** The app's own re-ranker, for searches with `rerank: { by: 'hook' }`. Default none. */
  reranker?: Reranker | null;
  /** What "now" means (epoch ms). Default `Date.now`. */
  clock?: () => number;
  /** This engine's default search options, merged over `defaultSearchOptions`. Default `{}`. */
  search?: Partial<SearchOptions>;
  /**
   * What a new memory hides on add (docs/api.md, "Which memory is hidden"). `'same'`: an older live memory that says
   * the same thing (the same words after case, punctuation, whitespace and stop words; numbers, identifiers and
   * negations kept) in the same project, scope and kind, never a pinned one. `'similar'`: the old folding, also a
   * memory whose calibrated cosine to the new one is ≥ `supersedeThreshold`, still within one project and scope,
   * never a pinned one and never across other numbers, names or negations. `false`: nothing. Default `'same'`.
   */
  supersede?: 'same' | 'similar' | false;
  /**
   * The calibrated cosine at which `supersede: 'similar'` folds, and `consolidate()` folds near-duplicates. `false`
   * turns both off (and, when `supersede` is not given, supersede on add too). Default 0.95.
   */
  supersedeThreshold?: number | false;
  /**
   * Supersede and MMR compare memories by cosine calibrated to this store: (cos − b) / (1 − b), b = the mean
   * cosine between two stored memories, so a threshold means the same with any model (similarity.ts).
   * Default true; false compares raw cosines, which some models put close to 1 for most sentences of one
   * conversation (supersede would then hide them).
   */
  calibrateSimilarity?: boolean;
  /** Lexical index settings (stop words, term processor, BM25 parameters, field weights). Default: LexicalIndex's. */
  lexical?: LexicalOptions;
  /** Limits on one memory and one add/import call (INVALID_INPUT beyond them). Default `defaultRecordLimits`, documented on `RecordLimits`. */
  limits?: Partial<RecordLimits>;
  /** The same as `limits.maxTextLength` (kept for existing callers; `limits` wins when both are given). */
  maxTextLength?: number;
  /**
   * Texts per embedder call on add, import and re-indexing. Default 128. The embedder sorts a call's texts by
   * length before running its own batches, so larger calls pad less; the worker answers searches between calls,
   * so one call is the longest a search waits behind an ingest.
   */
  embedBatchSize?: number;
  /**
   * Makes the vector scan. Default: `IvfScan` (vector/ivf.ts), its kernel compiled in the background: the int8
   * scan with exact rescoring (same answers as `exactScan`) below 50,000 vectors, and from there the IVF lists
   * when, measured on the data, they hold recall@10 ≥ 0.995 while probing at most 35% of the rows.
   */
  vectorScan?: () => VectorScan;
  /**
   * How vectors are held in memory. 'float32': every vector. 'compact': only int8 and sign codes; a search reads
   * the floats of its final candidates from the store (`Store.loadVectorsByIds`; a store without it keeps
   * float32) and returns exact cosines. 'auto': float32 until the index holds `compactVectorsFrom` vectors,
   * compact from then on. Default 'auto'.
   */
  vectorMemory?: 'float32' | 'compact' | 'auto';
  /** Vectors from which `vectorMemory: 'auto'` turns compact. Default 200,000. */
  compactVectorsFrom?: number;
  /** Progress of background re-indexing (memories without a vector for the current embedder). Default: none. */
  onIndexProgress?(progress: Progress): void;
  /** Failures of background work (re-indexing, touch bookkeeping). Default: `console.warn`. */
  onBackgroundError?(error: EngramError): void;
  /** A lexical index snapshot from `engine.indexSnapshot()`; used on open only if it still matches the store (else rebuilt). Default: none. */
  indexSnapshot?: IndexSnapshot | null;
  /**
   * Open answers from per-memory summaries and fetches the records a search or call needs by id; a store of at
   * most this many memories then loads every record in the background, a larger one keeps only
   * `recordCacheSize` recently read records in memory. Same answers either way. Default 200,000.
   */
  residentRecords?: number;
  /** Records kept in memory beyond the summaries when the store holds more than `residentRecords`. Default 20,000. */
  recordCacheSize?: number;
  /** The constants of learning from use (search/reinforce.ts `LearningOptions`, each default documented there). */
  learning?: Partial<LearningOptions>;
  /**
   * Opt-in background consolidation: once no write has come for `idleMs`, `consolidate(options)` runs (failures go to
   * `onBackgroundError`). Default `false`: only explicit `consolidate()` calls.
   */
  consolidation?: false | { idleMs: number; options?: ConsolidateOptions };
  /**
   * End-to-end encrypted sync of the change log with the user's other devices, through object storage
   * (docs/sync.md): `engine.syncNow()`, status in `stats().sync`. Default: none.
   */
  sync?: SyncOptions;
}

/**
 * Every engine option, checked against `EngineOptions` at compile time; `createEngine` refuses any other name.
 * `supersede` is declared here ahead of its type (the intersection goes once `EngineOptions` has it).
 */
export const ENGINE_OPTION_KEYS = keysOf<EngineOptions & { supersede?: unknown }>({
  store: true,
  embedder: true,
  llm: true,
  reranker: true,
  clock: true,
  search: true,
  supersede: true,
  supersedeThreshold: true,
  calibrateSimilarity: true,
  lexical: true,
  limits: true,
  maxTextLength: true,
  embedBatchSize: true,
  vectorScan: true,
  vectorMemory: true,
  compactVectorsFrom: true,
  onIndexProgress: true,
  onBackgroundError: true,
  indexSnapshot: true,
  residentRecords: true,
  recordCacheSize: true,
  learning: true,
  consolidation: true,
  sync: true,
} satisfies KeySet<EngineOptions & { supersede?: unknown }>);

const LIMIT_KEYS = keysOf<RecordLimits>({
  maxTextLength: true,
  maxTags: true,
  maxTagLength: true,
  maxLabelLength: true,
  maxMetaBytes: true,
  maxMetaDepth: true,
  maxRecordsPerCall: true,
} satisfies KeySet<RecordLimits>);

const LEARNING_KEYS = keysOf<LearningOptions>({
  directBoost: true,
  associativeBoost: true,
  spacingDays: true,
  maxSpacingFactor: true,
  associationStep: true,
  associationDecayDays: true,
  maxAssociations: true,
  core: true,
} satisfies KeySet<LearningOptions>);

const LEXICAL_KEYS = keysOf<LexicalOptions>({
  stopWords: true,
  stem: true,
  processTerm: true,
  fieldBoost: true,
  bm25: true,
  matchedTermsFactor: true,
  prefix: true,
  fuzzy: true,
  maxQueryTerms: true,
  maxQueryChars: true,
} satisfies KeySet<LexicalOptions>);

const SYNC_KEYS = keysOf<SyncOptions>({
  transport: true,
  passphrase: true,
  key: true,
  iterations: true,
  prefix: true,
  intervalMs: true,
  snapshotEvery: true,
  retainMs: true,
  requestTimeoutMs: true,
  roundTimeoutMs: true,
  maxObjectBytes: true,
  maxClockDriftMs: true,
} satisfies KeySet<SyncOptions>);

/** `EngineOptions` checked once, with every default filled in. */
export interface ResolvedEngineOptions {
  store: Store;
  embedder: Embedder | null;
  llm: LanguageModel | null;
  reranker: Reranker | null;
  clock: () => number;
  search: Partial<SearchOptions>;
  supersede: 'same' | 'similar' | false;
  supersedeThreshold: number | false;
  calibrateSimilarity: boolean;
  lexical: LexicalOptions;
  limits: RecordLimits;
  /** Query characters either leg reads: `lexical.maxQueryChars`, default 10,000 (LexicalOptions). */
  maxQueryChars: number;
  embedBatchSize: number;
  vectorScan: () => VectorScan;
  vectorMemory: 'float32' | 'compact' | 'auto';
  compactVectorsFrom: number;
  onIndexProgress: (progress: Progress) => void;
  onBackgroundError: (error: EngramError) => void;
  indexSnapshot: IndexSnapshot | null;
  residentRecords: number;
  recordCacheSize: number;
  learning: LearningOptions;
  consolidation: false | { idleMs: number; options: ConsolidateOptions };
  /** The sync of the change log (its log stages every write to `store`), or null. */
  sync: Sync | null;
}

/** Sync's code, which createEngine loads only for an engine that syncs (the change log, envelopes, the S3 client). */
export type SyncParts = typeof import('../sync/sync-parts.js');

export function loadSyncParts(): Promise<SyncParts> {
  return import('../sync/sync-parts.js');
}

/** Checks `options` (INVALID_INPUT on the first problem) and fills in the defaults; `syncParts` when `options.sync` is given. */
export function resolveEngineOptions(options: EngineOptions, syncParts: SyncParts | null = null): ResolvedEngineOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput('createEngine options must be an object');
  checkKnownKeys(options, ENGINE_OPTION_KEYS, { aliases: { embeddings: 'embedder', model: 'embedder', db: 'store', database: 'store', now: 'clock' } });
  checkKnownKeys(options.lexical, LEXICAL_KEYS, { prefix: 'lexical.' });
  checkKnownKeys(options.lexical?.fieldBoost, ['text', 'tags'], { prefix: 'lexical.fieldBoost.' });
  checkKnownKeys(options.lexical?.bm25, ['k', 'b', 'd'], { prefix: 'lexical.bm25.' });
  checkKnownKeys(options.sync, SYNC_KEYS, { prefix: 'sync.' });
  const clock = options.clock ?? Date.now;
  const search = options.search ?? {};
  checkSearchOptionKeys(search);
  validateSearchOptions(resolveSearchOptions(search));
  const limits = resolveLimits(options);
  if (options.sync !== undefined && !syncParts) throw new Error('resolveEngineOptions: sync given without its parts (loadSyncParts)');
  const sync = options.sync === undefined ? null : new syncParts!.Sync(options.store ?? memoryStore(), options.sync, clock, limits.maxRecordsPerCall);
  const store = sync ? syncParts!.loggedStore(sync.store, sync.log) : (options.store ?? memoryStore());
  // The lexical index's default, resolved here so that the vector leg cuts the query at the same length.
  const maxQueryChars = positiveInt(options.lexical?.maxQueryChars ?? DEFAULT_MAX_QUERY_CHARS, 'lexical.maxQueryChars');
  const embedBatchSize = positiveInt(options.embedBatchSize ?? 128, 'embedBatchSize');
  const supersedeThreshold = options.supersedeThreshold ?? 0.95;
  if (supersedeThreshold !== false && !(typeof supersedeThreshold === 'number' && Number.isFinite(supersedeThreshold))) {
    throw invalidInput('supersedeThreshold must be a number or false');
  }
  const supersede = options.supersede ?? (options.supersedeThreshold === false ? false : 'same');
  if (supersede !== 'same' && supersede !== 'similar' && supersede !== false) {
    throw invalidInput(`supersede must be 'same', 'similar' or false, got ${JSON.stringify(supersede) ?? String(supersede)}`);
  }
  if (supersede === 'similar' && supersedeThreshold === false) throw invalidInput("supersede: 'similar' needs a supersedeThreshold number, not false");
  const embedder = options.embedder ?? null;
  if (embedder !== null) checkEmbedder(embedder);
  const llm = checkLanguageModel(options.llm);
  const reranker = checkReranker(options.reranker);
  return {
    store,
    embedder,
    llm,
    reranker,
    clock,
    search,
    supersede,
    supersedeThreshold,
    calibrateSimilarity: options.calibrateSimilarity ?? true,
    lexical: { ...options.lexical, maxQueryChars },
    limits,
    maxQueryChars,
    embedBatchSize,
    vectorScan: options.vectorScan ?? (() => new IvfScan({ kernelCompile: 'background' })),
    vectorMemory: vectorMemoryOf(options.vectorMemory),
    compactVectorsFrom: positiveInt(options.compactVectorsFrom ?? 200_000, 'compactVectorsFrom'),
    // Called as methods of `options`, as given.
    onIndexProgress: (progress) => {
      options.onIndexProgress?.(progress);
    },
    onBackgroundError: (error) => {
      if (options.onBackgroundError) options.onBackgroundError(error);
      else console.warn(error);
    },
    indexSnapshot: options.indexSnapshot ?? null,
    residentRecords: nonNegativeInt(options.residentRecords ?? 200_000, 'residentRecords'),
    recordCacheSize: nonNegativeInt(options.recordCacheSize ?? 20_000, 'recordCacheSize'),
    learning: resolveLearning(options.learning),
    consolidation: resolveConsolidation(options.consolidation),
    sync,
  };
}

function resolveConsolidation(value: EngineOptions['consolidation']): ResolvedEngineOptions['consolidation'] {
  if (value === undefined || value === false) return false;
  if (typeof value !== 'object' || value === null) throw invalidInput('consolidation must be false or { idleMs, options? }');
  checkKnownKeys(value, ['idleMs', 'options'], { prefix: 'consolidation.' });
  const { idleMs, options = {} } = value;
  if (typeof idleMs !== 'number' || !(idleMs > 0 && idleMs <= 2 ** 31 - 1)) throw invalidInput(`consolidation.idleMs must be a positive number of milliseconds up to ${2 ** 31 - 1}, got ${String(idleMs)}`);
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidInput('consolidation.options must be an object');
  return { idleMs, options };
}

/** `defaultLearningOptions` with the caller's fields over them, checked. */
function resolveLearning(options: Partial<LearningOptions> | undefined): LearningOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) throw invalidInput('learning must be an object');
  checkKnownKeys(options, LEARNING_KEYS, { prefix: 'learning.' });
  const merged: LearningOptions = { ...defaultLearningOptions };
  for (const key of Object.keys(defaultLearningOptions) as (keyof LearningOptions)[]) {
    if (options?.[key] !== undefined) (merged as unknown as Record<string, unknown>)[key] = options[key];
  }
  const fail = (name: string, rule: string, value: unknown): never => {
    throw invalidInput(`learning.${name} must be ${rule}, got ${JSON.stringify(value) ?? String(value)}`);
  };
  for (const key of ['directBoost', 'associativeBoost', 'associationStep'] as const) {
    if (!(merged[key] >= 0 && merged[key] <= 1)) fail(key, 'a number from 0 to 1', merged[key]);
  }
  for (const key of ['spacingDays', 'maxSpacingFactor', 'associationDecayDays'] as const) {
    if (!(merged[key] > 0 && Number.isFinite(merged[key]))) fail(key, 'a positive number', merged[key]);
  }
  if (!Number.isInteger(merged.maxAssociations) || merged.maxAssociations < 1) fail('maxAssociations', 'a positive integer', merged.maxAssociations);
  const core = merged.core;
  if (core !== false) {
    if (typeof core !== 'object' || core === null) fail('core', 'false or { accessCount, stability, sessions }', core);
    checkKnownKeys(core, ['accessCount', 'stability', 'sessions'], { prefix: 'learning.core.' });
    if (!(Number.isInteger(core.accessCount) && core.accessCount >= 0)) fail('core.accessCount', 'an integer ≥ 0', core.accessCount);
    if (!(core.stability >= 0 && core.stability <= 1)) fail('core.stability', 'a number from 0 to 1', core.stability);
    if (!(Number.isInteger(core.sessions) && core.sessions >= 0 && core.sessions <= MAX_SESSIONS)) fail('core.sessions', `an integer from 0 to ${MAX_SESSIONS}`, core.sessions);
  }
  return merged;
}

/** `defaultRecordLimits`, then `maxTextLength`, then `limits`; each a positive integer. */
function resolveLimits(options: EngineOptions): RecordLimits {
  if (options.limits !== undefined && (typeof options.limits !== 'object' || options.limits === null)) {
    throw invalidInput('limits must be an object of record limits');
  }
  checkKnownKeys(options.limits, LIMIT_KEYS, { prefix: 'limits.' });
  const merged: RecordLimits = { ...defaultRecordLimits };
  if (options.maxTextLength !== undefined) merged.maxTextLength = options.maxTextLength;
  for (const key of Object.keys(defaultRecordLimits) as (keyof RecordLimits)[]) {
    const value = options.limits?.[key];
    if (value !== undefined) merged[key] = value;
  }
  for (const key of Object.keys(merged) as (keyof RecordLimits)[]) positiveInt(merged[key], `limits.${key}`);
  return merged;
}

/** Throws INVALID_INPUT unless `embedder` has an id, an embed function and a positive integer dim. */
export function checkEmbedder(embedder: Embedder): void {
  if (typeof embedder !== 'object' || typeof embedder.embed !== 'function' || typeof embedder.id !== 'string' || !embedder.id) {
    throw invalidInput('embedder must have an id string and an embed(texts) function');
  }
  if (!Number.isInteger(embedder.dim) || embedder.dim <= 0) throw invalidInput(`embedder ${embedder.id} has an invalid dim: ${embedder.dim}`);
}

function nonNegativeInt(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0) throw invalidInput(`${name} must be a non-negative integer, got ${value}`);
  return value;
}

function vectorMemoryOf(value: unknown): 'float32' | 'compact' | 'auto' {
  if (value === undefined) return 'auto';
  if (value === 'float32' || value === 'compact' || value === 'auto') return value;
  throw invalidInput(`vectorMemory must be 'float32', 'compact' or 'auto', got ${JSON.stringify(value)}`);
}

function positiveInt(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0) throw invalidInput(`${name} must be a positive integer, got ${value}`);
  return value;
}
