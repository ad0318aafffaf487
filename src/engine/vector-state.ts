/**
 * The vector side of the engine: the current embedder, the index of its stored vectors, and the background
 * re-indexing of memories that have no vector for it yet (its progress and `ready`). Each embedder change bumps
 * a generation counter, so a re-indexing loop started for an earlier embedder sees it and stops.
 */
import { EngramError, ErrorCode, toEngramError } from '../errors.js';
import type { PackedVectors } from '../store/store.js';
import type { Embedder, MemoryRecord, Progress } from '../types.js';
import { memoizeByText } from '../util/memo.js';
import { nextTask } from '../util/schedule.js';
import { VectorIndex } from '../vector/vector-index.js';
import type { CallAbort } from '../util/abort.js';
import { BatchSizer, embedInBatches, embedTexts } from './embed.js';
import type { ResolvedEngineOptions } from './options.js';
import type { RecordTable } from './record-table.js';
import type { WriteQueue } from './write-queue.js';
import { cloneRecord } from './copy.js';
import { sameDetails } from '../lexical/statement.js';
import type { LexicalIndex } from '../lexical/lexical-index.js';
import { planSameStatement, planSupersedeAsync, SAME_STATEMENT_CANDIDATES } from './supersede.js';
import { blockTokenCounter, type BlockTokens } from '../search/assemble.js';
import type { PipelineState } from '../search/state.js';
import { dropOtherVectorRows, restoreVectorRows, saveVectorRows } from './vector-persistence.js';

type VectorOptions = Pick<
  ResolvedEngineOptions,
  'store' | 'embedBatchSize' | 'supersede' | 'supersedeThreshold' | 'calibrateSimilarity' | 'vectorScan' | 'vectorMemory' | 'compactVectorsFrom' | 'onIndexProgress' | 'onBackgroundError'
>;

export class VectorState {
  private current: Embedder | null = null;
  private vectors: VectorIndex | null = null;
  /** The current embedder's token counter, memoised (assembly counts every hit, every search). */
  private tokenCounter: ((text: string) => number) | undefined;
  private blockTokens: BlockTokens | undefined;
  private progress: Progress | null = null;
  private readyPromise: Promise<void> = Promise.resolve();
  private generation = 0;
  private stopped = false;
  /** How the current index was made: restored from its saved form, or from the stored vectors. */
  source: 'saved' | 'loaded' = 'loaded';
  /** The current index's saved form is in the store (restored or saved): new IVF lists are saved at once. */
  private formSaved = false;
  /** Exact stored vectors read for one `embedAll` call's reuse (compact mode keeps no floats to copy from). */
  private reusable: Map<string, Float32Array> | null = null;

  constructor(
    private readonly options: VectorOptions,
    private readonly records: Pick<RecordTable, 'get' | 'getMany' | 'has' | 'keys' | 'size' | 'summary'>,
    private readonly queue: WriteQueue,
    private readonly lexical: Pick<LexicalIndex, 'holdersOfRarestTerm' | 'learnStatement'>,
  ) {}

  get embedder(): Embedder | null {
    return this.current;
  }

  /** The current embedder's vectors; null without an embedder. */
  get index(): VectorIndex | null {
    return this.vectors;
  }

  get countTokens(): ((text: string) => number) | undefined {
    return this.tokenCounter;
  }

  /** Settles when the current re-indexing ends: resolves when vectors are complete, rejects with its error. */
  get ready(): Promise<void> {
    return this.readyPromise;
  }

  /** Re-indexing progress (a copy), or null when every memory has a vector (or there is no embedder). */
  indexing(): Progress | null {
    return this.progress && { ...this.progress };
  }

  /** Stops re-indexing for good (between batches). */
  stop(): void {
    this.stopped = true;
    this.generation++;
    this.vectors?.dispose();
  }

