/**
 * The vector leg's index: every vector of the current embedder in one contiguous Float32Array (row-major,
 * `dim` floats per row), with id <-> row maps. Rows are L2-normalised on entry, so cosine is a dot product.
 * Removal swaps the last row into the hole, so the matrix stays dense.
 *
 * The scan is pluggable (`VectorScan`, scan.ts): the default is the exact float32 scan (exact-scan.ts); a
 * quantised scan (quantized-scan.ts) follows row changes through `rowsChanged`. A scan reads the index only as
 * `VectorRows`.
 *
 * Compact mode (`compact` option) keeps no float32 rows: only int8 and sign codes (compact-rows.ts). Searches
 * become async (`searchAsync`, `matchesAboveAsync`): the rows worth rescoring are read from the store by id and
 * scored exactly, so the scores returned are exact cosines of the stored floats. `get` then returns the floats of
 * a recent read (a small cache) or, failing that, the row as its codes say. The index turns compact when it
 * reaches `compact.from` rows and stays compact.
 */
import { CompactRows, type CompactScanOptions } from './compact-rows.js';
import { exactRowsAbove, exactScan, RowsAboveCollector } from './exact-scan.js';
import { IvfScan, type IvfIndex, type IvfStatus } from './ivf.js';
import { SAVED_CHUNK_ROWS, type SavedChunk } from './saved-rows.js';
import type { VectorRows, VectorScan } from './scan.js';
import { dot, meanPairwiseCosine, normalize } from './similarity.js';
import { TopK } from '../util/topk.js';

/** Reads stored (normalised) vectors by id: the store's `loadVectorsByIds` for one vector space. */
type VectorFetch = (ids: readonly string[]) => Promise<{ ids: string[]; data: Float32Array }>;

export interface CompactVectorOptions extends CompactScanOptions {
  fetch: VectorFetch;
  /** The index turns compact once it holds this many rows (0: compact from the start). */
  from: number;
  /** Rows whose floats stay cached after a read (for `get`, and a search's rescoring). Default 2,048. */
  cacheRows?: number;
}

export class VectorIndex implements VectorRows {
  readonly dim: number;
  private data: Float32Array;
  private readonly rowIds: string[] = [];
  private readonly rows = new Map<string, number>();
  private scan: VectorScan;
  private compactOptions: CompactVectorOptions | null;
  /** The codes, in compact mode (null otherwise). */
  private compact: CompactRows | null = null;
  /** Compact mode with an IVF scan: its lists over the codes (ivf.ts), built once the rows are loaded (`warm`). */
  private lists: IvfIndex<VectorIndex> | null = null;
  private loaded = false;
  /** Compact mode: floats read lately, by id (oldest first), dropped when their row changes. */
  private readonly cache = new Map<string, Float32Array>();
  /** The rows the index was made for (the sign codes' centre is made for as many). */
  private readonly capacityHint: number;
  /** Bumped by every change: a read that overlapped a change does not fill the cache. */
  private version = 0;
  /** Running sum of the rows (float64): gives the corpus' mean pairwise cosine in O(dim). */
  private readonly rowSum: Float64Array;
  /** Compact mode: the saved chunks (SAVED_CHUNK_ROWS rows each) whose rows changed since `markSaved`. */
  private unsaved: Set<number> | 'all' = 'all';
  /** The IVF lists' epoch the saved form holds (−1: none saved). */
  private savedListsEpoch = -1;

  constructor(dim: number, scan: VectorScan = exactScan, initialCapacity = 64, compact?: CompactVectorOptions) {
    this.dim = dim;
    this.scan = scan;
    this.rowSum = new Float64Array(dim);
    this.compactOptions = compact ?? null;
    this.capacityHint = initialCapacity;
    const startCompact = compact !== undefined && compact.from <= 0 && this.becomeCompact(initialCapacity);
    this.data = new Float32Array(startCompact ? 0 : Math.max(1, initialCapacity) * dim);
  }

  /** True when the rows are kept as codes only (search with `searchAsync`). */
  get isCompact(): boolean {
    return this.compact !== null;
  }

  /** Bytes the rows take in memory: the float32 matrix, or the codes. (Not the scan's own copy, nor the ids.) */
  get rowBytes(): number {
    return this.compact ? this.compact.bytes : this.data.byteLength;
  }

