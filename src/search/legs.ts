/**
 * The `lexical` and `vector` stages for every query list of one search (the caller's, synthesized ones, HyDE's),
 * and each query's legs fused as a single query's would be (`fuse`).
 */
import { fuse, type FusedCandidate, type LegAnchors, type LegResult } from './fuse.js';
import type { SearchOptions } from './options.js';
import type { PipelineState } from './state.js';
import type { Mode } from './route.js';
import type { Tracer } from './trace.js';
import { cutQuery } from '../lexical/lexical-index.js';
import type { TraceQuery } from '../types.js';

/** What the legs read of the search's state. */
type LegSources = Pick<PipelineState, 'lexical' | 'vectors' | 'embedQuery' | 'maxQueryChars'>;

/**
 * The legs of every query of one search: a lexical and a vector list per query (HyDE text: vector only), and each
 * query's legs fused as a single query's would be. `run` may be called again for a second pass.
 */
export class QueryLegs {
  private readonly queries: TraceQuery[] = [];
  private readonly lexicalLists: LegResult['items'][] = [];
  private readonly vectorLists: LegResult['items'][] = [];
  private readonly vectorOf: (Float32Array | undefined)[] = [];
  private readonly fusedLists: (FusedCandidate[] | undefined)[] = [];
  /** First query of the batch whose vector stage is to run. */
  private pending = 0;

  constructor(
    private readonly state: LegSources,
    private readonly mode: Mode,
    private readonly options: SearchOptions,
    private readonly pool: number,
    private readonly eligibleId: ((id: string) => boolean) | undefined,
  ) {}

  async run(trace: Tracer, batch: readonly TraceQuery[]): Promise<void> {
    this.runLexical(trace, batch);
    await this.runVector(trace, batch.length);
  }

  /** The lexical stage of a new batch of queries; `runVector` of the same batch must follow. */
  runLexical(trace: Tracer, batch: readonly TraceQuery[]): void {
    if (batch.length === 0) return;
    const { lexical } = this.state;
    const first = this.queries.length;
    this.queries.push(...batch);
    this.pending = first;
    const searched = batch.filter((q) => q.source !== 'hyde').length;
    if (this.mode !== 'vector') {
      trace.stage(
        'lexical',
        lexical.size,
        () => batch.map((q) => (q.source === 'hyde' ? [] : lexical.search(q.text, this.pool, this.eligibleId))),
        (lists) => lists.reduce((n, list) => n + list.length, 0),
        () => {
          const notes = this.queries.length > 1 ? [`${searched} ${searched === 1 ? 'query' : 'queries'}`] : [];
          // Why the defaults differ here (engine.ts, LONG_MEMORY_SEARCH): the collection's own shape, not an option.
          if (lexical.longMemories()) notes.push(`long memories (mean ${Math.round(lexical.meanTerms())} terms): documents defaults`);
          return notes.length > 0 ? notes.join('; ') : undefined;
        },
      ).forEach((list, i) => (this.lexicalLists[first + i] = list));
    }
  }

  /** The vector stage of the batch `runLexical` took last (after any change to its lexical lists, whose floats it reads too). */
  async runVector(trace: Tracer, count: number): Promise<void> {
    if (count === 0) return;
    const { vectors } = this.state;
    const first = this.pending;
    const batch = this.queries.slice(first, first + count);
    if (this.mode !== 'lexical' && vectors) {
      const embedded = await trace.stageAsync(
        'vector',
        vectors.size,
        async () => {
          // Cut before embedding, as the lexical leg cuts before tokenising: a huge query must not reach the model.
          const vectorsOfBatch = await Promise.all(batch.map((q) => this.state.embedQuery(cutQuery(q.text, this.state.maxQueryChars), q.source === 'hyde' ? 'document' : 'query')));
          // A compact index reads its candidates' floats from the store; the lexical candidates' come in the same
          // read, so diversify's similarities among the head are exact (VectorIndex.get).
          const alsoRead = vectors.isCompact ? batch.flatMap((_, i) => (this.lexicalLists[first + i] ?? []).map((item) => item.id)) : [];
          return Promise.all(
            vectorsOfBatch.map(async (vector, i) => ({ vector, items: await vectors.searchAsync(vector, this.pool, this.eligibleId, i === 0 ? alsoRead : []) })),
          );
        },
        (lists) => lists.reduce((n, { items }) => n + items.length, 0),
        () => (this.queries.length > 1 ? `${batch.length} queries, embedding included` : 'includes embedding the query'),
      );
      embedded.forEach(({ vector, items }, i) => {
        this.vectorOf[first + i] = vector;
        this.vectorLists[first + i] = items;
      });
    }
  }

  /** Query i's lexical list (empty when the leg did not run). */
  lexicalList(i: number): LegResult['items'] {
    return this.lexicalLists[i] ?? [];
  }

  /** Replaces query i's lexical list (stage `feedback`), before its legs are fused. */
  replaceLexical(i: number, items: LegResult['items']): void {
    this.lexicalLists[i] = items;
    this.fusedLists[i] = undefined;
  }

  /** The caller's query as the vector leg embedded it, or undefined when that leg did not run. */
  queryVector(): Float32Array | undefined {
    return this.vectorOf[0];
  }

  /** Candidates the legs returned, over every query so far. */
  total(): number {
    let n = 0;
    for (let i = 0; i < this.queries.length; i++) n += (this.lexicalLists[i]?.length ?? 0) + (this.vectorLists[i]?.length ?? 0);
    return n;
  }

  /** Query i's legs fused (computed once). */
  fused(i: number): FusedCandidate[] {
    let fused = this.fusedLists[i];
    if (!fused) {
      const legs: LegResult[] = [];
      if (this.mode !== 'vector') legs.push({ leg: 'lexical', weight: this.options.weights.lexical, items: this.lexicalLists[i] ?? [] });
      if (this.mode !== 'lexical' && this.state.vectors) legs.push({ leg: 'vector', weight: this.options.weights.vector, items: this.vectorLists[i] ?? [] });
      const anchors = this.options.fusion === 'scaled' ? anchorsOf(this.state, this.queries[i] as TraceQuery, this.vectorOf[i]) : undefined;
      fused = this.fusedLists[i] = fuse(legs, this.options, anchors);
    }
    return fused;
  }
}

/** What `'scaled'` fusion reads for one query: its reference BM25 and its mean cosine to the store. */
function anchorsOf(state: LegSources, query: TraceQuery, vector: Float32Array | undefined): LegAnchors {
  return {
    lexicalBound: query.source === 'hyde' ? null : (state.lexical.scoreBound(query.text)?.reference ?? null),
    queryBaseline: vector && state.vectors ? state.vectors.meanCosineTo(vector) : 0,
  };
}