  /**
   * Makes `embedder` (already checked: checkEmbedder) current: loads its stored vectors and, when some memories
   * have none, starts embedding them in the background (batches through the queue, so adds and searches carry on
   * meanwhile). Run it in the write queue, except on open.
   */
  async attach(embedder: Embedder | null): Promise<void> {
    const generation = ++this.generation;
    this.progress = null;
    this.readyPromise = Promise.resolve();
    if (!embedder) {
      this.use(null);
      this.vectors?.dispose();
      this.vectors = null;
      return;
    }
    const index = await this.load(embedder);
    // `load` keeps only stored memories' vectors, one row an id: as many rows as memories means none is missing.
    const missing = index.size === this.records.size ? [] : [...this.records.keys()].filter((id) => !index.has(id));
    // The embedder, its index and its progress change together: while its vectors load, the previous ones still
    // answer, and nobody sees the new embedder with nothing to index yet (status().indexing null too early).
    this.use(embedder);
    if (this.vectors !== index) this.vectors?.dispose();
    this.vectors = index;
    if (missing.length === 0) return;
    this.progress = { done: 0, total: missing.length };
    this.readyPromise = this.reindex(embedder, missing, generation);
    this.readyPromise.catch((error: unknown) => {
      if (error instanceof EngramError) this.options.onBackgroundError(error);
    });
  }

  private use(embedder: Embedder | null): void {
    this.current = embedder;
    this.tokenCounter = embedder?.countTokens ? memoizeByText(embedder.countTokens.bind(embedder)) : undefined;
    this.blockTokens = this.tokenCounter && blockTokenCounter(this.tokenCounter);
  }

