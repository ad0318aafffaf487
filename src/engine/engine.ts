/**
 * The engine: owns the state and every operation on it. The store is the source of truth: a change is validated and
 * embedded first, written to the store in one atomic write, and only then applied in memory, so a failure anywhere
 * changes nothing. Changes run one at a time (write-queue.ts); searches read the in-memory state and never wait.
 *
 * This file wires the parts (docs/architecture.md): open.ts, writes.ts, vector-state.ts, touch-writer.ts,
 * provenance.ts, timeline.ts, lexical-persistence.ts, formation.ts and consolidate.ts, and sync (sync/sync.ts);
 * a search is search/pipeline.ts, post-answer stages included.
 */
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../errors.js';
import { LexicalIndex } from '../lexical/lexical-index.js';
import type { IndexSnapshot } from '../lexical/snapshot.js';
import { checkSearchOptionKeys } from '../search/option-keys.js';
import { checkedFirst, checkMessageKeys, checkMethodOptionKeys } from './method-options.js';
import { LONG_MEMORY_SEARCH, resolveSearchOptions, validateSearchOptions, type SearchOptions } from '../search/options.js';
import { runPipeline } from '../search/pipeline.js';
import type { PipelineState } from '../search/state.js';
import { ThreadIndex } from '../search/thread-index.js';
import type { AssociationEdge } from '../store/store.js';
import type { SyncStatus } from '../sync/sync.js';
import type {
  Association, ConsolidateOptions, ConsolidateResult, ConversationMessage, Embedder, RememberOptions, RememberResult, Link, LinkKind, MemoryInput, MemoryPatch, MemoryRecord, Progress, SearchResult, Timeline, TimelineOptions, Why, WhyOptions,
} from '../types.js';
import { queuedUnlessAborted } from '../util/abort.js';
import { checkId, newId } from '../util/ids.js';
import { Serial } from '../util/serial.js';
import type { AddOptions, Engine, EngineStats, SyncKeyInput } from './api.js';
import { AssociationGraph } from './associations.js';
import { consolidate } from './consolidate.js';
import { cloneRecord } from './copy.js';
import { remember, sameHome, TURN_KIND, type FormationHost, type FormationWrite } from './formation.js';
import { writeFormation } from './formation-write.js';
import { IdleConsolidation } from './idle-consolidation.js';
import { encodeLexical, repackLexical } from './lexical-persistence.js';
import { LinkGraph } from './links.js';
import { loadState } from './open.js';
import { checkEmbedder, loadSyncParts, resolveEngineOptions, type EngineOptions, type ResolvedEngineOptions } from './options.js';
import { Provenance } from './provenance.js';
import { RecordTable } from './record-table.js';
import { reviveOldFolds } from './supersede-migration.js';
import { timeline } from './timeline.js';
import { TouchWriter } from './touch-writer.js';
import { VectorState } from './vector-state.js';
import { WriteQueue } from './write-queue.js';
import { MemoryWrites } from './writes.js';

export type { AddOptions, Engine, EngineStats } from './api.js';
export type { EngineOptions } from './options.js';

/**
 * The background load of every record starts after the first search is answered, or this long after open: it
 * shares the worker's thread (and the store) with that first search.
 */
const RECORD_LOAD_GRACE_MS = 1000;

/**
 * An engine in the calling thread (Node, tests, an app's own worker), on `memoryStore()` unless given a store.
 *
 * @example
 * ```ts
 * import { createEmbedder, createEngine } from 'engram/node';
 *
 * const engine = await createEngine({ embedder: await createEmbedder() }); // without an embedder: lexical only
 * await engine.add({ text: 'Grandma likes tulips and orchids', tags: ['family'] });
 * const { hits, context, trace } = await engine.search('which flowers does grandma like?');
 * ```
 */
export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const syncParts = options?.sync !== undefined ? await loadSyncParts() : null;
  const engine = new EngramEngine(resolveEngineOptions(options, syncParts));
  await engine.open();
  return engine;
}

