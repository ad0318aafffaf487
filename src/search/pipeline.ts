/**
 * One search, top to bottom: route → lexical → vector → fuse → neighbours → filter → adjust → diversify → assemble.
 * Each stage is its own module; this file only wires them and records the trace.
 */
import { adjust } from './adjust.js';
import { assemble, estimateTokens } from './assemble.js';
import { diversify } from './diversify.js';
import { toHit } from './explain.js';
import { compileEligibility, filterCandidates } from './filter.js';
import { fuse, type LegResult } from './fuse.js';
import { supportNeighbours, type ThreadIndex } from './neighbours.js';
import type { SearchOptions } from './options.js';
import { route } from './route.js';
import { Tracer } from './trace.js';
import type { RecordTable } from '../engine/record-table.js';
import { cutQuery, type LexicalIndex } from '../lexical/lexical-index.js';
import type { SearchResult } from '../types.js';
import type { VectorIndex } from '../vector/vector-index.js';

/** What a search reads: the engine's in-memory state at the time of the call. */
export interface PipelineState {
  records: Pick<RecordTable, 'get' | 'size' | 'anyRestricted'>;
  lexical: LexicalIndex;
  /** Null without an embedder. */
  vectors: VectorIndex | null;
  /** Memories in thread order (`meta.thread`), for the neighbours stage. */
  threads: ThreadIndex;
  /** Whether MMR measures memory-to-memory similarity relative to the corpus (see vector/similarity.ts). */
  calibrateSimilarity: boolean;
  embedderId: string | null;
  vectorsReady: boolean;
  /** Embeds and normalises the query. */
  embedQuery(query: string): Promise<Float32Array>;
  countTokens?: (text: string) => number;
  /** Query characters read by either leg (the lexical index cuts at the same length). */
  maxQueryChars: number;
}

export async function runPipeline(state: PipelineState, query: string, options: SearchOptions, now: number): Promise<SearchResult> {
  const trace = new Tracer();
  const { records, lexical, vectors } = state;
  const eligible = compileEligibility({ filter: options.filter, deepRecall: options.deepRecall, now, anyRestricted: records.anyRestricted });
  const eligibleId = eligible
    ? (id: string) => {
        const record = records.get(id);
        return record !== undefined && eligible(record);
      }
    : undefined;
  const pool = Math.max(options.candidatePool, options.k);

  const routed = trace.stage(
    'route',
    records.size,
    () => route(query, options.mode, { embedder: state.embedderId, vectorsReady: state.vectorsReady }),
    () => records.size,
    (r) => r.note,
  );

  const legs: LegResult[] = [];
  if (routed.mode !== 'vector') {
    const items = trace.stage('lexical', lexical.size, () => lexical.search(query, pool, eligibleId), (r) => r.length);
    legs.push({ leg: 'lexical', weight: options.weights.lexical, items });
  }
  if (routed.mode !== 'lexical' && vectors) {
    const items = await trace.stageAsync(
      'vector',
      vectors.size,
      // Cut before embedding, as the lexical leg cuts before tokenising: a huge query must not reach the model.
      async () => vectors.search(await state.embedQuery(cutQuery(query, state.maxQueryChars)), pool, eligibleId),
      (r) => r.length,
      () => 'includes embedding the query',
    );
    legs.push({ leg: 'vector', weight: options.weights.vector, items });
  }

  const legTotal = legs.reduce((n, leg) => n + leg.items.length, 0);
  const fusedLegs = trace.stage('fuse', legTotal, () => fuse(legs, options), (f) => f.length, () => options.fusion);

  const neighbourOptions = options.neighbours;
  const fused = neighbourOptions
    ? trace.stage('neighbours', fusedLegs.length, () => supportNeighbours(fusedLegs, state.threads, neighbourOptions), (f) => f.length)
    : fusedLegs;

  const filtered = trace.stage(
    'filter',
    fused.length,
    () => filterCandidates(fused, (id) => records.get(id), eligible, options.deepRecallPenalty),
    (f) => f.length,
    () => 'hard filters also ran inside the legs as eligibility, so each leg pool holds only eligible memories',
  );

  const adjusted = trace.stage('adjust', filtered.length, () => adjust(filtered, options, now), (a) => a.length);

  const selected = trace.stage(
    'diversify',
    adjusted.length,
    () => diversify(adjusted, options, vectors, state.calibrateSimilarity && vectors ? vectors.meanPairwiseCosine() : 0),
    (s) => s.length,
    () => (options.raw ? 'raw: top k by score' : options.diversity === false ? 'diversity off: top k by score' : undefined),
  );

  const context = trace.stage(
    'assemble',
    selected.length,
    () => assemble(selected.map((s) => s.record), options.tokenBudget, state.countTokens ?? estimateTokens),
    (c) => c.ids.length,
  );

  return { hits: selected.map(toHit), context, trace: trace.finish(routed.mode, state.embedderId) };
}
