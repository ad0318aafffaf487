/**
 * The engine: owns the state (records by id, the lexical index, the vector side) and every operation on it. The
 * store is the source of truth: each change is validated and embedded first, written to the store in one atomic
 * write, and only then applied in memory, so a failure anywhere changes nothing (write-queue.ts). Changes run one
 * at a time; searches read the in-memory state and never wait for them.
 *
 * This file wires the parts, each with its own lifecycle: options.ts (checked once), write-queue.ts,
 * lexical-snapshot.ts (open and save), supersede.ts (a pure plan per add), touch-writer.ts (bookkeeping after
 * search) and vector-state.ts (embedder, stored vectors, re-indexing).
 */
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../errors.js';
import { LexicalIndex } from '../lexical/lexical-index.js';
import type { IndexSnapshot } from '../lexical/snapshot.js';
import { ThreadIndex } from '../search/neighbours.js';
import { resolveSearchOptions, validateSearchOptions, type SearchOptions } from '../search/options.js';
import { runPipeline, type PipelineState } from '../search/pipeline.js';
import type { RecordSummary } from '../store/store.js';
import { isCold } from '../search/retention.js';
import { reinforced } from '../search/reinforce.js';
import type {
  Association, Embedder, Link, LinkKind, MemoryInput, MemoryPatch, MemoryRecord, Progress, SearchResult, Timeline, TimelineOptions, Why, WhyOptions,
} from '../types.js';
import { AssociationGraph } from './associations.js';
import { checkConfidence, checkLinkKind, checkWhyOptions, LinkGraph } from './links.js';
import { embedTexts } from './embed.js';
import { encodeLexical, repackLexical, openLexical } from './lexical-snapshot.js';
import { checkEmbedder, resolveEngineOptions, type EngineOptions, type ResolvedEngineOptions } from './options.js';
import { RecordTable } from './record-table.js';
import { applyPatch, changesIndexed, checkId, cloneRecord, describe, newId, recordFromImport, recordFromInput } from './records.js';
import { planSupersedeAsync } from './supersede.js';
import { TouchWriter } from './touch-writer.js';
import { VectorState } from './vector-state.js';
import { WriteQueue } from './write-queue.js';

export type { EngineOptions } from './options.js';

/** A summary in the shape the thread index files (it reads id, createdAt and meta.thread). */
function threadEntry(summary: RecordSummary): Pick<MemoryRecord, 'id' | 'createdAt' | 'meta'> {
  return summary.thread === undefined ? { id: summary.id, createdAt: summary.createdAt } : { id: summary.id, createdAt: summary.createdAt, meta: { thread: summary.thread } };
}

/** When a record last changed: updatedAt, else createdAt. */
function lastChange(record: MemoryRecord): number {
  return record.updatedAt ?? record.createdAt;
}

export interface AddOptions {
  /** Called after each embedded batch: memories done so far out of the call's total. */
  onProgress?(progress: Progress): void;
}