class EngramEngine implements Engine {
  private readonly records = new RecordTable();
  private readonly lexical: LexicalIndex;
  /** Memories in thread order (`meta.thread`), and those without a thread by time: for the neighbours stage and `timeline`. */
  private readonly threads = new ThreadIndex();
  private readonly queue: WriteQueue;
  /** remember and consolidate, one at a time: each decides against what the one before it wrote. */
  private readonly formations = new Serial();
  private readonly touches: TouchWriter;
  private readonly vectors: VectorState;
  private readonly associations: AssociationGraph;
  private readonly links = new LinkGraph();
  private readonly provenance: Provenance;
  /** The session of searches that name none (SearchOptions.session). */
  private readonly session = newId();
  lexicalSource: 'snapshot' | 'rebuilt' = 'rebuilt';
  private closed = false;
  /** Until the background load of every record starts (`startRecordLoad`). */
  private recordLoadTimer: ReturnType<typeof setTimeout> | null = null;
  /** The opt-in idle consolidation (EngineOptions.consolidation), poked after each write. */
  private readonly idle: IdleConsolidation | null;
  private readonly writes: MemoryWrites;

  constructor(private readonly options: ResolvedEngineOptions) {
    this.lexical = new LexicalIndex(options.lexical);
    this.queue = new WriteQueue(options.store);
    const { associationStep: step, associationDecayDays: decayDays, maxAssociations: maxPerMemory } = options.learning;
    this.associations = new AssociationGraph({ step, decayDays, maxPerMemory });
    this.touches = new TouchWriter(this.records, this.queue, options.store, options.onBackgroundError, (edges) => this.associations.asWrite(edges));
    this.vectors = new VectorState(options, this.records, this.queue, this.lexical);
    this.provenance = new Provenance(this.records, this.queue, this.links, this.associations, options.clock);
    const { records, lexical, threads, vectors, associations, links, queue } = this;
    this.writes = new MemoryWrites({ options, records, lexical, threads, vectors, associations, links, queue });
    const schedule = options.consolidation;
    this.idle = schedule ? new IdleConsolidation(schedule.idleMs, () => this.consolidate(schedule.options), options.onBackgroundError) : null;
  }

  async open(): Promise<void> {
    const { records, lexical, threads, associations, links } = this;
    this.lexicalSource = await loadState({ records, lexical, threads, associations, links }, this.options);
    // 'similar' keeps the marks the old rule made: the app asked for that folding.
    if (this.options.supersede !== 'similar') await reviveOldFolds({ records, links, queue: this.queue, readMeta: (key) => this.options.store.readMeta(key) });
    this.recordLoadTimer = setTimeout(this.startRecordLoad, RECORD_LOAD_GRACE_MS);
    // Node: the background load must not keep the process alive.
    (this.recordLoadTimer as { unref?: () => void }).unref?.();
    await this.vectors.attach(this.options.embedder);
    await this.options.sync?.open(this);
  }

  /** Starts the background load of every record (once): after the first search, or a moment after open. */
  private readonly startRecordLoad = (): void => {
    if (this.recordLoadTimer === null) return;
    clearTimeout(this.recordLoadTimer);
    this.recordLoadTimer = null;
    void this.records.loadInBackground((error) =>
      this.options.onBackgroundError(toEngramError(error, ErrorCode.STORE_FAILED, 'could not load memories in the background')),
    );
  };

  async saveVectorIndex(): Promise<number> {
    this.checkOpen();
    return this.vectors.saveIndex();
  }

  get vectorSource(): 'saved' | 'loaded' {
    return this.vectors.source;
  }

  async indexSnapshot(): Promise<IndexSnapshot> {
    this.checkOpen();
    await this.touches.flush();
    return this.queue.run(async () => {
      const snapshot = await encodeLexical(this.lexical, this.records, this.options.store);
      repackLexical(this.lexical, snapshot);
      return snapshot;
    });
  }

  get embedder(): Embedder | null {
    return this.vectors.embedder;
  }

  get ready(): Promise<void> {
    return this.vectors.ready;
  }

  indexing(): Progress | null {
    return this.vectors.indexing();
  }

  async setEmbedder(embedder: Embedder | null): Promise<void> {
    this.checkOpen();
    await this.queue.run(async () => {
      if (embedder !== null) checkEmbedder(embedder);
      await this.vectors.attach(embedder);
    });
  }

  // ---- writes -------------------------------------------------------------------------------------------

  add(input: MemoryInput | MemoryInput[], opts: AddOptions = {}): Promise<string[]> {
    this.checkOpen();
    return checkedFirst(() => checkMethodOptionKeys('add', opts), () => this.afterWrite(this.queued(() => this.writes.add(input, opts), opts?.signal, 'add')));
  }

  import(input: (MemoryRecord | MemoryInput)[], opts: AddOptions = {}): Promise<string[]> {
    this.checkOpen();
    return checkedFirst(() => checkMethodOptionKeys('import', opts), () => this.afterWrite(this.queued(() => this.writes.import(input, opts), opts?.signal, 'import')));
  }