  get size(): number {
    return this.rowIds.length;
  }

  /** The live part of the matrix (size × dim). A view: valid until the next change. Not in compact mode. */
  get matrix(): Float32Array {
    if (this.compact) throw new Error('a compact vector index keeps no float32 matrix');
    return this.data.subarray(0, this.size * this.dim);
  }

  has(id: string): boolean {
    return this.rows.has(id);
  }

  rowOf(id: string): number | undefined {
    return this.rows.get(id);
  }

  idAt(row: number): string {
    const id = this.rowIds[row];
    if (id === undefined) throw new RangeError(`row ${row} out of range`);
    return id;
  }

  ids(): string[] {
    return this.rowIds.slice();
  }

  /**
   * A view of the stored (normalised) vector, valid until the next change. Compact mode: the floats of a recent
   * read when cached (exact), else the row as its codes say (within its rounding error), normalised.
   */
  get(id: string): Float32Array | undefined {
    const row = this.rows.get(id);
    if (row === undefined) return undefined;
    if (this.compact) return this.cache.get(id) ?? normalize(this.compact.approx(row));
    return this.data.subarray(row * this.dim, (row + 1) * this.dim);
  }

  /** Upserts vectors; `vectors` must already be L2-normalised and `dim` long (the engine checks both). */
  setMany(ids: readonly string[], vectors: readonly Float32Array[] | Float32Array): void {
    const sources = ids.map((_, i) =>
      vectors instanceof Float32Array ? vectors.subarray(i * this.dim, (i + 1) * this.dim) : vectors[i],
    );
    // Check everything before touching a row, so a bad call changes nothing.
    sources.forEach((source, i) => {
      if (!source || source.length !== this.dim) throw new RangeError(`vector ${i} is not ${this.dim} long`);
    });
    const compact = this.compact;
    if (compact) {
      this.version++;
      compact.reserve(this.size + ids.length);
      const batchSum = new Float64Array(this.dim);
      for (const source of sources as Float32Array[]) for (let d = 0; d < this.dim; d++) batchSum[d] = (batchSum[d] as number) + (source[d] as number);
      compact.centreSigns(batchSum, ids.length, this.capacityHint);
      const written = ids.map((id, i) => {
        const source = sources[i] as Float32Array;
        const row = this.rowFor(id, (old) => this.subtractCompact(id, old));
        compact.write(row, source, 0);
        for (let d = 0; d < this.dim; d++) this.rowSum[d] = (this.rowSum[d] as number) + (source[d] as number);
        this.unsavedRow(row);
        return row;
      });
      this.listsChanged(written);
      return;
    }
    this.reserve(this.size + ids.length);
    const changed: number[] = [];
    ids.forEach((id, i) => {
      const row = this.rowFor(id, (old) => this.addToSum(old, -1));
      this.data.set(sources[i] as Float32Array, row * this.dim);
      this.addToSum(row, 1);
      changed.push(row);
    });
    this.scan.rowsChanged?.(this, changed);
    if (this.compactOptions && this.size >= this.compactOptions.from) this.becomeCompact(this.size);
  }

  set(id: string, vector: Float32Array): void {
    this.setMany([id], [vector]);
  }

  remove(id: string): boolean {
    const row = this.rows.get(id);
    if (row === undefined) return false;
    const last = this.rowIds.length - 1;
    const lastId = this.rowIds[last] as string;
    if (this.compact) {
      this.version++;
      this.subtractCompact(id, row);
      if (row !== last) {
        this.compact.move(last, row);
        this.rowIds[row] = lastId;
        this.rows.set(lastId, row);
      }
      this.rowIds.pop();
      this.rows.delete(id);
      this.unsavedRow(row);
      this.unsavedRow(last);
      this.listsChanged(row !== last ? [row] : []);
      return true;
    }
    this.addToSum(row, -1);
    if (row !== last) {
      this.data.copyWithin(row * this.dim, last * this.dim, (last + 1) * this.dim);
      this.rowIds[row] = lastId;
      this.rows.set(lastId, row);
    }
    this.rowIds.pop();
    this.rows.delete(id);
    this.scan.rowsChanged?.(this, row !== last ? [row] : []);
    return true;
  }