export interface Engine {
  /** Stores memories; returns their ids in input order. Atomic: every item is stored or none is. */
  add(input: MemoryInput | MemoryInput[], opts?: AddOptions): Promise<string[]>;
  search(query: string, options?: Partial<SearchOptions>): Promise<SearchResult>;
  /** A copy of the memory, or null when there is none with this id. */
  get(id: string): Promise<MemoryRecord | null>;
  /**
   * The memories just before and after one memory (copies, oldest first): in its thread (`meta.thread`), or, when it
   * has none, among the memories without a thread by createdAt (ties by arrival). Every stored memory counts,
   * superseded and expired ones too (their records say so): a timeline shows what was stored, as `get` does.
   * `before`/`after`: integers 0–100, default 3 (INVALID_INPUT otherwise). NOT_FOUND for an unknown id.
   */
  timeline(id: string, options?: TimelineOptions): Promise<Timeline>;
  /** Applies a patch (null clears an optional field); re-embeds when the text changes. NOT_FOUND for an unknown id. */
  update(id: string, patch: MemoryPatch): Promise<MemoryRecord>;
  /** Removes memories; unknown ids are ignored. Returns how many were removed. */
  remove(ids: string | string[]): Promise<number>;
  pin(id: string, pinned?: boolean): Promise<MemoryRecord>;
  count(): Promise<number>;
  /** Every record (copies, plain data), re-importable with `import`. */
  export(): Promise<MemoryRecord[]>;
  /** Upserts records (as exported, or plain inputs); atomic like `add`. Returns ids in input order. */
  import(records: (MemoryRecord | MemoryInput)[], opts?: AddOptions): Promise<string[]>;
  /** Waits for queued writes (touch bookkeeping, re-indexing batches already started). */
  flush(): Promise<void>;
  /** Stops re-indexing, waits for queued writes, closes the store. Later calls reject with CLOSED. */
  close(): Promise<void>;
  /** Swaps the embedder: loads its stored vectors and re-embeds the rest in the background. */
  setEmbedder(embedder: Embedder | null): Promise<void>;
  readonly embedder: Embedder | null;
  /** Re-indexing progress, or null when every memory has a vector for the current embedder (or there is no embedder). */
  indexing(): Progress | null;
  /** Settles when the current re-indexing ends: resolves when vectors are complete, rejects with its error. */
  readonly ready: Promise<void>;
  /** The memory's associations (weights decayed to now), strongest first. NOT_FOUND for an unknown id. */
  related(id: string): Promise<Association[]>;
  /**
   * Records a provenance link: `from` causes, derives from, edits… `to` (LinkKind). Both memories must exist
   * (NOT_FOUND), and differ. Linking again replaces the confidence.
   */
  link(from: string, to: string, kind: LinkKind, options?: { confidence?: number }): Promise<Link>;
  /** Removes the links from `from` to `to` (of `kind` only, when given). Returns how many were removed. */
  unlink(from: string, to: string, kind?: LinkKind): Promise<number>;
  /** The provenance links reached from a memory, breadth first (`WhyOptions`). NOT_FOUND for an unknown id. */
  why(id: string, options?: WhyOptions): Promise<Why>;
  /** How many memories, core memories, associations and provenance links the engine holds. */
  stats(): Promise<EngineStats>;
  /** The lexical index in its binary snapshot form, with the store's change counter (waits for queued writes first). */
  indexSnapshot(): Promise<IndexSnapshot>;
  /** How the lexical index was made on open: loaded from `indexSnapshot`, or rebuilt from the records. */
  readonly lexicalSource: 'snapshot' | 'rebuilt';
}

export interface EngineStats {
  memories: number;
  core: number;
  associations: number;
  links: number;
}

/**
 * The background load of every record starts after the first search is answered, or this long after open: it
 * shares the worker's thread (and the store) with that first search.
 */
const RECORD_LOAD_GRACE_MS = 1000;

/** Most memories `timeline` returns on each side of its anchor. */
export const MAX_TIMELINE_SIDE = 100;
const DEFAULT_TIMELINE_SIDE = 3;

function checkTimelineOptions(options: unknown): { before: number; after: number } {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidInput(`timeline options must be an object { before?, after? }, got ${describe(options)}`);
  }
  const side = (name: 'before' | 'after'): number => {
    const value: unknown = (options as TimelineOptions)[name];
    if (value === undefined) return DEFAULT_TIMELINE_SIDE;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMELINE_SIDE) {
      throw invalidInput(`timeline option ${name} must be an integer from 0 to ${MAX_TIMELINE_SIDE}, got ${describe(value)}`);
    }
    return value;
  };
  return { before: side('before'), after: side('after') };
}

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const engine = new EngramEngine(resolveEngineOptions(options));
  await engine.open();
  return engine;
}

