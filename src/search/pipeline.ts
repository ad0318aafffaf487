/**
 * One search, top to bottom:
 *   route → understand → synthesize → hyde → lexical → feedback → vector → fuse → neighbours → filter → adjust
 *   → sources (where memories derive from others: superseded-sources.ts)
 *   → associate → rerank → currency → diversify → assemble, then after the answer reinforce (or touch),
 * where offline synthesis (pseudo-relevance feedback) reads the first pass's hits, so it runs after the legs and
 * its queries run through them again before `fuse`.
 * Each stage is its own module; this file only wires them and records the trace. The language-model stages
 * (understand with 'llm', synthesize with 'llm', hyde, rerank with 'llm') run only when the search asks for them
 * and the engine has a model, never in `mode: 'vector'`, and never fail the search (llm-stage.ts).
 */
import { adjust } from './adjust.js';
import { afterAnswer, markCold } from './after-answer.js';
import { associate } from './associate.js';
import { assemble, estimateTokens } from './assemble.js';
import { CONTEXT_MMR_LAMBDA } from './diverse-sessions.js';
import { diverseContextOrder, diversify, hedgeDepth } from './diversify.js';
import { toHit } from './explain.js';
import { markFeedback, runFeedback } from './feedback.js';
import { orderByCurrency } from './currency.js';
import { compileEligibility, filterCandidates } from './filter.js';
import { fuseLists, type FusedCandidate, type QueryList } from './fuse.js';
import { writeHypothetical } from './hyde.js';
import type { LlmAccess } from './llm-stage.js';
import { sittingGapMs, supportNeighbours } from './neighbours.js';
import { placeSupersededSources } from './superseded-sources.js';
import type { SearchOptions } from './options.js';
import { applyOrder, rerankOrder } from './rerank.js';
import { QueryLegs } from './legs.js';
import { route } from './route.js';
import { synthesizeByLlm } from './synthesize.js';
import { feedbackQueries } from './synthesize-offline.js';
import { Tracer } from './trace.js';
import { understand } from './understand.js';
import type { PipelineState } from './state.js';
import type { SearchResult, TraceQuery } from '../types.js';