  clear(): void {
    this.rowSum.fill(0);
    this.rowIds.length = 0;
    this.rows.clear();
    this.version++;
    this.cache.clear();
    this.unsaved = 'all';
    if (!this.compact) this.scan.rowsChanged?.(this, []);
    else this.listsChanged([]);
  }

  /** Best k ids by cosine to `query` (normalised here), best first. Not in compact mode: see `searchAsync`. */
  search(query: Float32Array, k: number, eligible?: (id: string) => boolean): { id: string; score: number }[] {
    if (this.compact) throw new Error('a compact vector index searches with searchAsync');
    const unit = normalize(query);
    const rowFilter = eligible && ((row: number) => eligible(this.rowIds[row] as string));
    return this.scan.topK(this, unit, k, rowFilter).map(({ row, score }) => ({ id: this.rowIds[row] as string, score }));
  }

  /**
   * For each query (normalised here), the stored vectors with cosine ≥ `floor`: the best `cap` of them, best first
   * (as `search` orders), and whether there were more. `limit(q)` restricts query q to the first rows.
   */
  matchesAbove(
    queries: readonly Float32Array[],
    floor: number,
    cap: number,
    limit?: (query: number) => number,
  ): { matches: { id: string; score: number }[]; more: boolean }[] {
    if (this.compact) throw new Error('a compact vector index answers matchesAboveAsync');
    const units = queries.map(normalize);
    const found = this.scan.rowsAbove ? this.scan.rowsAbove(this, units, floor, cap, limit) : exactRowsAbove(this, units, floor, cap, limit);
    return found.map(({ rows, more }) => ({ matches: rows.map(({ row, score }) => ({ id: this.rowIds[row] as string, score })), more }));
  }

  /**
   * `search`, in either mode. Compact: the planned rows' floats are read in one batch (with `alsoRead`'s, which
   * then stay cached for `get`), scored exactly, and a second read follows only when the int8 bound leaves rows
   * that may still enter the top k (exact plans only: see compact-rows.ts).
   */
  async searchAsync(query: Float32Array, k: number, eligible?: (id: string) => boolean, alsoRead: readonly string[] = []): Promise<{ id: string; score: number }[]> {
    const compact = this.compact;
    if (!compact) return this.search(query, k, eligible);
    const unit = normalize(query);
    const rowFilter = eligible && ((row: number) => eligible(this.rowIds[row] as string));
    // With lists, the 1-bit prefilter never answers (on uniform vectors its recall@10 is 0.85): until the lists
    // answer, and wherever they refuse, the plan is exact over every row, as IvfScan's int8 scan is.
    const plan = compact.plan(unit, k, this.size, rowFilter, this.lists ? (this.lists.probe(this, unit, k) ?? 'all') : undefined);
    // Rows can move while the floats are read: ids are taken now.
    const idOf = new Map<number, string>();
    for (const row of plan.first) idOf.set(row, this.rowIds[row] as string);
    const result = new TopK(k);
    const score = (rows: readonly number[], floats: Map<string, Float32Array>) => {
      for (const row of rows) {
        const vector = floats.get(idOf.get(row) as string);
        if (vector) result.push(row, dot(unit, vector));
      }
    };
    score(plan.first, await this.read([...idOf.values(), ...alsoRead]));
    if (plan.more.length > 0) {
      const floor = result.threshold;
      const rows = plan.more.flatMap(({ row, bound }) => (bound >= floor ? [row] : [])).slice(0, plan.moreLimit);
      for (const row of rows) idOf.set(row, this.rowIds[row] as string);
      if (rows.length > 0) score(rows, await this.read(rows.map((row) => idOf.get(row) as string)));
    }
    return result.drain().map(({ index: row, score }) => ({ id: idOf.get(row) as string, score }));
  }

