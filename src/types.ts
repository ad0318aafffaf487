/** Public data types shared by the engine, the stores, the worker and the client. */

/**
 * What a caller hands to `add`. Every string must be well-formed UTF-16 (no lone surrogate: the SQLite store keeps
 * UTF-8, where one cannot be written); sizes are bounded by the engine option `limits` (RecordLimits).
 */
export interface MemoryInput {
  /** Non-empty, at most 512 characters, well-formed UTF-16. Default: a new UUID v7. */
  id?: string;
  /** Non-blank, well-formed UTF-16 (lone surrogates are refused, not replaced), at most `limits.maxTextLength`. */
  text: string;
  /**
   * Epoch ms (finite, within ±8.64e15), a valid Date, or an ISO-8601 string: YYYY-MM-DD, optionally
   * THH:MM[:SS[.fraction]] and Z or ±HH:MM, a real calendar date. Defaults to the engine clock's "now".
   */
  createdAt?: number | string | Date;
  /** Score multiplier from 1 to 2. Default 1. */
  priority?: number;
  pinned?: boolean;
  /** At most `limits.maxLabelLength` characters, like `scope` and `kind`. */
  project?: string;
  scope?: string;
  /** At most `limits.maxTags` tags of at most `limits.maxTagLength` characters. */
  tags?: string[];
  kind?: string;
  /** After this the memory is never returned: a date as for `createdAt`. */
  validUntil?: number;
  /** How good this memory is, from 0 to 1 (an app's or a model's judgement); adds `qualityWeight × quality` to its score. Default none. */
  quality?: number;
  /**
   * A core memory: retention never falls below `learning.coreFloor` under `decay: { kind: 'stability' }`, and
   * `filter.core` selects it. Use promotes a memory to core by itself (`LearningOptions.core`). Default false.
   */
  core?: boolean;
  /**
   * JSON data only: plain objects, arrays, strings, finite numbers, booleans, null (no Date, Map, Set, BigInt,
   * function, class instance or cycle), at most `limits.maxMetaDepth` deep and `limits.maxMetaBytes` as JSON.
   * Stored as its JSON round trip (-0 reads back as 0).
   */
  meta?: Record<string, unknown>;
}

/** A stored memory: the input, normalised, plus bookkeeping. Plain data (structured-clone safe). */
export interface MemoryRecord {
  id: string;
  text: string;
  createdAt: number;
  priority: number;
  pinned: boolean;
  project?: string;
  scope?: string;
  tags: string[];
  kind?: string;
  validUntil?: number;
  quality?: number;
  meta?: Record<string, unknown>;
  /** Id of the newer memory that superseded this one. */
  supersededBy?: string;
  accessCount: number;
  lastAccessedAt?: number;
  updatedAt?: number;
  /** See MemoryInput.core. Absent when false. */
  core?: boolean;
  /**
   * How slowly this memory fades, from 0 to 1 (search/retention.ts); each retrieval raises it. Absent until the
   * first reinforcement: `learning.initialStability` (0.3) then.
   */
  stability?: number;
  /** The latest distinct sessions (SearchOptions.session) that retrieved this memory, oldest first, at most 8. */
  sessions?: string[];
}

/** Fields `update` may change. `null` clears an optional field. */
export type MemoryPatch = {
  [K in Exclude<keyof MemoryInput, 'id'>]?: MemoryInput[K] | null;
};

export interface Embedder {
  /** Names model, dtype and device, e.g. `engram-glove-100d@q8/wasm`. Vectors are stored per id. */
  id: string;
  /**
   * Embedders with the same vector space produce interchangeable vectors (same model and dtype on another
   * device), so stored vectors are keyed by it and a device change never forces a re-embed. Default: `id`.
   */
  vectorSpace?: string;
  dim: number;
  /**
   * One vector per text. `role` says what the texts are: memories are embedded as `'document'`, searches as
   * `'query'` (asymmetric models prompt them differently). An embedder may ignore it.
   */
  embed(texts: string[], role?: 'query' | 'document'): Promise<Float32Array[]>;
  countTokens?(text: string): number;
  dispose?(): Promise<void>;
}

