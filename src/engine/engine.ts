/**
 * The engine: owns the state (records by id, the lexical index, the vector matrix) and every operation on
 * it. The store is the source of truth: each change is validated and embedded first, written to the store in
 * one atomic write, and only then applied to the in-memory indexes, so a failure anywhere changes nothing.
 * Changes run one at a time (a promise queue); searches read the in-memory state and never wait for them.
 */
import { embedInBatches, embedTexts } from './embed.js';
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../errors.js';
import { LexicalIndex, type LexicalOptions } from '../lexical/lexical-index.js';
import { memoizeByText } from '../util/memo.js';
import { ThreadIndex } from '../search/neighbours.js';
import { calibratedCosine, meanPairwiseCosine } from '../vector/similarity.js';
import { memoryStore } from '../store/memory-store.js';
import { resolveSearchOptions, validateSearchOptions, type SearchOptions } from '../search/options.js';
import { runPipeline, type PipelineState } from '../search/pipeline.js';
import { RecordTable } from './record-table.js';
import { nextTask } from '../util/schedule.js';
import { decodeSnapshot, documentHashes, encodeSnapshot, staleDocuments, type IndexSnapshot } from '../lexical/snapshot.js';
import { applyPatch, changesIndexed, checkId, cloneRecord, recordFromImport, recordFromInput, type RecordLimits } from './records.js';
import type { PackedVectors, Store, StoreWrite } from '../store/store.js';
import type { Embedder, MemoryInput, MemoryPatch, MemoryRecord, Progress, SearchResult } from '../types.js';
import { QuantizedScan } from '../vector/quantized-scan.js';
import { VectorIndex, type VectorScan } from '../vector/vector-index.js';

export interface EngineOptions {
  /** Where memories live. Default: `memoryStore()` (in memory, lost on exit). The engine closes it on `close()`. */
  store?: Store;
  /** `null` or absent: lexical only. */
  embedder?: Embedder | null;
  /** What "now" means (epoch ms). Default `Date.now`. */
  clock?: () => number;
  /** This engine's default search options, merged over `defaultSearchOptions`. */
  search?: Partial<SearchOptions>;
  /** On add, a new memory whose cosine to a live one is ≥ this supersedes the older. `false` disables. Default 0.95. */
  supersedeThreshold?: number | false;
  /**
   * Supersede and MMR compare memories by cosine calibrated to this store: (cos − b) / (1 − b), b = the mean
   * cosine between two stored memories, so a threshold means the same with any model (similarity.ts).
   * Default true; false compares raw cosines. With the built-in model raw cosine ≥ 0.95 holds for 70% of a
   * LoCoMo conversation's turns, which supersede would hide.
   */
  calibrateSimilarity?: boolean;
  /** Lexical index settings (stop words, term processor, BM25 parameters, field weights). */
  lexical?: LexicalOptions;
  /** Longest accepted memory text in UTF-16 code units. Default 100,000. */
  maxTextLength?: number;
  /**
   * Texts per embedder call on add, import and re-indexing. Default 128: the embedder sorts a call's texts by
   * length before running its own batches, so larger calls pad less (ingest in the worker: embedding about 20%
   * faster than with 32). The worker answers searches between calls, so one call (about 25 ms for 128 texts with
   * the built-in model) is the longest a search waits behind an ingest.
   */
  embedBatchSize?: number;
  /** Makes the vector scan. Default: `QuantizedScan` (int8 + exact rescoring, same answers as `exactScan`). */
  vectorScan?: () => VectorScan;
  /** Progress of background re-indexing (memories without a vector for the current embedder). */
  onIndexProgress?(progress: Progress): void;
  /** Failures of background work (re-indexing, touch bookkeeping). Default: `console.warn`. */
  onBackgroundError?(error: EngramError): void;
  /** A lexical index snapshot from `engine.indexSnapshot()`; used on open only if it still matches the store (else rebuilt). */
  indexSnapshot?: IndexSnapshot | null;
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
  /** The lexical index in its binary snapshot form, with the store's change counter (waits for queued writes first). */
  indexSnapshot(): Promise<IndexSnapshot>;
  /** How the lexical index was made on open: loaded from `indexSnapshot`, or rebuilt from the records. */
  readonly lexicalSource: 'snapshot' | 'rebuilt';
}