  /** `matchesAbove`, in either mode (compact: the rows the int8 bound cannot rule out are read and scored exactly). */
  async matchesAboveAsync(
    queries: readonly Float32Array[],
    floor: number,
    cap: number,
    limit?: (query: number) => number,
  ): Promise<{ matches: { id: string; score: number }[]; more: boolean }[]> {
    const compact = this.compact;
    if (!compact) return this.matchesAbove(queries, floor, cap, limit);
    const units = queries.map(normalize);
    const candidates = compact.aboveCandidates(units, floor, this.size, limit);
    const ids = candidates.map((rows) => rows.map((row) => this.rowIds[row] as string));
    const floats = await this.read([...new Set(ids.flat())]);
    return units.map((unit, q) => {
      const found = new RowsAboveCollector(cap);
      const idOf = new Map<number, string>();
      (candidates[q] as number[]).forEach((row, i) => {
        const id = (ids[q] as string[])[i] as string;
        idOf.set(row, id);
        const vector = floats.get(id);
        if (vector) found.offer(row, dot(unit, vector), floor);
      });
      const { rows, more } = found.result();
      return { matches: rows.map(({ row, score }) => ({ id: idOf.get(row) as string, score })), more };
    });
  }

  /** Compact mode: reads the floats of `ids` into the cache, so `get` returns them exactly. Nothing otherwise. */
  async preload(ids: readonly string[]): Promise<void> {
    if (this.compact) await this.read(ids);
  }

  /** Exact copies of the stored vectors of `ids` that the index holds (compact mode: read from the store). */
  async exactVectors(ids: readonly string[]): Promise<Map<string, Float32Array>> {
    if (!this.compact) return new Map(ids.flatMap((id) => (this.rows.has(id) ? [[id, this.get(id)!.slice()] as const] : [])));
    const floats = await this.read(ids);
    return new Map([...floats].map(([id, vector]) => [id, vector.slice()]));
  }

  /** Hands the scan a saved form of what it builds (VectorScan.restore); false when it has none or refuses it. */
  restoreScan(saved: Uint8Array): boolean {
    return this.lists ? this.lists.restore(saved) : (this.scan.restore?.(saved) ?? false);
  }

  /** Where the scan hands the saved form of each build (VectorScan.onBuilt); nothing for scans that build nothing. */
  onScanBuilt(save: (saved: Uint8Array) => void): void {
    if (this.lists) this.lists.onBuilt(save);
    else this.scan.onBuilt?.(save);
  }

  /** `installed` runs whenever other compact IVF lists start answering (a build done): their saved form is stale. */
  onListsInstalled(installed: () => void): void {
    this.lists?.onInstalled(installed);
  }

  /** The IVF lists over the codes in compact mode (null: none, or not compact; a float32 index's are its scan's). */
  listStatus(): IvfStatus | null {
    return this.lists?.status() ?? null;
  }

  /** Settles when the compact lists have no build running. */
  async listsIdle(): Promise<void> {
    await this.lists?.idle();
  }

  /** Stops the scan's background work (an engine closing, or an embedder replaced). */
  dispose(): void {
    this.scan.dispose?.();
    this.lists?.dispose();
  }

  /**
   * The rows are loaded. Compact mode: builds what the first prefiltered search would otherwise build (the sign
   * codes), and starts the lists' background build (not before: a build begun at the first chunk would be redone).
   */
  warm(): void {
    this.compact?.warm(this.size);
    this.loaded = true;
    this.listsChanged([]);
  }

  /**
   * Compact mode: what a save of the rows (saved-rows.ts) must write now: the chunks changed since `markSaved`,
   * the answering lists (all their list chunks when they are not the lists saved), and `version` for `markSaved`.
   * Null when not compact.
   */
  savedForm(): {
    size: number;
    stride: number;
    rowSum: Float64Array;
    chunks: number;
    changed: number[];
    lists: { form: () => Uint8Array; share: number; floor: number } | null;
    /** The answering lists are not the ones saved last (their centroids must be written). */
    listsChanged: boolean;
    version: number;
  } | null {
    const compact = this.compact;
    if (!compact) return null;
    const answering = this.lists?.answering() ?? null;
    const epoch = this.lists?.epoch ?? -1;
    const chunks = Math.ceil(this.size / SAVED_CHUNK_ROWS);
    const changed = this.unsaved === 'all' ? Array.from({ length: chunks }, (_, c) => c) : [...(this.unsaved as Set<number>)].filter((c) => c < chunks).sort((a, b) => a - b);
    const lists = answering && { form: answering.form, share: answering.share, floor: answering.floor };
    return { size: this.size, stride: compact.stride, rowSum: this.rowSum.slice(), chunks, changed, lists, listsChanged: epoch !== this.savedListsEpoch, version: this.version };
  }