export interface Hit {
  id: string;
  text: string;
  score: number;
  memory: MemoryRecord;
  explain: {
    bm25Rank: number | null;
    vecRank: number | null;
    bm25: number | null;
    cosine: number | null;
    /** The fused score (convex combination or RRF, per `fusion`), including any neighbour support. */
    fused: number;
    /** With `fusion: 'rrf'`, for a memory a leg returned: the legs' reciprocal-rank sum, before neighbour support. */
    rrf?: number;
    recency: number;
    /** Priority, pinned, project, date (`dated`) and hook factors multiplied (search/boost.ts). */
    boost: number;
    /** Written on a date the query names (`trace.understanding.dates`): `boost` includes `dateBoost`. */
    dated?: boolean;
    superseded?: boolean;
    mmr?: number;
    /**
     * `assembly: 'cover'` or `'hedge'` placed the hit so the hits reach its thread, which the lexical leg reached: the
     * thread and the hit's lexical rank (it took the place of a lower-scored hit of a thread with another hit).
     */
    covers?: { thread: string; lexicalRank: number };
    /** Thread-neighbour support included in `fused`: the hit it came from and the bonus (stage `neighbours`). */
    neighbour?: { from: string; bonus: number };
    /**
     * With more than one query list (synthesis, HyDE): the hit's rank in each list of `trace.queries` (null where
     * absent), and with `listFusion: 'rrf'` the weighted reciprocal-rank sum Σ w_q / (rrfK + rank_q), which `fused`
     * then holds over its largest possible value.
     */
    lists?: { ranks: (number | null)[]; rrf?: number };
    /**
     * Stage `feedback` (search option `feedback`) changed the hit's lexical rank: `before` is its rank in the first
     * lexical pass (null: feedback brought it in), `bm25Rank` the rank after feedback.
     */
    feedback?: { before: number | null };
    /** The memory's quality (0–1) and what it added to the fused score: `qualityWeight × quality`. */
    quality?: { value: number; added: number };
    /**
     * Stage `currency`: a later version of the same fact (it holds every query term this hit holds and says
     * something else), placed just above this hit.
     */
    newerVersion?: string;
    /** Stage `rerank`: the re-ranker and the hit's place among the re-ranked candidates before and after (1-based). */
    rerank?: { by: 'llm' | 'hook' | 'rules'; from: number; to: number };
    /**
     * Stage `associate`: the hit came in through associations, not from the legs. `via` is the direct hit it was
     * reached from (through `bridge` on a second hop), `weight` the association weight after decay (the product of
     * both on a second hop), `viaFused` the via hit's fused score and `similarity` the hit's calibrated cosine to
     * the query: `fused` = viaFused × similarity × weight (search/associate.ts). Quality adds nothing to it.
     */
    associative?: { via: string; bridge?: string; weight: number; viaFused: number; similarity: number };
    /** The memory was cold (search/retention.ts `isCold`) before this search; retrieving it makes it hot again. */
    cold?: true;
    /**
     * Stage `sources`: memory `of`, derived from this one, was superseded by `by`, a candidate too; this hit, which
     * still says the old version, was placed just below `by` (score = its score × 0.99).
     */
    source?: { of: string; by: string };
  };
}

/** One association of a memory (`memory.related`): the weight after decay to `now`, and when it last formed. */
export interface Association {
  id: string;
  weight: number;
  /** Epoch ms of the last search that retrieved both memories together. */
  lastAt: number;
}

/** Provenance edge kinds (the daemon seed's): `from` causes, derives from, edits… `to`. `LinkKind` is derived from it. */
export const LINK_KINDS = Object.freeze([
  'causes', 'caused_by', 'derives_from', 'contradicts', 'edits', 'references', 'calls', 'imports', 'extends',
  'implements', 'instantiates', 'similar_to',
] as const);

/** One of `LINK_KINDS`. */
export type LinkKind = (typeof LINK_KINDS)[number];

/** Every stage a search trace may name (`TraceStage.name`), in the pipeline's order; `TraceStageName` is derived from it. */
export const TRACE_STAGE_NAMES = Object.freeze([
  'route', 'understand', 'synthesize', 'hyde', 'lexical', 'feedback', 'vector', 'fuse', 'neighbours', 'records',
  'filter', 'adjust', 'sources', 'associate', 'rerank', 'currency', 'diversify', 'assemble', 'touch', 'reinforce',
] as const);

/** One of `TRACE_STAGE_NAMES`. */
export type TraceStageName = (typeof TRACE_STAGE_NAMES)[number];

/** A provenance edge recorded with `memory.link`. */
export interface Link {
  from: string;
  to: string;
  kind: LinkKind;
  /** From 0 to 1. Default 1. */
  confidence: number;
  createdAt: number;
}

export interface WhyOptions {
  /** Hops followed from the memory: an integer from 1 to 10. Default 4. */
  depth?: number;
  /** Follow edges out of each memory (what it derives from, causes…), into it, or both. Default 'out'. */
  direction?: 'out' | 'in' | 'both';
}