  /**
   * The index of `embedder`'s stored vectors. Compact (EngineOptions.vectorMemory) when the store can read vectors
   * by id and 'compact' is asked, or 'auto' with at least `compactVectorsFrom` memories: then the rows stream in a
   * chunk at a time straight into codes; an 'auto' index that starts float32 turns compact when it grows to that.
   */
  private async load(embedder: Embedder): Promise<VectorIndex> {
    const { store, vectorMemory, compactVectorsFrom } = this.options;
    const vectorSpace = vectorSpaceOf(embedder);
    const { dim } = embedder;
    const fetchByIds = store.loadVectorsByIds?.bind(store);
    const from = !fetchByIds || vectorMemory === 'float32' ? null : vectorMemory === 'compact' ? 0 : compactVectorsFrom;
    const startCompact = from !== null && this.records.size >= from;
    const compact = fetchByIds && from !== null ? { fetch: (ids: readonly string[]) => fetchByIds(vectorSpace, dim, ids), from: startCompact ? 0 : from } : undefined;
    const index = new VectorIndex(dim, this.options.vectorScan(), Math.max(64, this.records.size), compact);
    await this.keepScanSaved(index, vectorSpace);
    this.source = 'loaded';
    this.formSaved = false;
    // New lists (a build done) are saved at once when the rows' form is in the store: 4 bytes a row and the centroids.
    index.onListsInstalled(() => {
      if (this.vectors === index && this.formSaved) this.saveIndex().catch((error: unknown) => this.options.onBackgroundError(toEngramError(error, ErrorCode.STORE_FAILED, 'could not save the vector index')));
    });
    // A saved form made at the store's vector counter: its codes and lists, without reading a float.
    if (index.isCompact && (await restoreVectorRows(index, store, vectorSpace, (id) => this.records.has(id)).catch(() => false))) {
      this.source = 'saved';
      this.formSaved = true;
      index.warm();
      return index;
    }
    const add = (packed: PackedVectors) => {
      const keep = packed.ids.flatMap((id, row) => (this.records.has(id) && packed.data.length >= (row + 1) * dim ? [row] : []));
      index.setMany(
        keep.map((row) => packed.ids[row] as string),
        keep.map((row) => packed.data.subarray(row * dim, (row + 1) * dim)),
      );
    };
    try {
      if (index.isCompact && store.loadVectorChunks) await store.loadVectorChunks(vectorSpace, dim, add);
      else add(await store.loadVectors(vectorSpace, dim));
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, `could not load vectors for ${embedder.id}`);
    }
    index.warm();
    return index;
  }

  /**
   * The scan's saved form (the IVF centroids, ivf.ts: the float32 scan's, or a compact index's lists') in the
   * store's meta, one key per vector space: handed to the new index before its rows arrive (a form it refuses, of
   * another version, is rebuilt in the background while searches answer), and written again after each build,
   * in the write queue.
   */
  private async keepScanSaved(index: VectorIndex, vectorSpace: string): Promise<void> {
    const { store, onBackgroundError } = this.options;
    const key = `${SCAN_KEY_PREFIX}${vectorSpace}`;
    const saved = await store.readMeta(key).catch(() => null);
    if (saved instanceof Uint8Array) index.restoreScan(saved);
    index.onScanBuilt((form) => {
      this.queue
        .run(async () => {
          if (!this.stopped && this.vectors === index) await store.write({ meta: { [key]: form } });
        })
        .catch((error) => onBackgroundError(toEngramError(error, ErrorCode.STORE_FAILED, 'could not save the vector index')));
    });
  }

  /**
   * Saves what changed of the compact index (vector-persistence.ts) since its last save, in the write queue;
   * returns the bytes written (0 when nothing changed, or the index is not compact).
   */
  saveIndex(): Promise<number> {
    return this.queue.run(async () => {
      const index = this.vectors;
      const embedder = this.current;
      if (!index || !embedder || this.stopped || this.progress !== null) return 0;
      try {
        const bytes = await saveVectorRows(index, this.options.store, vectorSpaceOf(embedder));
        this.formSaved = index.isCompact;
        return bytes;
      } catch (error) {
        throw toEngramError(error, ErrorCode.STORE_FAILED, 'could not save the vector index');
      }
    });
  }

  /** Normalised vectors for `batch` (null without an embedder); `reuse` may supply some without embedding. */
  async embedAll(
    batch: readonly MemoryRecord[],
    onProgress?: (p: Progress) => void,
    reuse?: (record: MemoryRecord) => Float32Array | undefined,
    abort?: CallAbort,
  ): Promise<Float32Array[] | null> {
    const embedder = this.current;
    if (!embedder || !this.vectors) {
      onProgress?.({ done: batch.length, total: batch.length });
      return null;
    }
    if (reuse && this.vectors.isCompact) {
      const same = batch.flatMap((r) => (this.records.get(r.id)?.text === r.text ? [r.id] : []));
      this.reusable = same.length > 0 ? await this.vectors.exactVectors(same) : null;
    }
    let out: (Float32Array | undefined)[];
    try {
      out = batch.map((r) => reuse?.(r));
    } finally {
      this.reusable = null;
    }
    const todo = batch.flatMap((r, i) => (out[i] ? [] : [i]));
    const reused = batch.length - todo.length;
    const embedded = await embedInBatches(
      embedder,
      todo.map((i) => (batch[i] as MemoryRecord).text),
      this.options.embedBatchSize,
      onProgress && ((p) => onProgress({ done: reused + p.done, total: batch.length })),
      abort,
    );
    todo.forEach((i, j) => (out[i] = embedded[j]));
    if (todo.length === 0) onProgress?.({ done: batch.length, total: batch.length });
    return out as Float32Array[];
  }

  /** What a search reads of the vector side, as it is now (search/state.ts). */
  searchSide(): Pick<PipelineState, 'vectors' | 'embedderId' | 'vectorsReady' | 'embedQuery' | 'countTokens' | 'blockTokens'> {
    const embedder = this.current;
    return {
      vectors: this.vectors,
      embedderId: embedder?.id ?? null,
      vectorsReady: this.progress === null,
      embedQuery: async (text, role = 'query') => (await embedTexts(embedder as Embedder, [text], role))[0] as Float32Array,
      countTokens: this.tokenCounter,
      blockTokens: this.blockTokens,
    };
  }

  /**
   * What supersede does to a new batch (supersede.ts, by `EngineOptions.supersede`): the batch as it is to be
   * stored, and the superseded stored memories whole, with their mark.
   */
  async supersede(created: MemoryRecord[], vectors: Float32Array[] | null): Promise<{ batch: MemoryRecord[]; stored: MemoryRecord[] }> {
    const mode = this.options.supersede;
    if (mode === false) return { batch: created, stored: [] };
    if (mode === 'same') {
      const lexical = this.lexical;
      return planSameStatement(
        {
          candidates: (text, statements) => lexical.holdersOfRarestTerm(text, SAME_STATEMENT_CANDIDATES, statements),
          records: (ids) => this.records.getMany(ids),
          learn: (id, key) => lexical.learnStatement(id, key),
        },
        created,
      );
    }
    const index = this.vectors;
    if (!vectors || !index) return { batch: created, stored: [] };
    const { supersedeThreshold: threshold, calibrateSimilarity: calibrate, vectorScan: makeScan } = this.options;
    // A stored memory not in memory right now counts as distinct: missing a fold is the safe way to be wrong.
    const batch = new Map(created.map((r) => [r.id, r]));
    const full = (facts: { id: string }) => batch.get(facts.id) ?? this.records.get(facts.id);
    const distinct = (olderFacts: { id: string }, newerFacts: { id: string }) => {
      const older = full(olderFacts);
      const newer = full(newerFacts);
      if (!older || !newer) return true;
      return older.pinned || older.project !== newer.project || older.scope !== newer.scope || !sameDetails(older.text, newer.text);
    };
    const storedRecord = (id: string) => this.records.summary(id);
    const plan = await planSupersedeAsync({ index, storedRecord, threshold, calibrate, makeScan, distinct }, created, vectors);
    const marks = new Map(plan.stored.map((r) => [r.id, r.supersededBy as string]));
    const stored = (await this.records.getMany([...marks.keys()])).map((r) => ({ ...cloneRecord(r), supersededBy: marks.get(r.id) as string }));
    return { batch: plan.batch, stored };
  }

  /** A copy of the stored vector of `record`, when a memory with its id is stored with the same text. */
  reusableVector(record: MemoryRecord): Float32Array | undefined {
    const stored = this.records.get(record.id);
    if (!stored || stored.text !== record.text) return undefined;
    // A compact index holds codes: the exact floats come from the read embedAll made for this call.
    return this.vectors?.isCompact ? this.reusable?.get(record.id) : this.vectors?.get(record.id)?.slice();
  }

  /** The store's packed form of `vectors` (undefined when there are none to write). */
  pack(batch: readonly MemoryRecord[], vectors: Float32Array[] | null): PackedVectors | undefined {
    const embedder = this.current;
    if (!vectors || !embedder) return undefined;
    const data = new Float32Array(batch.length * embedder.dim);
    vectors.forEach((v, i) => data.set(v, i * embedder.dim));
    return { vectorSpace: vectorSpaceOf(embedder), dim: embedder.dim, ids: batch.map((r) => r.id), data };
  }

  private async reindex(embedder: Embedder, missing: string[], generation: number): Promise<void> {
    const current = () => generation === this.generation && !this.stopped;
    const sizer = new BatchSizer(this.options.embedBatchSize);
    for (let start = 0; start < missing.length; ) {
      await nextTask(); // other calls get a turn between batches
      if (!current()) return;
      const slice = missing.slice(start, start + sizer.size);
      await this.queue.run(async () => {
        if (!current()) return;
        // Skip memories removed, or already embedded by an add or update, since the list was made.
        const batch = await this.records.getMany(slice.filter((id) => !this.vectors?.has(id)));
        const vectors = await sizer.time(batch.length, () => embedTexts(embedder, batch.map((r) => r.text)));
        if (!current() || batch.length === 0) return;
        await this.queue.commit({ vectors: this.pack(batch, vectors) }, () => this.vectors?.setMany(batch.map((r) => r.id), vectors));
      });
      if (!current()) return;
      start += slice.length;
      this.progress = { done: start, total: missing.length };
      this.options.onIndexProgress({ ...this.progress });
    }
    if (!current()) return;
    this.progress = null;
    // Vectors are complete for this embedder: other embedders' vectors are dead weight now (best effort).
    await this.queue
      .run(async () => {
        if (!current()) return;
        await this.options.store.write({ keepOnlyVectorSpace: vectorSpaceOf(embedder) });
        await dropOtherVectorRows(this.options.store, vectorSpaceOf(embedder));
      })
      .catch((error) => {
        this.options.onBackgroundError(toEngramError(error, ErrorCode.STORE_FAILED, 'could not drop old vectors'));
      });
  }
}

/** Meta key prefix of the vector scan's saved form (followed by the vector space). */
const SCAN_KEY_PREFIX = 'engram.vector-index.';

/** The key stored vectors are filed under: stable across devices of one model. */
function vectorSpaceOf(embedder: Embedder): string {
  return embedder.vectorSpace ?? embedder.id;
}