/** Touch bookkeeping is written once searches pause this long... */
const TOUCH_WRITE_DELAY_MS = 1000;
/** ...or, during a steady stream of searches, at most this long after the first unsaved one. */
const TOUCH_WRITE_MAX_DELAY_MS = 10_000;

export async function createEngine(options: EngineOptions = {}): Promise<Engine> {
  const engine = new EngramEngine(options);
  await engine.open();
  return engine;
}

class EngramEngine implements Engine {
  private readonly store: Store;
  private readonly clock: () => number;
  private readonly searchDefaults: Partial<SearchOptions>;
  private readonly limits: RecordLimits;
  private readonly supersedeThreshold: number | false;
  private readonly batchSize: number;
  private readonly makeScan: () => VectorScan;
  private readonly options: EngineOptions;

  private readonly records = new RecordTable();
  private readonly lexical: LexicalIndex;
  /** Memories in thread order (`meta.thread`), for the neighbours stage. */
  private readonly threads = new ThreadIndex();
  private readonly calibrateSimilarity: boolean;
  /** The current embedder's token counter, memoised (assembly counts every hit, every search). */
  private countTokens: ((text: string) => number) | undefined;
  private vectors: VectorIndex | null = null;
  private currentEmbedder: Embedder | null = null;
  private progress: Progress | null = null;
  private readyPromise: Promise<void> = Promise.resolve();
  /** Bumped by every embedder change: a stale re-indexing loop sees it and stops. */
  private generation = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly pendingTouches = new Set<string>();
  private touchTimer: ReturnType<typeof setTimeout> | null = null;
  /** When (performance.now) the oldest unsaved touch happened, or null when none is waiting. */
  private touchPendingSince: number | null = null;
  lexicalSource: 'snapshot' | 'rebuilt' = 'rebuilt';
  private closed = false;
  private storeClosed = false;

  constructor(options: EngineOptions) {
    this.options = options;
    this.store = options.store ?? memoryStore();
    this.clock = options.clock ?? Date.now;
    this.searchDefaults = options.search ?? {};
    validateSearchOptions(resolveSearchOptions(this.searchDefaults));
    this.limits = { maxTextLength: positiveInt(options.maxTextLength ?? 100_000, 'maxTextLength') };
    this.batchSize = positiveInt(options.embedBatchSize ?? 128, 'embedBatchSize');
    const threshold = options.supersedeThreshold ?? 0.95;
    if (threshold !== false && !(typeof threshold === 'number' && Number.isFinite(threshold))) {
      throw invalidInput('supersedeThreshold must be a number or false');
    }
    this.supersedeThreshold = threshold;
    this.calibrateSimilarity = options.calibrateSimilarity ?? true;
    this.makeScan = options.vectorScan ?? (() => new QuantizedScan());
    this.lexical = new LexicalIndex(options.lexical);
  }