/** `memory.why(id)`: the provenance edges reached from a memory, breadth first, and the memories they join. */
export interface Why {
  root: MemoryRecord;
  /** Each with the hop (1-based) at which it was reached; at most 200 edges. */
  edges: (Link & { depth: number })[];
  /** Every memory the edges reach other than the root (copies), in the order first reached. */
  memories: MemoryRecord[];
  /** More edges were reachable than the 200 returned. */
  truncated: boolean;
}

export interface TraceStage {
  /** The stage (`TRACE_STAGE_NAMES`); `records` is the read of candidates' records from the store, when it reads any. */
  name: TraceStageName;
  in: number;
  out: number;
  ms: number;
  /** Free-form note, e.g. why a leg was skipped. */
  note?: string;
  /** Tokens the stage's language-model call read and wrote; 0 for stages without one (estimated when the model gives none). */
  promptTokens: number;
  completionTokens: number;
}

/** What kind of question a query is (stage `understand`, search/understand.ts). */
export type QueryType = 'identifier' | 'preference' | 'aggregation' | 'temporal' | 'factual';

export interface Understanding {
  type: QueryType;
  complexity: 'simple' | 'moderate' | 'complex';
  /** Every cue found, e.g. `['temporal:when', 'aggregation:how many']`. */
  signals: string[];
  by: 'rules' | 'llm';
  /** Calendar dates the query names (search/dates.ts), which `dateBoost` reads; absent when none. */
  dates?: DateMention[];
}

/** A date a query names: a day (with a month), a month, or a year; without a year, any year. */
export interface DateMention {
  /** The words as the query has them, lowercased. */
  text: string;
  year?: number;
  /** 0–11. */
  month?: number;
  /** 1–31, only with a month. */
  day?: number;
}

/** One query list the legs searched: the caller's, a synthesized one, or the HyDE text (vector leg only). */
export interface TraceQuery {
  text: string;
  source: 'original' | 'llm' | 'offline' | 'hyde';
  /** Its weight in the list fusion (`originalQueryWeight` for the original, 1 for the others). */
  weight: number;
}

export interface Trace {
  mode: 'lexical' | 'vector' | 'hybrid';
  stages: TraceStage[];
  totalMs: number;
  embedder: string | null;
  /** The `understand` stage's reading of the query. */
  understanding: Understanding;
  /** Every query list searched, the caller's first. */
  queries: TraceQuery[];
  /** The hypothetical answer the `hyde` stage embedded, when it ran. */
  hyde?: string;
  /** Sums over the stages. */
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Language-model calls made (0 in `mode: 'vector'`). */
  llmCalls: number;
}

export interface AssembledContext {
  text: string;
  tokens: number;
  budget: number;
  ids: string[];
}

export interface SearchResult {
  hits: Hit[];
  context: AssembledContext;
  trace: Trace;
}

export interface Progress {
  done: number;
  total: number;
}

/** `timeline(id, options)`: how many memories to return on each side of the anchor. */
export interface TimelineOptions {
  /** Memories before the anchor, nearest first in the result's order. An integer from 0 to 100. Default 3. */
  before?: number;
  /** Memories after the anchor. An integer from 0 to 100. Default 3. */
  after?: number;
}

/** The memories around one memory: in its thread (`meta.thread`), or by `createdAt` when it has none. */
export interface Timeline {
  anchor: MemoryRecord;
  /** Oldest first, ending just before the anchor. */
  before: MemoryRecord[];
  /** Oldest first, starting just after the anchor. */
  after: MemoryRecord[];
  /** Which order the neighbours come from. */
  by: 'thread' | 'time';
}

/** One message of a conversation given to `remember`. */
export interface ConversationMessage {
  /** Who spoke: 'user', 'assistant', or any label of at most `limits.maxLabelLength` characters. */
  role: string;
  /** What was said: non-blank, at most `limits.maxTextLength` characters. */
  content: string;
  /** When it was said (a date as for `MemoryInput.createdAt`). Default: `RememberOptions.at`, else now. */
  at?: number | string | Date;
}