  /** `task` in the write queue; aborted at once while it waits there (then, when its turn comes, it writes nothing). */
  private queued<T>(task: () => Promise<T>, signal: AbortSignal | undefined, method: string): Promise<T> {
    return queuedUnlessAborted((t) => this.queue.run(t), task, signal, method);
  }

  update(id: string, patch: MemoryPatch): Promise<MemoryRecord> {
    this.checkOpen();
    return this.afterWrite(this.queue.run(() => this.writes.update(id, patch)));
  }

  pin(id: string, pinned = true): Promise<MemoryRecord> {
    return this.update(id, { pinned });
  }

  remove(ids: string | string[]): Promise<number> {
    this.checkOpen();
    return this.queue.run(() => this.writes.remove(ids));
  }

  // ---- memory formation (formation.ts, consolidate.ts) ----------------------------------------------------

  remember(conversation: string | ConversationMessage[], options?: RememberOptions): Promise<RememberResult> {
    this.checkOpen();
    return checkedFirst(() => (checkMethodOptionKeys('remember', options), checkMessageKeys(conversation)), () => this.afterWrite(remember(this.formation, conversation, options)));
  }

  consolidate(options?: ConsolidateOptions): Promise<ConsolidateResult> {
    this.checkOpen();
    const { llm, clock, limits, supersedeThreshold, calibrateSimilarity: calibrate } = this.options;
    const { records, associations } = this;
    const write = this.formation.write;
    const run = () => consolidate({ llm, clock, limits, records, index: this.vectors.index, associations, supersedeThreshold, calibrate, write }, options);
    return checkedFirst(() => checkMethodOptionKeys('consolidate', options), () => queuedUnlessAborted((t) => this.formations.run(t), run, options?.signal, 'consolidate'));
  }

  /** What formation reads and writes: candidates come from a search that changes nothing (no touch, no model stage). */
  private get formation(): FormationHost {
    const { llm, clock, limits, learning } = this.options;
    const parts = { records: this.records, queue: this.queue, vectors: this.vectors, links: this.links, learning, session: this.session, clock };
    const apply = (batch: readonly MemoryRecord[], vectors: Float32Array[] | null) => this.writes.apply(batch, vectors);
    return {
      llm,
      clock,
      limits,
      closest: async (text, k, home) => {
        const quiet = { touch: false, reinforce: false, understand: 'rules', synthesis: false, hyde: false, rerank: false, associations: false, deepRecall: false } as const;
        // The legs keep to the scope, and to the project when there is one ('no project' has no filter: checked after).
        const filter = { scope: home.scope ?? 'personal', ...(home.project === undefined ? {} : { project: home.project }) };
        const { hits } = await this.search(text, { ...quiet, filter, k: k * (home.project === undefined ? 4 : 2) });
        return hits.map((hit) => hit.memory).filter((m) => m.kind !== TURN_KIND && m.supersededBy === undefined && sameHome(m, home)).slice(0, k);
      },
      write: (change: FormationWrite) => this.queued(() => writeFormation({ ...parts, apply }, change), change.abort?.signal, change.abort?.method ?? 'write'),
      exclusive: (task, abort) => queuedUnlessAborted((t) => this.formations.run(t), task, abort?.signal, abort?.method ?? 'write'),
    };
  }

  // ---- reads --------------------------------------------------------------------------------------------

  async search(query: string, options: Partial<SearchOptions> = {}): Promise<SearchResult> {
    this.checkOpen();
    if (typeof query !== 'string') throw invalidInput(`search query must be a string, got ${typeof query}`);
    const collection = this.lexical.longMemories() ? LONG_MEMORY_SEARCH : undefined;
    checkSearchOptionKeys(options);
    const resolved = validateSearchOptions(resolveSearchOptions(collection, this.options.search, options));
    const state: PipelineState = {
      ...this.vectors.searchSide(),
      records: this.records,
      lexical: this.lexical,
      threads: this.threads,
      calibrateSimilarity: this.options.calibrateSimilarity,
      maxQueryChars: this.options.maxQueryChars,
      llm: this.options.llm,
      reranker: this.options.reranker,
      associations: this.associations,
      provenance: this.links,
      answers: this.answers,
      learning: this.options.learning,
      session: this.session,
    };
    const result = await runPipeline(state, query, resolved, resolved.now ?? this.options.clock());
    this.startRecordLoad();
    for (const hit of result.hits) hit.memory = cloneRecord(this.records.get(hit.id) ?? hit.memory);
    return result;
  }

