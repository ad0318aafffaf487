/**
 * What a search reads, and where the work after its answer goes: declared here, below the pipeline, and provided by
 * the engine (engine/record-table.ts, engine/associations.ts, engine/links.ts, engine/touch-writer.ts), so no stage
 * imports upward.
 */
import type { LexicalIndex } from '../lexical/lexical-index.js';
import type { LanguageModel, Reranker } from '../llm/types.js';
import type { RecordSummary } from '../store/store.js';
import type { MemoryRecord } from '../types.js';
import type { VectorIndex } from '../vector/vector-index.js';
import type { BlockTokens } from './assemble.js';
import type { LearningOptions } from './reinforce.js';
import type { ThreadIndex } from './thread-index.js';

/** The memories: a summary of each, and full records once `preload` of their ids settled. */
export interface RecordReader {
  get(id: string): MemoryRecord | undefined;
  summary(id: string): RecordSummary | undefined;
  has(id: string): boolean;
  /** Undefined when every record asked for is in memory already. */
  preload(ids: readonly string[]): Promise<void> | undefined;
  readonly size: number;
  /** True when some memory has an expiry date or is superseded. */
  readonly anyRestricted: boolean;
}

export interface AssociationReader {
  /** The memory's associations with their decayed weights at `now`, at least `floor`. */
  around(id: string, now: number, floor: number): { id: string; weight: number }[];
}

/** Provenance links (`derives_from`), for the rule that keeps a superseded memory's sources below its replacement. */
export interface ProvenanceReader {
  /** Ids of the memories that derive from `id` (a link `derives_from` from them to it). */
  derivedFrom(id: string): readonly string[];
}

/** Where the stages after the answer (`reinforce`, `touch`) write: applied in memory at once, stored in the background. */
export interface AnswerWriter {
  /** Counts an access for each memory. */
  touch(ids: readonly string[], now: number): void;
  /** Stores the reinforced records, and strengthens the association of every two `direct` hits. */
  reinforce(records: readonly MemoryRecord[], direct: readonly string[], now: number): void;
}

/** What one search reads: the engine's in-memory state at the time of the call. */
export interface PipelineState {
  records: RecordReader;
  lexical: LexicalIndex;
  /** Null without an embedder. */
  vectors: VectorIndex | null;
  /** Memories in thread order (`meta.thread`), for the neighbours stage. */
  threads: ThreadIndex;
  /** Whether MMR measures memory-to-memory similarity relative to the corpus (see vector/similarity.ts). */
  calibrateSimilarity: boolean;
  embedderId: string | null;
  vectorsReady: boolean;
  /** Embeds and normalises one query. */
  /** `role` 'document' for a text standing in for a memory (HyDE's hypothetical answer). Default 'query'. */
  embedQuery(query: string, role?: 'query' | 'document'): Promise<Float32Array>;
  countTokens?: (text: string) => number;
  /** countTokens of a memory's context block, remembered per record (assemble.ts blockTokenCounter); with countTokens. */
  blockTokens?: BlockTokens;
  /** Query characters read by either leg (the lexical index cuts at the same length). */
  maxQueryChars: number;
  /** The engine's language model, or null. */
  llm: LanguageModel | null;
  /** The engine's re-ranker hook, or null. */
  reranker: Reranker | null;
  /** Associations between memories, for the `associate` stage. */
  associations: AssociationReader;
  /** Which memories derive from which (superseded-sources.ts). */
  provenance: ProvenanceReader;
  /** Where the `reinforce` and `touch` stages write. */
  answers: AnswerWriter;
  learning: LearningOptions;
  /** The session of a search that names none (SearchOptions.session). */
  session: string;
}