export interface RememberOptions {
  /** Store each message as a memory of kind 'turn', linked from the facts drawn from it. Default true. */
  storeTurns?: boolean;
  /** When messages without `at` (and plain text) were said. Default: now. */
  at?: number | string | Date;
  /** How long each call to the language model may take (ms). Default 30,000. */
  timeoutMs?: number;
  /**
   * The conversation's project and scope: its turns and facts get them, and the decision sees only stored memories
   * of the same project and scope (no scope counts as `'personal'`). Default none.
   */
  project?: string;
  scope?: string;
  /** Let the model's update or contradiction supersede a pinned memory. Default false: the fact is added beside it. */
  supersedePinned?: boolean;
  /** Most facts kept from one call, in the model's order; the rest are skipped ('over the limit'). Default 20. */
  maxFacts?: number;
  /**
   * Aborts the call until its one atomic store write begins: the language model's call gets it (and the wait for an
   * answer ends at once), and the call rejects with ABORTED with nothing stored. Default none.
   */
  signal?: AbortSignal;
}

/** Why `remember` or `consolidate` did without the language model for this call. */
export interface FormationFallback {
  code: 'NO_MODEL' | 'MODEL_FAILED' | 'MODEL_TIMEOUT' | 'MODEL_UNREADABLE';
  reason: string;
}

/** Tokens a formation call spent: the model's counts where it reports them, else estimated (length / 4). */
export interface FormationTokens {
  calls: number;
  promptTokens: number;
  completionTokens: number;
}

/** Why a fact's decision was not carried out (`FormationDecision.skipped`). */
export type FormationSkip = 'pinned' | 'other project' | 'over the limit' | 'invalid' | 'gone';

/** What became of one extracted fact (`RememberResult.decisions`). */
export interface FormationDecision {
  /** The fact as extracted, relative dates resolved. */
  fact: string;
  /**
   * 'added': stored as the new memory `id`; 'superseded': stored as `id`, which supersedes `memory`; 'reinforced':
   * `memory` already says it, nothing added; 'skipped': the model's decision was not carried out (`skipped` says
   * why); the fact is still stored as `id` unless it was over the limit.
   */
  outcome: 'added' | 'superseded' | 'reinforced' | 'skipped';
  id?: string;
  /** The stored memory the decision named. */
  memory?: string;
  /** The model's action, when it decided this fact. */
  action?: 'add' | 'update' | 'contradict' | 'same';
  /** The model's reason, or the engine's. */
  reason: string;
  skipped?: FormationSkip;
}

/** What `remember` did. */
export interface RememberResult {
  /** New memories: each fact (or, on a fallback, each turn) stored, with the model's reason. */
  added: { id: string; text: string; reason: string }[];
  /** Stored memories a new fact updated or contradicted: `id` is now superseded by `by` (deep recall still finds it). */
  superseded: { id: string; by: string; reason: string }[];
  /** Facts already known: the stored memory `id` was reinforced instead, nothing added. */
  unchanged: { id: string; fact: string; reason: string }[];
  /** One entry per extracted fact, in the model's order, with what became of it and why. Empty on a fallback. */
  decisions: FormationDecision[];
  /** Ids of the stored turns, in order (empty when `storeTurns` is false and the model answered). */
  turns: string[];
  tokens: FormationTokens;
  /** Present when the model was not used: the turns were stored as memories instead. */
  fallback?: FormationFallback;
  /** Wall time of the call (ms). */
  ms: number;
}

export interface ConsolidateOptions {
  /** Summarise clusters with the engine's language model (when it has one). Default true. */
  summarize?: boolean;
  /** Calibrated cosine from which two memories count as one subject for a cluster. Default 0.5. */
  clusterSimilarity?: number;
  /** Smallest cluster summarised. Default 3. */
  minCluster?: number;
  /** Most memories in one summary. Default 8. */
  maxCluster?: number;
  /** Most clusters summarised in one call. Default 10. */
  maxClusters?: number;
  /** How long each call to the language model may take (ms). Default 30,000. */
  timeoutMs?: number;
  /** Let a fold or a summary supersede pinned memories. Default false: pinned memories stay as they are. */
  supersedePinned?: boolean;
  /** As `RememberOptions.signal`: until the one atomic write, an abort rejects with ABORTED and nothing changes. Default none. */
  signal?: AbortSignal;
}

/** What `consolidate` did. Nothing is deleted: every original stays reachable by deep recall and `why`. */
export interface ConsolidateResult {
  /** Near-duplicates folded into the newest of them (`id` superseded by `into`). */
  folded: { id: string; into: string }[];
  /** Summary memories made from clusters: each supersedes and derives from `from`. */
  summaries: { id: string; text: string; from: string[] }[];
  /** Near-duplicates not folded because they are pinned (see `supersedePinned`): `id` stays live beside `into`. */
  kept: { id: string; into: string; why: 'pinned' }[];
  tokens: FormationTokens;
  /** Present when summaries were asked for but the model was not used or failed. */
  fallback?: FormationFallback;
  ms: number;
}