  /** Chunk `chunk`'s rows as saved (compact mode; call in the same task as `savedForm`, before rows change). */
  savedChunk(chunk: number): SavedChunk {
    const compact = this.compact as CompactRows;
    const start = chunk * SAVED_CHUNK_ROWS;
    const end = Math.min(this.size, start + SAVED_CHUNK_ROWS);
    return { ids: this.rowIds.slice(start, end), ...compact.exportRows(start, end) };
  }

  /** Chunk `chunk`'s rows' IVF lists (−1: none) as saved, by the answering lists (as `savedChunk`). */
  savedListChunk(chunk: number): Int32Array {
    const start = chunk * SAVED_CHUNK_ROWS;
    const end = Math.min(this.size, start + SAVED_CHUNK_ROWS);
    const answering = this.lists?.answering();
    const lists = new Int32Array(end - start).fill(-1);
    if (answering) for (let row = start; row < end; row++) lists[row - start] = answering.listOf(row);
    return lists;
  }

  /** The save of `form` (savedForm's) is stored: its chunks are no longer unsaved, unless rows changed since. */
  markSaved(form: { version: number }): void {
    if (form.version !== this.version) return;
    this.unsaved = new Set();
    this.savedListsEpoch = this.lists?.epoch ?? -1;
  }

  /**
   * Compact mode, while empty: the rows of a saved form. `chunk(c)` reads chunk c (null: missing or refused);
   * every id must be held by `has` and appear once. The IVF lists answer at once from `lists` and each row's
   * saved list. False, and the index empty again, when anything does not fit: the caller loads the vectors.
   */
  async restoreSaved(
    saved: { size: number; rowSum: ArrayLike<number>; lists: { form: Uint8Array; share: number; floor: number } | null },
    chunk: (c: number) => Promise<SavedChunk | null>,
    listChunk: (c: number) => Promise<Int32Array | null>,
    has: (id: string) => boolean,
  ): Promise<boolean> {
    const compact = this.compact;
    if (!compact || this.size !== 0 || saved.rowSum.length !== this.dim) return false;
    const listOf = saved.lists && this.lists ? new Int32Array(saved.size) : null;
    const fits = async () => {
      compact.reserve(Math.max(1, saved.size));
      for (let c = 0, start = 0; start < saved.size; c++, start += SAVED_CHUNK_ROWS) {
        const rows = await chunk(c);
        if (!rows || rows.ids.length !== Math.min(SAVED_CHUNK_ROWS, saved.size - start)) return false;
        for (const id of rows.ids) {
          if (this.rows.has(id) || !has(id)) return false;
          this.rows.set(id, this.rowIds.length);
          this.rowIds.push(id);
        }
        compact.importRows(start, rows);
        if (listOf) {
          const lists = await listChunk(c);
          if (!lists || lists.length !== rows.ids.length) return false;
          listOf.set(lists, start);
        }
      }
      this.rowSum.set(saved.rowSum);
      return !listOf || (await this.lists!.restoreAnswering(this, saved.lists!.form, saved.lists!.share, saved.lists!.floor, listOf));
    };
    this.version++;
    if (await fits()) {
      this.unsaved = new Set();
      this.savedListsEpoch = this.lists?.epoch ?? -1;
      return true;
    }
    this.clear();
    return false;
  }

  /** Mean cosine between two different stored vectors (0 with fewer than two): see similarity.ts. */
  meanPairwiseCosine(): number {
    return meanPairwiseCosine(this.rowSum, this.size);
  }

  /** Mean cosine between `query` (normalised here) and the stored vectors, in O(dim) from the running sum: 0 when empty. */
  meanCosineTo(query: Float32Array): number {
    if (this.size === 0) return 0;
    const unit = normalize(query);
    let sum = 0;
    for (let i = 0; i < this.dim; i++) sum += (unit[i] as number) * (this.rowSum[i] as number);
    return sum / this.size;
  }

  /** The running sum of the rows (a copy). */
  sumOfRows(): Float64Array {
    return this.rowSum.slice();
  }