export async function runPipeline(state: PipelineState, query: string, options: SearchOptions, now: number): Promise<SearchResult> {
  const trace = new Tracer();
  const { records, lexical, vectors } = state;
  const eligible = compileEligibility({ ...options, now, anyRestricted: records.anyRestricted });
  const eligibleId = eligible
    ? (id: string) => {
        const summary = records.summary(id);
        return summary !== undefined && eligible(summary);
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
  // CEMS's fast path: vector mode makes no language-model call. A blank query has nothing to ask about.
  const llm = routed.mode === 'vector' || query.trim() === '' ? null : state.llm;
  const withoutLlm = state.llm === null ? 'no language model (engine option llm)' : routed.mode === 'vector' ? "mode 'vector' makes no language-model call" : 'empty query';

  const access: LlmAccess = { llm, unavailable: withoutLlm, timeoutMs: options.llmTimeoutMs };

  const { understanding } = await trace.stageAsync(
    'understand',
    1,
    () => understand(query, options.understand, access),
    () => 1,
    (r) => ({ note: r.note ?? `${r.understanding.type}, ${r.understanding.complexity} (${r.understanding.by})`, usage: r.usage }),
  );

  const queries: TraceQuery[] = [{ text: query, source: 'original', weight: options.originalQueryWeight }];
  if (options.synthesis === 'llm') {
    const synthesized = await trace.stageAsync(
      'synthesize',
      1,
      () => synthesizeByLlm(query, understanding.type, access),
      (r) => r.queries.length,
      (r) => ({ note: r.note ?? r.queries.join(' | '), usage: r.usage }),
    );
    for (const text of synthesized.queries) queries.push({ text, source: 'llm', weight: 1 });
  }

  let hyde: string | undefined;
  if (options.hyde && routed.mode !== 'lexical' && vectors) {
    const written = await trace.stageAsync(
      'hyde',
      1,
      () => writeHypothetical(query, access),
      (r) => (r.text === undefined ? 0 : 1),
      (r) => ({ note: r.note ?? r.text, usage: r.usage }),
    );
    if (written.text !== undefined) {
      hyde = written.text;
      queries.push({ text: hyde, source: 'hyde', weight: 1 });
    }
  }

  const legs = new QueryLegs(state, routed.mode, options, pool, eligibleId);
  legs.runLexical(trace, queries);
  // Pseudo-relevance feedback on the caller's lexical list, before the vector leg reads that list's floats.
  const feedbackOptions = options.feedback;
  let firstPass: { id: string; score: number }[] | null = null;
  if (feedbackOptions && routed.mode !== 'vector') {
    const first = legs.lexicalList(0);
    const reading = records.preload(first.slice(0, feedbackOptions.docs).map((item) => item.id));
    if (reading) await reading;
    const result = trace.stage(
      'feedback',
      Math.min(first.length, feedbackOptions.docs),
      () => runFeedback(query, first, (id) => records.get(id), lexical, feedbackOptions, pool, eligibleId),
      (r) => r.items?.length ?? first.length,
      (r) => r.note,
    );
    if (result.items) {
      firstPass = first;
      legs.replaceLexical(0, result.items);
    }
  }
  await legs.runVector(trace, queries.length);

  if (options.synthesis === 'offline') {
    const firstPass = records.preload(legs.fused(0).map((c) => c.id));
    if (firstPass) await firstPass;
    // Pseudo-relevance feedback reads the caller's first-pass hits, so its queries run as a second pass.
    const feedback = trace.stage(
      'synthesize',
      1,
      () => {
        const docs = legs.fused(0).flatMap((c) => {
          const record = records.get(c.id);
          return record ? [{ text: record.text, score: c.fused }] : [];
        });
        return feedbackQueries(query, docs, { term: (word) => lexical.termOfWord(word), idf: (terms) => lexical.termIdf(terms) });
      },
      (extra) => extra.length,
      (extra) => (extra.length > 0 ? `feedback from the first pass: ${extra.join(' | ')}` : 'no feedback terms'),
    );
    const extra: TraceQuery[] = feedback.map((text) => ({ text, source: 'offline', weight: 1 }));
    await legs.run(trace, extra);
    queries.push(...extra);
  }

  const fusedLegs = trace.stage(
    'fuse',
    legs.total(),
    (): FusedCandidate[] => {
      if (queries.length === 1) return legs.fused(0);
      const lists: QueryList[] = queries.map((q, i) => ({ weight: q.weight, candidates: legs.fused(i) }));
      return fuseLists(lists, options.listFusion, options.rrfK);
    },
    (f) => f.length,
    () =>
      queries.length > 1
        ? `${options.fusion} per query, then ${options.listFusion === 'rrf' ? 'weighted RRF' : 'weighted mean of scores'} over ${queries.length} lists (caller's ×${options.originalQueryWeight})`
        : options.fusion,
  );

  const neighbourOptions = options.neighbours;
  const supported = neighbourOptions
    ? trace.stage('neighbours', fusedLegs.length, () => supportNeighbours(fusedLegs, state.threads, neighbourOptions), (f) => f.length)
    : fusedLegs;
  const fused = firstPass ? markFeedback(supported, firstPass) : supported;

  // The candidates' records, from the store when not in memory (traced as 'records' then); read synchronously from here on.
  const reading = records.preload(fused.map((c) => c.id));
  if (reading) await trace.stageAsync('records', fused.length, () => reading, () => fused.length, () => 'read from the store');
  const filtered = trace.stage(
    'filter',
    fused.length,
    () => filterCandidates(fused, (id) => records.get(id), eligible, options.deepRecallPenalty, now),
    (f) => f.length,
    () => 'hard filters also ran inside the legs as eligibility, so each leg pool holds only eligible memories',
  );

  const gapMs = sittingGapMs(options.neighbours);
  const inSequence = (id: string) => state.threads.inSequence(id, gapMs);
  let adjusted = trace.stage(
    'adjust',
    filtered.length,
    () => adjust(filtered, options, now, inSequence, understanding.dates),
    (a) => a.length,
    (a) => (understanding.dates && options.dateBoost !== 1 ? `${a.filter((s) => s.dated).length} written on ${understanding.dates.map((d) => `"${d.text}"`).join(', ')} (×${options.dateBoost})` : undefined),
  );

  // Traced only where some candidate has a memory derived from it (formation's turns, an app's links).
  if (adjusted.some((s) => state.provenance.derivedFrom(s.record.id).length > 0)) {
    const before = adjusted;
    adjusted = trace.stage(
      'sources',
      adjusted.length,
      () => placeSupersededSources(before, state.provenance, records),
      (r) => r.scored.length,
      (r) => `${r.demoted} placed below the memory that superseded one derived from them`,
    ).scored;
  }

  const queryVector = legs.queryVector();
  if (options.associations !== false && queryVector && vectors) {
    const associating = { ...options, associations: options.associations };
    const associated = await trace.stageAsync(
      'associate',
      Math.min(options.k, adjusted.length),
      () =>
        associate(adjusted, associating, {
          graph: state.associations,
          query: queryVector,
          summary: (id) => records.summary(id),
          readRecords: (ids) => records.preload(ids),
          record: (id) => records.get(id),
          vectors: (ids) => vectors.exactVectors(ids),
          eligible,
          now,
          inSequence,
          baseline: vectors.meanCosineTo(queryVector),
        }),
      (a) => a.added,
      (a) => `${a.added} associative${a.bridges > 0 ? ` (${a.bridges} through a bridge)` : ''}`,
    );
    adjusted = associated.scored;
  }

  const rerank = options.rerank;
  let reranked = adjusted;
  if (rerank !== false) {
    const head = adjusted.slice(0, rerank.inputLimit);
    const { order } = await trace.stageAsync(
      'rerank',
      head.length,
      () => rerankOrder(query, head, rerank, { access, reranker: state.reranker, lexical }),
      (r) => r.order?.length ?? 0,
      (r) => ({ note: r.note ?? `${rerank.by}: ${r.order?.length ?? 0} of ${head.length} placed`, usage: r.usage }),
    );
    if (order) reranked = applyOrder(adjusted, head.length, order, rerank.by);
  }

  const currency = options.currency;
  if (currency !== false && !options.raw) {
    // Each text's distinct terms, memoised: currency only asks which of the query's terms a text holds.
    const parts = { query, queryTerms: lexical.queryTerms(query), textTerms: (text: string) => lexical.termCounts(text).terms, isLater: (a: string, b: string) => state.threads.isLater(a, b), sameThread: (a: string, b: string) => state.threads.sameThread(a, b), inSequence };
    reranked = trace.stage(
      'currency',
      reranked.length,
      () => orderByCurrency(reranked, options.k, currency, parts),
      (r) => r.scored.length,
      (r) => `${r.placed} later version${r.placed === 1 ? '' : 's'} placed above the earlier`,
    ).scored;
  }

  const bySession = options.assembly === 'diverse' || (options.assembly === 'auto' && understanding.type === 'aggregation');
  const baseline = state.calibrateSimilarity && vectors ? vectors.meanPairwiseCosine() : 0;
  const cover = options.assembly === 'cover' ? options.k : options.assembly === 'hedge' ? hedgeDepth(reranked, understanding.type === 'aggregation', options.k) : 0;
  const selected = trace.stage(
    'diversify',
    reranked.length,
    () => diversify(reranked, options, vectors, baseline, bySession, cover),
    (s) => s.length,
    (s) =>
      options.raw ? 'raw: top k by score'
      : options.diversity === false ? 'diversity off: top k by score'
      : bySession ? `diverse: the best of each thread first${options.assembly === 'auto' ? ' (aggregation question)' : ''}`
      : cover > 0 ? `${options.assembly}: ${s.filter((h) => h.covers).length} placed for threads the lexical leg's first ${cover} reached`
      : undefined,
  );

  // Hits stay in score order; a diverse context is filled each thread's best first (diverse-sessions.ts).
  const diversity = options.raw ? false : options.diversity;
  const diverseContext = bySession && diversity !== false;
  const context = trace.stage(
    'assemble',
    selected.length,
    () => {
      const order = diverseContext ? diverseContextOrder(selected, diversity, vectors, baseline) : selected;
      return assemble(order.map((s) => s.record), options.tokenBudget, state.countTokens ?? estimateTokens, state.blockTokens);
    },
    (c) => c.ids.length,
    () => (diverseContext ? `diverse: the best of each thread first (MMR λ ${CONTEXT_MMR_LAMBDA}), then the rest` : undefined),
  );

  const hits = selected.map(toHit);
  // A slow stage (a language model) may have let the hits' records be evicted since they were read.
  const reread = records.preload(hits.map((h) => h.id));
  if (reread) await reread;
  markCold(hits, records, options, now);
  afterAnswer(trace, hits, state, options, now);

  return { hits, context, trace: trace.finish(routed.mode, state.embedderId, understanding, queries, hyde) };
}