  /** Where the post-answer stages write (search/after-answer.ts): the touch writer, in the background. */
  private readonly answers: PipelineState['answers'] = {
    touch: (ids, now) => this.touches.touch(ids, now),
    reinforce: (records, direct, now) => this.touches.update(records, this.associations.strengthen(direct, now)),
  };

  async related(id: string): Promise<Association[]> {
    this.checkOpen();
    return this.provenance.related(id);
  }

  link(from: string, to: string, kind: LinkKind, options?: { confidence?: number }): Promise<Link> {
    this.checkOpen();
    return checkedFirst(() => checkMethodOptionKeys('link', options), () => this.provenance.link(from, to, kind, options));
  }

  unlink(from: string, to: string, kind?: LinkKind): Promise<number> {
    this.checkOpen();
    return this.provenance.unlink(from, to, kind);
  }

  /** Sync (sync/sync.ts): received associations between memories held here, kept where stronger than this device's. */
  mergeAssociations(edges: AssociationEdge[]): Promise<void> {
    this.checkOpen();
    return this.queue.run(async () => {
      // Changed in memory first, as the touch writer does: association rows are bookkeeping that may lag.
      const changed = this.associations.mergeStronger(edges.filter((e) => this.records.has(e.a) && this.records.has(e.b)));
      if (changed.length > 0) await this.queue.commit({ associations: this.associations.asWrite(changed) }, () => undefined);
    });
  }

  async why(id: string, options?: WhyOptions): Promise<Why> {
    this.checkOpen();
    checkMethodOptionKeys('why', options);
    return this.provenance.why(id, options);
  }

  async stats(): Promise<EngineStats> {
    this.checkOpen();
    let core = 0;
    for (const summary of this.records.summaryValues()) if (summary.core) core++;
    const sync = this.options.sync?.status();
    return { memories: this.records.size, core, associations: this.associations.size, links: this.links.size, ...(sync ? { sync } : {}) };
  }

  async syncNow(): Promise<SyncStatus> {
    this.checkOpen();
    if (!this.options.sync) throw invalidInput('syncNow: this engine was created without sync options');
    return this.options.sync.syncNow();
  }

  async rotateSyncKey(next: SyncKeyInput): Promise<SyncStatus> {
    this.checkOpen();
    if (!this.options.sync) throw invalidInput('rotateSyncKey: this engine was created without sync options');
    // Loaded with the sync (createEngine), so the import resolves at once.
    const { checkSyncKeyInput } = await import('../sync/sync-parts.js');
    return this.options.sync.rotate(checkSyncKeyInput(next));
  }

  async get(id: string): Promise<MemoryRecord | null> {
    this.checkOpen();
    checkId(id, 'get');
    const record = await this.records.getOne(id);
    return record ? cloneRecord(record) : null;
  }

  async timeline(id: string, options: TimelineOptions = {}): Promise<Timeline> {
    this.checkOpen();
    checkMethodOptionKeys('timeline', options);
    return timeline(id, options, this.records, this.threads);
  }

  async count(): Promise<number> {
    this.checkOpen();
    return this.records.size;
  }

  async export(): Promise<MemoryRecord[]> {
    this.checkOpen();
    const out: MemoryRecord[] = [];
    for await (const chunk of this.records.scan([...this.records.keys()])) for (const record of chunk) out.push(cloneRecord(record));
    return out;
  }

  async flush(): Promise<void> {
    await this.touches.flush();
    await this.queue.idle();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.options.sync?.stop();
    this.idle?.stop();
    this.vectors.stop();
    this.records.stop();
    if (this.recordLoadTimer !== null) clearTimeout(this.recordLoadTimer);
    this.recordLoadTimer = null;
    await this.touches.flush();
    await this.queue.idle();
    this.touches.markStoreClosed();
    try {
      await this.options.store.close();
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, 'could not close the store');
    }
  }

  // ---- internals ----------------------------------------------------------------------------------------

  private checkOpen(): void {
    if (this.closed) throw new EngramError(ErrorCode.CLOSED, 'this engine is closed');
  }

  /** `write`, restarting the idle consolidation's wait when it settles (it counts from the end of the last write). */
  private afterWrite<T>(write: Promise<T>): Promise<T> {
    if (!this.idle) return write;
    const idle = this.idle;
    return write.finally(() => idle.poke());
  }
}