  /**
   * Floats of the held ids among `ids`, from the cache or one read of the store. A read that overlapped a change
   * answers this call but fills no cache: its rows may be older than the index.
   */
  private async read(ids: readonly string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    const missing = new Set<string>();
    for (const id of ids) {
      if (out.has(id) || !this.rows.has(id)) continue;
      const cached = this.cache.get(id);
      if (cached) {
        out.set(id, cached);
        this.cache.delete(id); // most recent last
        this.cache.set(id, cached);
      } else missing.add(id);
    }
    if (missing.size === 0) return out;
    const version = this.version;
    const fetched = await this.compactOptions!.fetch([...missing]);
    const keep = version === this.version;
    const limit = this.compactOptions!.cacheRows ?? 2048;
    fetched.ids.forEach((id, i) => {
      if (fetched.data.length < (i + 1) * this.dim) return;
      const vector = fetched.data.slice(i * this.dim, (i + 1) * this.dim);
      out.set(id, vector);
      if (keep && this.rows.has(id)) this.cache.set(id, vector);
    });
    for (const id of this.cache.keys()) {
      if (this.cache.size <= limit) break;
      this.cache.delete(id);
    }
    return out;
  }

  /** The row of `id`: a new one at the end, or its own after `release(row)` takes its old vector out. */
  private rowFor(id: string, release: (row: number) => void): number {
    const row = this.rows.get(id);
    if (row !== undefined) {
      release(row);
      return row;
    }
    this.rowIds.push(id);
    this.rows.set(id, this.rowIds.length - 1);
    return this.rowIds.length - 1;
  }

  /** Compact mode: takes row `row` (id `id`) out of the running sum (its cached floats, else its codes) and the cache. */
  private subtractCompact(id: string, row: number): void {
    // The floats of a row are not in memory: without a cached copy the sum loses the row's rounding error.
    const vector = this.cache.get(id) ?? this.compact!.approx(row);
    for (let d = 0; d < this.dim; d++) this.rowSum[d] = (this.rowSum[d] as number) - (vector[d] as number);
    this.cache.delete(id);
  }

  /** Moves the rows into codes and drops the float32 matrix (and the scan's copy). False where compact is unavailable. */
  private becomeCompact(capacity: number): boolean {
    const options = this.compactOptions;
    if (!options || this.compact) return this.compact !== null;
    // IVF lists choose the rows a search scores: the sign codes' prefilter would never run.
    const compact = CompactRows.create(this.dim, () => this.sumOfRows(), options, !(this.scan instanceof IvfScan));
    if (!compact) {
      this.compactOptions = null;
      return false;
    }
    compact.reserve(Math.max(capacity, this.size, 1));
    compact.centreSigns(this.rowSum, this.size, capacity);
    for (let row = 0; row < this.size; row++) compact.write(row, this.data, row * this.dim);
    this.compact = compact;
    this.data = new Float32Array(0);
    // The IVF scan's settings, centroids and saver pass to lists over the codes; its lists, over the floats, go.
    if (this.scan instanceof IvfScan) {
      this.lists = this.scan.compactLists<VectorIndex>({
        floats: (index, row, out) => (index.compact as CompactRows).approx(row, out),
        neighbours: (index, query, k) => (index.compact as CompactRows).int8TopK(query, k, index.size),
      });
    }
    this.scan.dispose?.();
    this.scan = exactScan;
    this.version++;
    this.listsChanged([]);
    return true;
  }

  private unsavedRow(row: number): void {
    if (this.unsaved !== 'all') this.unsaved.add(Math.floor(row / SAVED_CHUNK_ROWS));
  }

  /** Compact mode: the lists follow rows written or moved (rows ≥ size are gone), once the rows are loaded. */
  private listsChanged(rows: readonly number[]): void {
    if (this.loaded) this.lists?.rowsChanged(this, rows);
  }

  private addToSum(row: number, sign: 1 | -1): void {
    const offset = row * this.dim;
    for (let i = 0; i < this.dim; i++) this.rowSum[i] = (this.rowSum[i] as number) + sign * (this.data[offset + i] as number);
  }

  private reserve(rows: number): void {
    if (this.compact) return;
    const needed = rows * this.dim;
    if (needed <= this.data.length) return;
    // Doubling keeps appends amortised O(1) while the matrix stays one contiguous block.
    const grown = new Float32Array(Math.max(needed, this.data.length * 2));
    grown.set(this.data.subarray(0, this.size * this.dim));
    this.data = grown;
  }
}
