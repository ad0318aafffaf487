/**
 * One search, top to bottom: route → lexical → vector → fuse → filter → adjust → diversify → assemble.
 * Each stage is its own module; this file only wires them and records the trace.
 */
import { assemble, estimateTokens } from './assemble.js';
import { boost } from './boost.js';
import { recency } from './decay.js';
import { mmrSelect } from './diversify.js';
import { compileEligibility, supersededFactor } from './filter.js';
import { fuseRrf, type FusedCandidate, type LegResult } from './fuse.js';
import type { LexicalIndex } from './lexical.js';
import type { SearchOptions } from './options.js';
import { route } from './route.js';
import { Tracer } from './trace.js';
import type { Hit, MemoryRecord, SearchResult } from './types.js';
import type { RecordTable } from './record-table.js';
import { dot, type VectorIndex } from './vector.js';

export interface PipelineState {
  records: Pick<RecordTable, 'get' | 'size' | 'anyRestricted'>;
  lexical: LexicalIndex;
  /** Null without an embedder. */
  vectors: VectorIndex | null;
  embedderId: string | null;
  vectorsReady: boolean;
  /** Embeds and normalises the query. */
  embedQuery(query: string): Promise<Float32Array>;
  countTokens?: (text: string) => number;
}

interface Scored {
  candidate: FusedCandidate;
  record: MemoryRecord;
  penalty: number;
  recency: number;
  boost: number;
  score: number;
  mmr?: number;
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

  const routed = trace.stage('route', records.size, () => route(query, options.mode, { embedder: state.embedderId, vectorsReady: state.vectorsReady }), () => records.size, (r) => r.note);

  const legs: LegResult[] = [];
  if (routed.mode !== 'vector') {
    const items = trace.stage('lexical', lexical.size, () => lexical.search(query, pool, eligibleId), (r) => r.length);
    legs.push({ leg: 'lexical', weight: options.weights.lexical, items });
  }
  if (routed.mode !== 'lexical' && vectors) {
    const items = await trace.stageAsync(
      'vector',
      vectors.size,
      async () => vectors.search(await state.embedQuery(query), pool, eligibleId),
      (r) => r.length,
      () => 'includes embedding the query',
    );
    legs.push({ leg: 'vector', weight: options.weights.vector, items });
  }

  const legTotal = legs.reduce((n, leg) => n + leg.items.length, 0);
  const fused = trace.stage('fuse', legTotal, () => fuseRrf(legs, options), (f) => f.length);

  const filtered = trace.stage(
    'filter',
    fused.length,
    () =>
      fused.flatMap((candidate) => {
        const record = records.get(candidate.id);
        if (!record || (eligible && !eligible(record))) return [];
        return [{ candidate, record, penalty: supersededFactor(record, options.deepRecallPenalty) }];
      }),
    (f) => f.length,
    () => 'hard filters also ran inside the legs as eligibility, so each leg pool holds only eligible memories',
  );

  const adjusted = trace.stage(
    'adjust',
    filtered.length,
    () => {
      const scored: Scored[] = filtered.map((c) => {
        const r = recency(c.record, now, options);
        const b = boost(c.record, options);
        return { ...c, recency: r, boost: b, score: c.candidate.rrf * c.penalty * r * b };
      });
      scored.sort((a, b) => b.score - a.score);
      return options.raw ? scored : scored.filter((s) => s.score >= options.minScore);
    },
    (a) => a.length,
  );

  const selected = trace.stage(
    'diversify',
    adjusted.length,
    () => select(adjusted, options, vectors),
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

/** The k hits: MMR with duplicate drop (unless raw or diversity is off), then ordered by score. */
function select(adjusted: Scored[], options: SearchOptions, vectors: VectorIndex | null): Scored[] {
  if (options.raw || options.diversity === false) return adjusted.slice(0, options.k);
  const vectorOf = adjusted.map((s) => vectors?.get(s.record.id)?.slice());
  const textKey = adjusted.map((s) => s.record.text.trim().toLowerCase().replace(/\s+/g, ' '));
  // Cosine when both memories have vectors; without vectors only identical texts count as duplicates.
  const similarity = (a: number, b: number) => {
    const va = vectorOf[a];
    const vb = vectorOf[b];
    if (va && vb) return dot(va, vb);
    return textKey[a] === textKey[b] ? 1 : 0;
  };
  const { picked } = mmrSelect(
    adjusted.map((s) => s.score),
    options.k,
    options.diversity,
    similarity,
  );
  return picked
    .map(({ index, mmr }) => ({ ...(adjusted[index] as Scored), mmr }))
    .sort((a, b) => b.score - a.score);
}

function toHit(s: Scored): Hit {
  const { candidate, record } = s;
  const explain: Hit['explain'] = {
    bm25Rank: candidate.rank.lexical,
    vecRank: candidate.rank.vector,
    bm25: candidate.legScore.lexical,
    cosine: candidate.legScore.vector,
    rrf: candidate.rrf,
    recency: s.recency,
    boost: s.boost,
  };
  if (record.supersededBy !== undefined) explain.superseded = true;
  if (s.mmr !== undefined) explain.mmr = s.mmr;
  return { id: record.id, text: record.text, score: s.score, memory: record, explain };
}