  async open(): Promise<void> {
    let records: MemoryRecord[];
    try {
      records = await this.store.loadRecords();
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, 'could not load memories from the store');
    }
    for (const record of records) this.records.set(record);
    this.threads.upsertAll(records);
    this.lexicalSource = (await this.restoreLexical(this.options.indexSnapshot)) ? 'snapshot' : 'rebuilt';
    if (this.lexicalSource === 'rebuilt') this.lexical.addAll(records);
    await this.attach(this.options.embedder ?? null);
  }

  /**
   * Restores the lexical index from a snapshot made under the same settings. When the store's change counter has
   * moved since (a crash between a write and the next save), the memories whose text or tags no longer match the
   * snapshot's hashes are indexed again. Either way the index must then hold exactly the stored ids; false (and
   * an empty index) otherwise.
   */
  private async restoreLexical(snapshot: IndexSnapshot | null | undefined): Promise<boolean> {
    if (!snapshot) return false;
    try {
      const decoded = decodeSnapshot(snapshot);
      if (decoded.settings !== this.lexical.settingsKey) return false;
      this.lexical.restore(decoded.state);
      if (decoded.counter !== (await this.store.changeCounter())) {
        const { changed, removed } = staleDocuments(decoded, this.records);
        for (const id of removed) this.lexical.remove(id);
        this.lexical.addAll(changed);
      }
      if (this.lexical.size === this.records.size && [...this.records.keys()].every((id) => this.lexical.has(id))) return true;
    } catch {
      // refused or unreadable: rebuilt below
    }
    this.lexical.clear();
    return false;
  }

  async indexSnapshot(): Promise<IndexSnapshot> {
    this.checkOpen();
    await this.writeTouches();
    // In the queue: the counter read there is the one of the state encoded (no change can run in between; searches
    // may, while the texts are hashed, and they change no text, tag or document).
    return this.exclusive(async () => {
      const counter = await this.store.changeCounter();
      const state = this.lexical.state();
      const hashes = await documentHashes(state.documentIds, this.records);
      return encodeSnapshot(state, { settings: this.lexical.settingsKey, counter }, hashes);
    });
  }

  get embedder(): Embedder | null {
    return this.currentEmbedder;
  }

  get ready(): Promise<void> {
    return this.readyPromise;
  }

  indexing(): Progress | null {
    return this.progress && { ...this.progress };
  }

  async setEmbedder(embedder: Embedder | null): Promise<void> {
    this.checkOpen();
    await this.exclusive(() => this.attach(embedder));
  }

  // ---- writes -------------------------------------------------------------------------------------------

  add(input: MemoryInput | MemoryInput[], opts: AddOptions = {}): Promise<string[]> {
    this.checkOpen();
    return this.exclusive(async () => {
      const list = Array.isArray(input) ? input : [input];
      const now = this.clock();
      const batch = list.map((item, i) => recordFromInput(item, now, this.limits, Array.isArray(input) ? `memory[${i}]` : 'memory'));
      this.checkDistinct(batch);
      for (const record of batch) {
        if (this.records.has(record.id)) {
          throw new EngramError(ErrorCode.DUPLICATE_ID, `a memory with id "${record.id}" already exists (use update or import to replace it)`, {
            details: { id: record.id },
          });
        }
      }
      if (batch.length === 0) return [];
      const vectors = await this.embedAll(batch, opts.onProgress);
      const superseded = vectors ? this.planSupersede(batch, vectors) : [];
      await this.commit({ put: [...batch, ...superseded], vectors: this.pack(batch, vectors) }, () => {
        this.applyRecords(batch, vectors);
        for (const record of superseded) this.records.set(record);
      });
      return batch.map((r) => r.id);
    });
  }

  import(input: (MemoryRecord | MemoryInput)[], opts: AddOptions = {}): Promise<string[]> {
    this.checkOpen();
    return this.exclusive(async () => {
      if (!Array.isArray(input)) throw invalidInput('import takes an array of records');
      const now = this.clock();
      const batch = input.map((item, i) => recordFromImport(item, now, this.limits, `records[${i}]`));
      this.checkDistinct(batch);
      const ids = new Set(batch.map((r) => r.id));
      for (const record of batch) {
        // A supersededBy pointing nowhere would hide the memory for good: drop it.
        if (record.supersededBy !== undefined && !ids.has(record.supersededBy) && !this.records.has(record.supersededBy)) {
          delete record.supersededBy;
        }
      }
      if (batch.length === 0) return [];
      // Memories already stored with the same text keep their vector; the others are embedded.
      const vectors = await this.embedAll(batch, opts.onProgress, (r) => this.reusableVector(r));
      await this.commit({ put: batch, vectors: this.pack(batch, vectors) }, () => this.applyRecords(batch, vectors));
      return batch.map((r) => r.id);
    });
  }

  update(id: string, patch: MemoryPatch): Promise<MemoryRecord> {
    this.checkOpen();
    return this.exclusive(async () => {
      const current = this.mustGet(id);
      const next = applyPatch(current, patch, this.clock(), this.limits);
      const textChanged = next.text !== current.text;
      const vectors = textChanged ? await this.embedAll([next]) : null;
      await this.commit({ put: [next], vectors: this.pack([next], vectors) }, () => {
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
    return this.exclusive(async () => {
      const list = Array.isArray(ids) ? ids : [ids];
      list.forEach((id, i) => checkId(id, `remove: ids[${i}]`));
      const gone = new Set(list.filter((id) => this.records.has(id)));
      if (gone.size === 0) return 0;
      // Memories superseded by a removed one become live again rather than vanish.
      const restored: MemoryRecord[] = [];
      for (const record of this.records.values()) {
        if (record.supersededBy !== undefined && gone.has(record.supersededBy) && !gone.has(record.id)) {
          const copy = cloneRecord(record);
          delete copy.supersededBy;
          restored.push(copy);
        }
      }
      await this.commit({ remove: [...gone], put: restored }, () => {
        for (const id of gone) {
          this.records.delete(id);
          this.lexical.remove(id);
          this.threads.remove(id);
          this.vectors?.remove(id);
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
    const resolved = validateSearchOptions(resolveSearchOptions(this.searchDefaults, options));
    const now = resolved.now ?? this.clock();
    const embedder = this.currentEmbedder;
    const state: PipelineState = {
      records: this.records,
      lexical: this.lexical,
      threads: this.threads,
      calibrateSimilarity: this.calibrateSimilarity,
      vectors: this.vectors,
      embedderId: embedder?.id ?? null,
      vectorsReady: this.progress === null,
      embedQuery: async (text) => (await embedTexts(embedder as Embedder, [text]))[0] as Float32Array,
      countTokens: this.countTokens,
    };
    const result = await runPipeline(state, query, resolved, now);
    if (resolved.touch && result.hits.length > 0) this.touch(result.hits.map((h) => h.id), now);
    for (const hit of result.hits) hit.memory = cloneRecord(this.records.get(hit.id) ?? hit.memory);
    return result;
  }

  async get(id: string): Promise<MemoryRecord | null> {
    this.checkOpen();
    checkId(id, 'get');
    const record = this.records.get(id);
    return record ? cloneRecord(record) : null;
  }

  async count(): Promise<number> {
    this.checkOpen();
    return this.records.size;
  }

  async export(): Promise<MemoryRecord[]> {
    this.checkOpen();
    return [...this.records.values()].map(cloneRecord);
  }

  async flush(): Promise<void> {
    await this.writeTouches();
    await this.queue;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.generation++; // stops re-indexing between batches
    await this.writeTouches();
    await this.queue;
    this.storeClosed = true;
    try {
      await this.store.close();
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, 'could not close the store');
    }
  }

  // ---- internals ----------------------------------------------------------------------------------------

  private checkOpen(): void {
    if (this.closed) throw new EngramError(ErrorCode.CLOSED, 'this engine is closed');
  }

  /** Runs changes one at a time, in call order; a failed change does not block the next. */
  private exclusive<T>(change: () => Promise<T>): Promise<T> {
    const run = this.queue.then(change);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private mustGet(id: string): MemoryRecord {
    checkId(id, 'id');
    const record = this.records.get(id);
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

  /** Writes to the store, then applies the in-memory change (which cannot fail) only if the write succeeded. */
  private async commit(change: StoreWrite, apply: () => void): Promise<void> {
    try {
      await this.store.write(change);
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, 'the store rejected a write; nothing was changed');
    }
    apply();
  }

  /** Puts records into the map and both indexes (with their vectors when given). */
  private applyRecords(batch: readonly MemoryRecord[], vectors: Float32Array[] | null): void {
    for (const record of batch) this.records.set(record);
    this.lexical.addAll(batch);
    this.threads.upsertAll(batch);
    if (vectors && this.vectors) this.vectors.setMany(batch.map((r) => r.id), vectors);
  }

  /** Normalised vectors for `batch` (null without an embedder); `reuse` may supply some without embedding. */
  private async embedAll(
    batch: readonly MemoryRecord[],
    onProgress?: (p: Progress) => void,
    reuse?: (record: MemoryRecord) => Float32Array | undefined,
  ): Promise<Float32Array[] | null> {
    const embedder = this.currentEmbedder;
    if (!embedder || !this.vectors) {
      onProgress?.({ done: batch.length, total: batch.length });
      return null;
    }
    const out: (Float32Array | undefined)[] = batch.map((r) => reuse?.(r));
    const todo = batch.flatMap((r, i) => (out[i] ? [] : [i]));
    const reused = batch.length - todo.length;
    const embedded = await embedInBatches(
      embedder,
      todo.map((i) => (batch[i] as MemoryRecord).text),
      this.batchSize,
      onProgress && ((p) => onProgress({ done: reused + p.done, total: batch.length })),
    );
    todo.forEach((i, j) => (out[i] = embedded[j]));
    if (todo.length === 0) onProgress?.({ done: batch.length, total: batch.length });
    return out as Float32Array[];
  }

  private reusableVector(record: MemoryRecord): Float32Array | undefined {
    const stored = this.records.get(record.id);
    return stored && stored.text === record.text ? this.vectors?.get(record.id)?.slice() : undefined;
  }

  /** The store's packed form of `vectors` (undefined when there are none to write). */
  private pack(batch: readonly MemoryRecord[], vectors: Float32Array[] | null): PackedVectors | undefined {
    const embedder = this.currentEmbedder;
    if (!vectors || !embedder) return undefined;
    const data = new Float32Array(batch.length * embedder.dim);
    vectors.forEach((v, i) => data.set(v, i * embedder.dim));
    return { vectorSpace: vectorSpaceOf(embedder), dim: embedder.dim, ids: batch.map((r) => r.id), data };
  }

  /**
   * Supersede on add: each new memory is compared with the live (not superseded) memories and the earlier
   * items of its batch; when the best cosine (calibrated against the mean pairwise cosine of the stored and
   * new memories, unless `calibrateSimilarity: false`) is ≥ supersedeThreshold, the one created earlier (the
   * new one on a tie) gets `supersededBy` = the other. Mutates batch records; returns changed copies of
   * stored ones.
   *
   * This is a threshold question, not a top-k one: only memories at least that similar matter. So the whole
   * batch asks it at once (one pass of the int8 kernel over the stored rows for many new memories, most rows
   * ruled out by a bound: quantized-scan.ts rowsAbove), and the answers are then walked in batch order, where
   * liveness can change from one new memory to the next.
   */
  private planSupersede(batch: MemoryRecord[], vectors: Float32Array[]): MemoryRecord[] {
    const threshold = this.supersedeThreshold;
    const index = this.vectors;
    if (threshold === false || !index) return [];
    const changed = new Map<string, MemoryRecord>();
    const inBatch = new Map<string, MemoryRecord>();
    const recordOf = (id: string) => changed.get(id) ?? inBatch.get(id) ?? this.records.get(id);
    const live = (id: string) => recordOf(id)?.supersededBy === undefined;
    const liveEarlier = (id: string) => inBatch.has(id) && live(id);
    const baseline = this.calibrateSimilarity ? batchBaseline(index, vectors) : 0;
    const passes = (score: number) => calibratedCosine(score, baseline) >= threshold;
    // Every candidate for the whole batch in one call per index (liveness changes along the batch, so it is
    // checked below, in order): the stored memories, and each new memory's earlier batch items (row j = item j).
    const floor = lowestPassing(passes);
    const batchIndex = new VectorIndex(index.dim, this.makeScan(), batch.length);
    batchIndex.setMany(batch.map((r) => r.id), vectors);
    const stored = index.matchesAbove(vectors, floor, SUPERSEDE_PROBE);
    const earlier = batchIndex.matchesAbove(vectors, floor, SUPERSEDE_PROBE, (i) => i);
    batch.forEach((record, i) => {
      const vector = [vectors[i] as Float32Array];
      const best = [
        bestLiveMatch(stored[i]!, () => index.matchesAbove(vector, floor, index.size)[0]!, live, passes),
        bestLiveMatch(earlier[i]!, () => batchIndex.matchesAbove(vector, floor, i, () => i)[0]!, liveEarlier, passes),
      ]
        .filter((m) => m !== undefined)
        .sort((a, b) => b.score - a.score)[0];
      const other = best ? recordOf(best.id) : undefined;
      if (other) {
        const [older, newer] = other.createdAt <= record.createdAt ? [other, record] : [record, other];
        if (older === record) record.supersededBy = newer.id;
        else if (inBatch.has(older.id)) older.supersededBy = newer.id;
        else changed.set(older.id, { ...cloneRecord(older), supersededBy: newer.id });
      }
      inBatch.set(record.id, record);
    });
    return [...changed.values()];
  }

  /**
   * Touch after search: in memory at once, in the store through the queue (bookkeeping, best effort). Store
   * writes are coalesced: one write once searches pause for TOUCH_WRITE_DELAY_MS (at the latest
   * TOUCH_WRITE_MAX_DELAY_MS after the first unsaved touch), because a write per search (a SQLite transaction in
   * the worker) cost more than the search itself, and a write in the middle of a burst of searches delays one of
   * them. `flush` and `close` write at once.
   */
  private touch(ids: readonly string[], now: number): void {
    for (const id of ids) {
      const record = this.records.get(id);
      if (record) this.records.set({ ...record, accessCount: record.accessCount + 1, lastAccessedAt: now });
      this.pendingTouches.add(id);
    }
    const since = (this.touchPendingSince ??= performance.now());
    if (this.touchTimer !== null) clearTimeout(this.touchTimer);
    const delay = Math.max(0, Math.min(TOUCH_WRITE_DELAY_MS, since + TOUCH_WRITE_MAX_DELAY_MS - performance.now()));
    this.touchTimer = setTimeout(() => void this.writeTouches(), delay);
    // Node: a pending bookkeeping write must not keep the process alive.
    (this.touchTimer as { unref?: () => void }).unref?.();
  }

  private writeTouches(): Promise<void> {
    if (this.touchTimer !== null) clearTimeout(this.touchTimer);
    this.touchTimer = null;
    this.touchPendingSince = null;
    if (this.pendingTouches.size === 0) return Promise.resolve();
    const ids = [...this.pendingTouches];
    this.pendingTouches.clear();
    return this.exclusive(async () => {
      // Read the records when the write runs, so a change queued earlier is never overwritten with stale data.
      const put = ids.flatMap((id) => this.records.get(id) ?? []);
      if (put.length > 0 && !this.storeClosed) await this.store.write({ put });
    }).catch((error) => this.reportBackground(toEngramError(error, ErrorCode.STORE_FAILED, 'could not save access bookkeeping')));
  }

  private reportBackground(error: EngramError): void {
    if (this.options.onBackgroundError) this.options.onBackgroundError(error);
    else console.warn(error);
  }

  /**
   * Makes `embedder` current: loads its stored vectors and, when some memories have none, starts embedding
   * them in the background (batches through the queue, so adds and searches carry on meanwhile).
   */
  private async attach(embedder: Embedder | null): Promise<void> {
    if (embedder !== null) checkEmbedder(embedder);
    const generation = ++this.generation;
    this.currentEmbedder = embedder;
    this.countTokens = embedder?.countTokens ? memoizeByText(embedder.countTokens.bind(embedder)) : undefined;
    this.progress = null;
    this.readyPromise = Promise.resolve();
    if (!embedder) {
      this.vectors = null;
      return;
    }
    let packed: PackedVectors;
    try {
      packed = await this.store.loadVectors(vectorSpaceOf(embedder), embedder.dim);
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, `could not load vectors for ${embedder.id}`);
    }
    const index = new VectorIndex(embedder.dim, this.makeScan(), Math.max(64, this.records.size));
    const keep = packed.ids.flatMap((id, row) => (this.records.has(id) && packed.data.length >= (row + 1) * embedder.dim ? [row] : []));
    index.setMany(
      keep.map((row) => packed.ids[row] as string),
      keep.map((row) => packed.data.subarray(row * embedder.dim, (row + 1) * embedder.dim)),
    );
    this.vectors = index;
    const missing = [...this.records.keys()].filter((id) => !index.has(id));
    if (missing.length === 0) return;
    this.progress = { done: 0, total: missing.length };
    this.readyPromise = this.reindex(embedder, missing, generation);
    this.readyPromise.catch((error: unknown) => {
      if (error instanceof EngramError) this.reportBackground(error);
    });
  }

  private async reindex(embedder: Embedder, missing: string[], generation: number): Promise<void> {
    const current = () => generation === this.generation && !this.closed;
    for (let start = 0; start < missing.length; start += this.batchSize) {
      await nextTask(); // other calls get a turn between batches
      if (!current()) return;
      const slice = missing.slice(start, start + this.batchSize);
      await this.exclusive(async () => {
        if (!current()) return;
        // Skip memories removed, or already embedded by an add or update, since the list was made.
        const batch = slice.flatMap((id) => (this.vectors?.has(id) ? [] : (this.records.get(id) ?? [])));
        const vectors = await embedTexts(embedder, batch.map((r) => r.text));
        if (!current() || batch.length === 0) return;
        await this.commit({ vectors: this.pack(batch, vectors) }, () => this.vectors?.setMany(batch.map((r) => r.id), vectors));
      });
      if (!current()) return;
      this.progress = { done: Math.min(missing.length, start + slice.length), total: missing.length };
      this.options.onIndexProgress?.({ ...this.progress });
    }
    if (!current()) return;
    this.progress = null;
    // Vectors are complete for this embedder: other embedders' vectors are dead weight now (best effort).
    await this.exclusive(async () => {
      if (current()) await this.store.write({ keepOnlyVectorSpace: vectorSpaceOf(embedder) });
    }).catch((error) => this.reportBackground(toEngramError(error, ErrorCode.STORE_FAILED, 'could not drop old vectors')));
  }
}

/** Best matches kept per new memory; only when none of them is live are all the others looked at. */
const SUPERSEDE_PROBE = 8;

type Candidates = { matches: { id: string; score: number }[]; more: boolean };

/**
 * The most similar live memory whose score `passes`, or undefined, from `candidates`: the best few matches at
 * or above a floor that every passing score reaches, best first. Liveness is checked on these few only (a
 * per-row check over the whole index made supersede the cost of every add); when there were more than kept
 * and none kept is live, `everyCandidate` (all of them) decides.
 */
function bestLiveMatch(
  candidates: Candidates,
  everyCandidate: () => Candidates,
  live: (id: string) => boolean,
  passes: (score: number) => boolean,
): { id: string; score: number } | undefined {
  for (const match of (candidates.more && !candidates.matches.some((m) => live(m.id)) ? everyCandidate() : candidates).matches) {
    if (!passes(match.score)) return undefined;
    if (live(match.id)) return match;
  }
  return undefined;
}

/**
 * A floor under every cosine that `passes` (a non-decreasing test): the largest failing score found by bisection,
 * so a score that passes is above it. −Infinity when everything passes, +Infinity when nothing can (cosines of
 * unit vectors stay below 2 even with rounding).
 */
function lowestPassing(passes: (score: number) => boolean): number {
  if (passes(-1)) return -Infinity;
  if (!passes(2)) return Infinity;
  let fails = -1;
  let passing = 2;
  for (let i = 0; i < 64 && passing - fails > 0; i++) {
    const mid = (fails + passing) / 2;
    if (mid === fails || mid === passing) break;
    if (passes(mid)) passing = mid;
    else fails = mid;
  }
  return fails;
}

/** The key stored vectors are filed under: stable across devices of one model. */
function vectorSpaceOf(embedder: Embedder): string {
  return embedder.vectorSpace ?? embedder.id;
}

/** Mean pairwise cosine of the stored vectors together with a batch about to join them. */
function batchBaseline(index: VectorIndex, vectors: readonly Float32Array[]): number {
  const sum = index.sumOfRows();
  for (const vector of vectors) for (let i = 0; i < sum.length; i++) sum[i] = (sum[i] as number) + (vector[i] as number);
  return meanPairwiseCosine(sum, index.size + vectors.length);
}

function checkEmbedder(embedder: Embedder): void {
  if (typeof embedder !== 'object' || typeof embedder.embed !== 'function' || typeof embedder.id !== 'string' || !embedder.id) {
    throw invalidInput('embedder must have an id string and an embed(texts) function');
  }
  if (!Number.isInteger(embedder.dim) || embedder.dim <= 0) throw invalidInput(`embedder ${embedder.id} has an invalid dim: ${embedder.dim}`);
}

function positiveInt(value: number, name: string): number {
  if (!Number.isInteger(value) || value <= 0) throw invalidInput(`${name} must be a positive integer, got ${value}`);
  return value;
}