class EngramEngine implements Engine {
  private readonly records = new RecordTable();
  private readonly lexical: LexicalIndex;
  /** Memories in thread order (`meta.thread`), and those without a thread by time: for the neighbours stage and `timeline`. */
  private readonly threads = new ThreadIndex();
  private readonly queue: WriteQueue;
  private readonly touches: TouchWriter;
  private readonly vectors: VectorState;
  private readonly associations: AssociationGraph;
  private readonly links = new LinkGraph();
  /** The session of searches that name none (SearchOptions.session). */
  private readonly session = newId();
  lexicalSource: 'snapshot' | 'rebuilt' = 'rebuilt';
  private closed = false;
  /** Until the background load of every record starts (`startRecordLoad`). */
  private recordLoadTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly options: ResolvedEngineOptions) {
    this.lexical = new LexicalIndex(options.lexical);
    this.queue = new WriteQueue(options.store);
    const { associationStep: step, associationDecayDays: decayDays, maxAssociations: maxPerMemory } = options.learning;
    this.associations = new AssociationGraph({ step, decayDays, maxPerMemory });
    this.touches = new TouchWriter(this.records, this.queue, options.store, options.onBackgroundError, (edges) => this.associations.asWrite(edges));
    this.vectors = new VectorState(options, this.records, this.queue);
  }

  /**
   * Opens from the stored summaries when the store can read records by id: searches are answered before (or, for a
   * table above `residentRecords`, without) every record being in memory. Otherwise every record is loaded here.
   */
  async open(): Promise<void> {
    const { store } = this.options;
    /** Every record, when this open read them all. */
    let loaded: MemoryRecord[] | null = null;
    try {
      const summaries = store.loadRecordSummaries && store.loadRecordsByIds ? await store.loadRecordSummaries() : null;
      const loader = store.loadRecordsByIds?.bind(store);
      const onDemand = summaries && loader && this.records.startOnDemand(summaries, loader, this.options.residentRecords, this.options.recordCacheSize);
      if (!onDemand) {
        // No by-id reads, or a legacy database with an id stored twice (loadDistinct): every record, resident.
        loaded = this.loadDistinct(await store.loadRecords());
        this.records.fillResident(loaded);
      }
      this.associations.load((await store.loadAssociations?.()) ?? []);
      this.links.load((await store.loadLinks?.()) ?? []);
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, 'could not load memories from the store');
    }
    this.threads.upsertAll([...this.records.summaryValues()].map(threadEntry));
    this.lexicalSource = await openLexical(this.lexical, this.records, this.options.indexSnapshot, store);
    this.recordLoadTimer = setTimeout(this.startRecordLoad, RECORD_LOAD_GRACE_MS);
    // Node: the background load must not keep the process alive.
    (this.recordLoadTimer as { unref?: () => void }).unref?.();
    await this.vectors.attach(this.options.embedder);
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
    return this.queue.run(async () => {
      const list = Array.isArray(input) ? input : [input];
      this.checkCallSize(list.length, 'add');
      const now = this.options.clock();
      const created = list.map((item, i) => recordFromInput(item, now, this.options.limits, Array.isArray(input) ? `memory[${i}]` : 'memory'));
      this.checkDistinct(created);
      for (const record of created) {
        if (this.records.has(record.id)) {
          throw new EngramError(ErrorCode.DUPLICATE_ID, `a memory with id "${record.id}" already exists (use update or import to replace it)`, {
            details: { id: record.id },
          });
        }
      }
      if (created.length === 0) return [];
      const vectors = await this.vectors.embedAll(created, opts.onProgress);
      const { batch, stored } = await this.planSupersede(created, vectors);
      await this.queue.commit({ put: [...batch, ...stored], vectors: this.vectors.pack(batch, vectors) }, () => {
        this.applyRecords(batch, vectors);
        for (const record of stored) this.records.set(record);
      });
      return batch.map((r) => r.id);
    });
  }

  import(input: (MemoryRecord | MemoryInput)[], opts: AddOptions = {}): Promise<string[]> {
    this.checkOpen();
    return this.queue.run(async () => {
      if (!Array.isArray(input)) throw invalidInput('import takes an array of records');
      this.checkCallSize(input.length, 'import');
      const now = this.options.clock();
      const batch = input.map((item, i) => recordFromImport(item, now, this.options.limits, `records[${i}]`));
      this.checkDistinct(batch);
      const ids = new Set(batch.map((r) => r.id));
      for (const record of batch) {
        // A supersededBy pointing nowhere would hide the memory for good: drop it.
        if (record.supersededBy !== undefined && !ids.has(record.supersededBy) && !this.records.has(record.supersededBy)) {
          delete record.supersededBy;
        }
      }
      if (batch.length === 0) return [];
      const pending = this.records.preload(batch.map((r) => r.id));
      if (pending) await pending;
      // Memories already stored with the same text keep their vector; the others are embedded.
      const vectors = await this.vectors.embedAll(batch, opts.onProgress, (r) => this.vectors.reusableVector(r));
      await this.queue.commit({ put: batch, vectors: this.vectors.pack(batch, vectors) }, () => this.applyRecords(batch, vectors));
      return batch.map((r) => r.id);
    });
  }

  update(id: string, patch: MemoryPatch): Promise<MemoryRecord> {
    this.checkOpen();
    return this.queue.run(async () => {
      const current = await this.mustLoad(id);
      const next = applyPatch(current, patch, this.options.clock(), this.options.limits);
      const textChanged = next.text !== current.text;
      const vectors = textChanged ? await this.vectors.embedAll([next]) : null;
      await this.queue.commit({ put: [next], vectors: this.vectors.pack([next], vectors) }, () => {
        if (changesIndexed(current, next)) this.applyRecords([next], vectors);
        else this.records.set(next);
        this.threads.upsertAll([next]);
      });
      return cloneRecord(next);
    });
  }

  pin(id: string, pinned = true): Promise<MemoryRecord> {
    return this.update(id, { pinned });
  }

  remove(ids: string | string[]): Promise<number> {
    this.checkOpen();
    return this.queue.run(async () => {
      const list = Array.isArray(ids) ? ids : [ids];
      list.forEach((id, i) => checkId(id, `remove: ids[${i}]`));
      const gone = new Set(list.filter((id) => this.records.has(id)));
      if (gone.size === 0) return 0;
      // Memories superseded by a removed one become live again rather than vanish.
      const restoredIds: string[] = [];
      for (const summary of this.records.summaryValues()) {
        if (summary.supersededBy !== undefined && gone.has(summary.supersededBy) && !gone.has(summary.id)) restoredIds.push(summary.id);
      }
      const restored = (await this.records.getMany(restoredIds)).map((record) => {
        const copy = cloneRecord(record);
        delete copy.supersededBy;
        return copy;
      });
      await this.queue.commit({ remove: [...gone], put: restored }, () => {
        for (const id of gone) {
          this.records.delete(id);
          this.lexical.remove(id);
          this.threads.remove(id);
          this.vectors.index?.remove(id);
          this.associations.removeMemory(id);
          this.links.removeMemory(id);
        }
        for (const record of restored) this.records.set(record);
      });
      return gone.size;
    });
  }

  // ---- reads --------------------------------------------------------------------------------------------

  async search(query: string, options: Partial<SearchOptions> = {}): Promise<SearchResult> {
    this.checkOpen();
    if (typeof query !== 'string') throw invalidInput(`search query must be a string, got ${typeof query}`);
    const resolved = validateSearchOptions(resolveSearchOptions(this.options.search, options));
    const now = resolved.now ?? this.options.clock();
    const embedder = this.vectors.embedder;
    const state: PipelineState = {
      records: this.records,
      lexical: this.lexical,
      threads: this.threads,
      calibrateSimilarity: this.options.calibrateSimilarity,
      vectors: this.vectors.index,
      embedderId: embedder?.id ?? null,
      vectorsReady: this.vectors.indexing() === null,
      embedQuery: async (text) => (await embedTexts(embedder as Embedder, [text]))[0] as Float32Array,
      countTokens: this.vectors.countTokens,
      maxQueryChars: this.options.maxQueryChars,
      llm: this.options.llm,
      reranker: this.options.reranker,
      associations: this.associations,
    };
    const result = await runPipeline(state, query, resolved, now);
    this.startRecordLoad();
    // The hits' records were read by the pipeline; a slow stage (a language model) may have let them be evicted.
    const pending = this.records.preload(result.hits.map((h) => h.id));
    if (pending) await pending;
    this.markCold(result, resolved, now);
    if (resolved.touch && result.hits.length > 0) {
      if (resolved.reinforce) this.reinforce(result, resolved.session ?? this.session, now);
      else this.touches.touch(result.hits.map((h) => h.id), now);
    }
    for (const hit of result.hits) hit.memory = cloneRecord(this.records.get(hit.id) ?? hit.memory);
    return result;
  }

  /** Marks the hits that were cold before this search (search/retention.ts). */
  private markCold(result: SearchResult, options: SearchOptions, now: number): void {
    const decay = options.decay !== false && options.decay.kind === 'stability' ? options.decay : undefined;
    for (const hit of result.hits) {
      const record = this.records.get(hit.id);
      if (record && isCold(record, now, decay)) hit.explain.cold = true;
    }
  }

  /**
   * The `reinforce` stage (search/reinforce.ts): applied in memory now, written in the background with the
   * associations of every two direct hits; traced after the pipeline's stages.
   */
  private reinforce(result: SearchResult, session: string, now: number): void {
    const started = performance.now();
    const { learning } = this.options;
    let promoted = 0;
    const updated = result.hits.flatMap((hit) => {
      const record = this.records.get(hit.id);
      if (!record) return [];
      const next = reinforced(record, hit.explain.associative !== undefined, now, session, learning);
      if (next.core && !record.core) promoted++;
      return [next];
    });
    // A hit removed while the search ran forms no association (its edges would outlive it in the store).
    const direct = result.hits.filter((hit) => hit.explain.associative === undefined && this.records.has(hit.id)).map((hit) => hit.id);
    this.touches.update(updated, this.associations.strengthen(direct, now));
    const ms = performance.now() - started;
    const pairs = (direct.length * (direct.length - 1)) / 2;
    result.trace.stages.push({
      name: 'reinforce',
      in: result.hits.length,
      out: updated.length,
      ms,
      note: `${direct.length} direct, ${updated.length - direct.length} associative; ${pairs} pairs strengthened${promoted > 0 ? `; ${promoted} promoted to core` : ''}; written in the background`,
      promptTokens: 0,
      completionTokens: 0,
    });
    result.trace.totalMs += ms;
  }

  async related(id: string): Promise<Association[]> {
    this.checkOpen();
    await this.mustLoad(id);
    return this.associations.related(id, this.options.clock());
  }

  link(from: string, to: string, kind: LinkKind, options: { confidence?: number } = {}): Promise<Link> {
    this.checkOpen();
    return this.queue.run(async () => {
      checkLinkKind(kind);
      if (typeof options !== 'object' || options === null) throw invalidInput('link options must be an object { confidence? }');
      const confidence = checkConfidence(options.confidence);
      await this.mustLoad(from);
      await this.mustLoad(to);
      if (from === to) throw invalidInput('a memory cannot be linked to itself');
      const link: Link = { from, to, kind, confidence, createdAt: this.options.clock() };
      await this.queue.commit({ links: { put: [link] } }, () => this.links.set(link));
      return { ...link };
    });
  }

  unlink(from: string, to: string, kind?: LinkKind): Promise<number> {
    this.checkOpen();
    return this.queue.run(async () => {
      checkId(from, 'unlink: from');
      checkId(to, 'unlink: to');
      if (kind !== undefined) checkLinkKind(kind);
      const gone = this.links.between(from, to, kind);
      if (gone.length === 0) return 0;
      await this.queue.commit({ links: { remove: gone } }, () => gone.forEach((link) => this.links.delete(link)));
      return gone.length;
    });
  }

  async why(id: string, options: WhyOptions = {}): Promise<Why> {
    this.checkOpen();
    const { depth, direction } = checkWhyOptions(options);
    const root = await this.mustLoad(id);
    const walked = this.links.walk(id, depth, direction);
    const memories = await this.records.getMany(walked.reached);
    const byId = new Map(memories.map((record) => [record.id, record]));
    return {
      root: cloneRecord(root),
      edges: walked.edges,
      memories: walked.reached.flatMap((other) => (byId.has(other) ? [cloneRecord(byId.get(other)!)] : [])),
      truncated: walked.truncated,
    };
  }

  async stats(): Promise<EngineStats> {
    this.checkOpen();
    let core = 0;
    for (const summary of this.records.summaryValues()) if (summary.core) core++;
    return { memories: this.records.size, core, associations: this.associations.size, links: this.links.size };
  }

  async get(id: string): Promise<MemoryRecord | null> {
    this.checkOpen();
    checkId(id, 'get');
    const record = await this.records.getOne(id);
    return record ? cloneRecord(record) : null;
  }

  async timeline(id: string, options: TimelineOptions = {}): Promise<Timeline> {
    this.checkOpen();
    const { before, after } = checkTimelineOptions(options);
    let anchor = await this.mustLoad(id);
    let around = this.threads.around(id, before, after)!;
    // Until every record is in memory and none changed while they were read (then each is read in this task).
    for (let pending = this.records.preload([...around.before, ...around.after]); pending; ) {
      await pending;
      anchor = await this.mustLoad(id);
      around = this.threads.around(id, before, after)!;
      pending = this.records.preload([id, ...around.before, ...around.after]);
    }
    const copies = (ids: string[]) => ids.map((neighbour) => cloneRecord(this.records.get(neighbour)!));
    return { anchor: cloneRecord(anchor), before: copies(around.before), after: copies(around.after), by: around.by };
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

  /**
   * Puts the loaded records into the table, one per id. A store should never return an id twice, but a database
   * written before ids had to be well-formed can: SQLite stored '\ud800' and '\ud801' as two rows that both read
   * back as '\ufffd'. The engine then keeps the later version (by updatedAt, else createdAt; on a tie the one
   * loaded last, the later write) and reports the others once through onBackgroundError (DUPLICATE_ID) rather
   * than refusing to open. The store is left as it is: the dropped rows cannot be addressed by their id.
   */
  private loadDistinct(loaded: MemoryRecord[]): MemoryRecord[] {
    const duplicated = new Set<string>();
    let dropped = 0;
    const byId = new Map<string, MemoryRecord>();
    for (const record of loaded) {
      const kept = byId.get(record.id);
      if (kept) {
        duplicated.add(record.id);
        dropped++;
        if (lastChange(record) < lastChange(kept)) continue;
        byId.delete(record.id);
      }
      byId.set(record.id, record);
    }
    if (dropped === 0) return loaded;
    const ids = [...duplicated];
    this.options.onBackgroundError(
      new EngramError(
        ErrorCode.DUPLICATE_ID,
        `the store returned ${dropped} duplicate record(s) for ${ids.length} id(s) (${ids.slice(0, 5).map((id) => JSON.stringify(id)).join(', ')}${ids.length > 5 ? ', …' : ''}); ` +
          'the latest version of each was kept',
        { details: { ids, dropped } },
      ),
    );
    return [...byId.values()];
  }

  /** Refuses more than limits.maxRecordsPerCall items in one add or import (the caller splits them into calls). */
  private checkCallSize(count: number, call: string): void {
    const limit = this.options.limits.maxRecordsPerCall;
    if (count > limit) {
      throw invalidInput(`${call} got ${count} memories; the limit is ${limit} per call (engine option limits.maxRecordsPerCall): split them into several calls`);
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new EngramError(ErrorCode.CLOSED, 'this engine is closed');
  }

  private async mustLoad(id: string): Promise<MemoryRecord> {
    checkId(id, 'id');
    const record = await this.records.getOne(id);
    if (!record) throw new EngramError(ErrorCode.NOT_FOUND, `no memory with id "${id}"`, { details: { id } });
    return record;
  }

  private checkDistinct(batch: readonly MemoryRecord[]): void {
    const seen = new Set<string>();
    for (const { id } of batch) {
      if (seen.has(id)) throw new EngramError(ErrorCode.DUPLICATE_ID, `id "${id}" appears twice in one call`, { details: { id } });
      seen.add(id);
    }
  }

  /** What supersede does to a new batch (nothing without vectors): supersede.ts. */
  private async planSupersede(created: MemoryRecord[], vectors: Float32Array[] | null): Promise<{ batch: MemoryRecord[]; stored: MemoryRecord[] }> {
    const index = this.vectors.index;
    if (!vectors || !index) return { batch: created, stored: [] };
    const { supersedeThreshold: threshold, calibrateSimilarity: calibrate, vectorScan: makeScan } = this.options;
    // The plan reads stored memories' summaries; the ones it supersedes are written whole, with its mark.
    const plan = await planSupersedeAsync({ index, storedRecord: (id) => this.records.summary(id), threshold, calibrate, makeScan }, created, vectors);
    const marks = new Map(plan.stored.map((r) => [r.id, r.supersededBy as string]));
    const stored = (await this.records.getMany([...marks.keys()])).map((r) => ({ ...cloneRecord(r), supersededBy: marks.get(r.id) as string }));
    return { batch: plan.batch, stored };
  }

  /** Puts records into the map and every index (with their vectors when given). */
  private applyRecords(batch: readonly MemoryRecord[], vectors: Float32Array[] | null): void {
    for (const record of batch) this.records.set(record);
    this.lexical.addAll(batch);
    this.threads.upsertAll(batch);
    if (vectors) this.vectors.index?.setMany(batch.map((r) => r.id), vectors);
  }
}
