/**
 * IVF: a sublinear top k for large indexes. A spherical k-means coarse quantiser splits the rows into lists (each
 * row in the list of its nearest centroid). A search scores the centroids (int8, in the SIMD kernel), gathers the
 * rows of the best lists until it holds a measured share of the index, and hands them to the int8 scan
 * (QuantizedScan.topKAmong), which returns the exact top k among them, rescored in float32. Only the choice of
 * lists is approximate.
 *
 * The share is measured, not guessed: once the lists are built, sample rows serve as queries, their exact top k
 * comes from the full int8 scan, and the share is the least that would have probed the lists of `targetRecall` of
 * those neighbours. Where that share exceeds `maxShare` (uniform vectors in high dimension cluster badly, and the
 * lists then save little), the wrapped scan answers alone. rowsAbove (supersede's threshold search) always goes
 * to the wrapped scan, which answers it exactly.
 *
 * Lists follow the rows as they change: a new or moved row joins the list of its nearest centroid. Training runs
 * in the background, in slices of a few milliseconds, while the wrapped scan (or the previous lists) answers; it
 * runs again once as many rows have changed as it was trained on, or the index has halved.
 */
import { exactScan } from './exact-scan.js';
import { createInt8KernelSoon, type Int8Kernel } from './int8-kernel.js';
import { QuantizedScan, quantize, type QuantizedScanOptions } from './quantized-scan.js';
import type { RowsAbove, ScoredRow, VectorRows, VectorScan } from './scan.js';
import { normalize } from './similarity.js';
import { grown } from '../util/grow.js';
import { prng } from '../util/prng.js';
import { nextTask } from '../util/schedule.js';

export interface IvfScanOptions extends QuantizedScanOptions {
  /** Rows from which the lists are built and answer topK; below it the wrapped int8 scan answers. Default 50,000 (docs/bench.md). */
  ivfMinRows?: number;
  /**
   * Lists per √rows: √rows × this lists of √rows / this rows each. Default 4: lists must outnumber the clusters
   * of the data, or a cluster's rows scatter (1,000 clusters in 384-d: 224 lists at 50k rows probed 48%).
   */
  listsPerRoot?: number;
  /** The share of neighbours (recall@`calibrationK` on sample rows) the probed lists must hold. Default 0.995. */
  targetRecall?: number;
  /** The largest share of the rows worth probing: above it the wrapped scan answers. Default 0.35. */
  maxShare?: number;
  /** Fewest rows a search probes. Default 1,000. */
  minCandidates?: number;
  /** Sample rows used as queries to measure the share. Default 64. */
  calibrationQueries?: number;
  /** k of that measurement. Default 10. */
  calibrationK?: number;
  /** Training rows per list (the k-means sample, at most 65,536 rows). Default 16. */
  samplePerList?: number;
  /** k-means passes over the training sample. Default 6. */
  iterations?: number;
  /** Seed of the training sample and the calibration queries. Default 1. */
  seed?: number;
}

export const defaultIvfScanOptions = {
  ivfMinRows: 50_000,
  listsPerRoot: 4,
  targetRecall: 0.995,
  maxShare: 0.35,
  minCandidates: 1_000,
  calibrationQueries: 64,
  calibrationK: 10,
  samplePerList: 16,
  iterations: 6,
  seed: 1,
};

type IvfSettings = typeof defaultIvfScanOptions;

/** Sample points per centroid that k-means++ seeding draws from. */
const SEED_PER_LIST = 4;
/** The k-means sample's cap. */
const MAX_SAMPLE = 65_536;
/**
 * Centroids from which assignment goes through groups, and how many groups it tries: at least 8, a quarter of
 * them. (With 3 of 36 groups, a row's group was often missed on clustered 384-d data, its row put in a list far
 * from its neighbours: at 100k rows a search had to probe 17% of the rows, with 8 of 36 5%.)
 */
const GROUPED_FROM = 256;
const groupProbe = (groups: number) => Math.min(groups, Math.max(8, Math.ceil(groups / 4)));
/** Milliseconds of background work between yields. */
const SLICE_MS = 8;
/** A search probes this many times the measured share (see probe). */
const SHARE_MARGIN = 2;
/** A build starts once rows have not changed for this long. */
const QUIET_MS = 500;

/** What the index's IVF is doing (for tests, benches and status). */
export interface IvfStatus {
  /** 'scan': the wrapped scan answers (too few rows, not built yet, or lists not worth it); 'lists': IVF answers. */
  answering: 'scan' | 'lists';
  building: boolean;
  lists: number;
  /** The share of rows a search probes (null before calibration). */
  share: number | null;
  /** Rows the lists were trained on. */
  trainedRows: number;
  /** Why the last background build failed (null when none did). */
  failure: string | null;
}

/**
 * Where an IVF index reads its rows: `floats` gives row `row` of `rows` as floats (a view of the stored row, or
 * `out` filled from its codes: assignment and training are scale-free, so codes serve), and `neighbours` the best k
 * rows for a unit query by the full int8 scan (what calibration measures the lists against).
 */
export interface IvfSource<R extends ListedRows> {
  floats(rows: R, row: number, out: Float32Array): Float32Array;
  neighbours(rows: R, query: Float32Array, k: number): number[];
}

/** What the lists are built over: `size` rows of `dim`. */
export interface ListedRows {
  readonly dim: number;
  readonly size: number;
}

/**
 * The lists of one set of rows, built in the background and following row changes (IvfScan over float32 rows; the
 * compact vector index over its int8 codes). `probe` answers which rows a search should score.
 */
export class IvfIndex<R extends ListedRows> {
  /** The rows seen last (an index serves one set). */
  private rows: R | null = null;
  /** The lists answering (calibrated), and the ones being calibrated: both follow every row change. */
  private lists: IvfLists | null = null;
  private pending: IvfLists | null = null;
  /** Rows changed while a build assigns rows in slices (re-assigned when it installs). */
  private dirty: Set<number> | null = null;
  private build: Promise<void> | null = null;
  private generation = 0;
  private changed = 0;
  private failure: string | null = null;
  /** Centroids of a saved form, used by the next build of a matching index instead of training. */
  private restored: SavedLists | null = null;
  private save: ((saved: Uint8Array) => void) | null = null;
  private installed: (() => void) | null = null;
  private readonly scratch: { dim: number; floats: Float32Array } = { dim: 0, floats: new Float32Array(0) };
  /** When rows last changed (a build waits for a pause of QUIET_MS). */
  private lastWrite = -Infinity;
  /** Bumped whenever other lists answer (a build installs, or a reset): a saved assignment names the lists it is of. */
  private answeringEpoch = 0;

  constructor(
    private readonly settings: IvfSettings,
    private readonly source: IvfSource<R>,
  ) {}

  status(): IvfStatus {
    const lists = this.lists;
    return {
      answering: this.usable(this.rows) ? 'lists' : 'scan',
      building: this.build !== null,
      lists: lists?.count ?? 0,
      share: lists?.share ?? null,
      trainedRows: lists?.trainedRows ?? 0,
      failure: this.failure,
    };
  }

  /** Which lists answer now: changes whenever other lists take over (see `answering`). */
  get epoch(): number {
    return this.answeringEpoch;
  }

  /**
   * The answering lists' saved form (centroids), measured share and floor, and each row's list, for a saved vector
   * index (saved-rows.ts); null while none answer.
   */
  answering(): { form: () => Uint8Array; share: number; floor: number; listOf: (row: number) => number } | null {
    const lists = this.lists;
    if (!lists || lists.share === null || !lists.centroids) return null;
    return { form: () => encodeLists(lists), share: lists.share, floor: lists.floor, listOf: (row) => lists.listOf(row) };
  }

  /**
   * Makes saved lists answer for `index` at once, without training, assigning or measuring: the centroids of
   * `form` (encodeLists), `share` and `floor` as measured when saved, and `listOf[row]` each row's list. False, and
   * nothing changes, when the form is refused or an assignment names no list.
   */
  async restoreAnswering(index: R, form: Uint8Array, share: number, floor: number, listOf: Int32Array): Promise<boolean> {
    const saved = decodeLists(form);
    if (!saved || saved.dim !== index.dim || listOf.length !== index.size) return false;
    for (const list of listOf) if (list < -1 || list >= saved.count) return false;
    let kernel: Int8Kernel | null | undefined;
    while ((kernel = createInt8KernelSoon(64 * 1024)) === undefined) await nextTask();
    if (!kernel) return false;
    const lists = new IvfLists(saved.dim, saved.count, kernel, saved.trainedRows);
    lists.setCentroids(saved.centroids, true);
    for (let row = 0; row < listOf.length; row++) if ((listOf[row] as number) >= 0) lists.place(row, listOf[row] as number);
    lists.share = share;
    lists.floor = floor;
    this.reset();
    this.rows = index;
    this.lists = lists;
    return true;
  }

  /** Settles when no background build is running (one started meanwhile is awaited too). */
  async idle(): Promise<void> {
    while (this.build) await this.build;
  }

  rowsChanged(index: R, rows: readonly number[]): void {
    if (this.rows && this.rows.dim !== index.dim) this.reset();
    if (rows.length > 0 || index.size !== this.rows?.size) this.lastWrite = now();
    this.rows = index;
    if (this.dirty) for (const row of rows) this.dirty.add(row);
    const dropped = (this.lists?.follow(index.size, rows, this.reader(index)) ?? 0) + (this.pending?.follow(index.size, rows, this.reader(index)) ?? 0);
    this.changed += rows.length + dropped;
    this.maybeTrain(index);
  }

  /**
   * The rows a search for the top k of `query` should score: the probed lists' rows; 'all' when the lists do not
   * answer for want of recall (measured: every row must be scored) or the probe would take them all; null while
   * they have no answer yet (too few rows, or not built).
   */
  probe(index: R, query: Float32Array, k: number): Int32Array | 'all' | null {
    const lists = this.lists;
    if (!lists || index !== this.rows || lists.share === null || index.size < this.settings.ivfMinRows) return null;
    if (lists.share > this.settings.maxShare) return 'all';
    // Twice the measured share: it is measured on stored rows as queries, and real queries sit farther from the
    // lists (at 1M the bench's queries had recall@10 0.965–0.971 at the share, 1.000 at twice it).
    const budget = Math.max(k, this.settings.minCandidates, Math.ceil(SHARE_MARGIN * lists.share * index.size));
    return (budget < index.size && lists.probe(query, budget)) || 'all';
  }

  /**
   * Hands a saved form (`onBuilt`'s) to the next build: with the same dimension, it takes its centroids instead of
   * training (rows are still assigned and the share measured again). False, and nothing changes, when the bytes
   * are not a saved form of this version (another version, or corrupt): the next build then trains.
   */
  restore(saved: Uint8Array): boolean {
    const decoded = decodeLists(saved);
    if (!decoded) return false;
    this.restored = decoded;
    if (this.rows) this.maybeTrain(this.rows);
    return true;
  }

  /** `save` gets the saved form of every trained build once it answers (not of restored ones: the store holds it). */
  onBuilt(save: (saved: Uint8Array) => void): void {
    this.save = save;
  }

  /** `installed` runs each time a build's lists start answering (trained or from restored centroids). */
  onInstalled(installed: () => void): void {
    this.installed = installed;
  }

  /** Lists for other rows (a compact index taking over from a float32 one), with this one's saved form and saver. */
  handOver<S extends ListedRows>(source: IvfSource<S>): IvfIndex<S> {
    const next = new IvfIndex<S>(this.settings, source);
    next.restored = this.restored ?? (this.lists?.centroids ? { dim: this.lists.dim, count: this.lists.count, trainedRows: this.lists.trainedRows, centroids: this.lists.centroids } : null);
    next.save = this.save;
    return next;
  }

  dispose(): void {
    this.reset();
    this.rows = null;
    this.failure = 'disposed';
  }

  usable(index: R | null): boolean {
    const lists = this.lists;
    return !!index && index === this.rows && !!lists && lists.share !== null && lists.share <= this.settings.maxShare && index.size >= this.settings.ivfMinRows;
  }

  private reader(index: R): (row: number) => Float32Array {
    const { scratch } = this;
    if (scratch.dim !== index.dim) (scratch.dim = index.dim), (scratch.floats = new Float32Array(index.dim));
    return (row) => this.source.floats(index, row, scratch.floats);
  }

  private reset(): void {
    this.generation++;
    this.answeringEpoch++;
    this.lists = null;
    this.pending = null;
    this.dirty = null;
    this.build = null;
    this.changed = 0;
  }

  private maybeTrain(index: R): void {
    if (this.build || this.failure || index.size < this.settings.ivfMinRows) return;
    const trained = this.lists?.trainedRows ?? 0;
    if (this.lists && this.changed < trained && index.size > trained / 2 && index.size < trained * 2) return;
    const generation = ++this.generation;
    this.build = this.rebuild(generation)
      .catch((error: unknown) => {
        if (generation === this.generation) this.failure = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        if (generation !== this.generation) return;
        this.build = null;
        this.dirty = null;
        this.pending = null;
        // Rows may have changed enough meanwhile to want another build.
        if (this.rows) this.maybeTrain(this.rows);
      });
  }

  /** Trains, assigns every row, calibrates, then installs: in slices, each checking that nothing reset meanwhile. */
  private async rebuild(generation: number): Promise<void> {
    const current = () => generation === this.generation && this.rows !== null;
    await nextTask(); // the write that started the build returns first
    // Not while rows stream in (a bulk import): a build begun at 50k rows of a million would be redone at each doubling,
    // each time taking the import's thread. Once writes pause, one build at the size reached.
    for (let quiet; (quiet = now() - this.lastWrite) < QUIET_MS; ) {
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS - quiet));
      if (!current()) return;
    }
    const slices = new Slicer();
    let kernel: Int8Kernel | null | undefined;
    while ((kernel = createInt8KernelSoon(64 * 1024)) === undefined) await nextTask();
    if (!kernel || !current()) return;
    const index = () => this.rows as R;
    const { listsPerRoot, iterations, seed, samplePerList } = this.settings;
    const size = index().size;
    const restored = this.restored?.dim === index().dim && !this.lists ? this.restored : null;
    this.restored = null;
    const lists = new IvfLists(index().dim, restored?.count ?? Math.max(1, Math.round(Math.sqrt(size) * listsPerRoot)), kernel, restored?.trainedRows ?? size);
    this.dirty = new Set();
    this.changed = 0;
    if (restored) lists.setCentroids(restored.centroids, true);
    else {
      const sample = sampleRows(index().dim, size, this.reader(index()), Math.min(size, Math.max(lists.count, lists.count * samplePerList, 1), MAX_SAMPLE), seed);
      if (!(await lists.train(sample, iterations, seed, slices, current))) return;
    }
    for (let row = 0; row < size; ) {
      if (!current()) return;
      const rows = index();
      const end = Math.min(size, rows.size);
      const read = this.reader(rows);
      while (row < end && !slices.due()) lists.assign(row, read(row), 0), row++;
      if (row >= rows.size) break;
      await slices.yield();
    }
    if (!current()) return;
    // Rows changed while the slices ran, and rows added since, join their lists now (rows gone leave theirs).
    const rows = index();
    const catchUp = [...(this.dirty as Set<number>)];
    for (let row = size; row < rows.size; row++) catchUp.push(row);
    lists.follow(rows.size, catchUp, this.reader(rows));
    this.dirty = null;
    this.pending = lists;
    const measured = await calibrate(this.source, index, (rows) => this.reader(rows), lists, this.settings, slices, current);
    if (!current() || measured === null) return;
    lists.share = measured.share;
    lists.floor = measured.floor;
    this.lists = lists;
    this.answeringEpoch++;
    if (!restored) this.save?.(encodeLists(lists));
    this.installed?.();
  }
}

export class IvfScan implements VectorScan {
  private readonly inner: QuantizedScan;
  private readonly settings: IvfSettings;
  private readonly index: IvfIndex<VectorRows>;

  constructor(options: IvfScanOptions = {}) {
    // The lists replace the 1-bit prefilter, which on unclustered vectors misses neighbours (recall@10 0.82 at
    // 50k × 384-d uniform): where the lists do not answer, the int8 scan is exact unless asked otherwise.
    this.inner = new QuantizedScan({ prefilterMinRows: false, ...options });
    const settings = { ...defaultIvfScanOptions };
    for (const key of Object.keys(settings) as (keyof IvfSettings)[]) {
      const value = options[key];
      if (value !== undefined) settings[key] = value;
    }
    this.settings = settings;
    this.index = new IvfIndex<VectorRows>(settings, {
      floats: (rows, row) => rows.matrix.subarray(row * rows.dim, (row + 1) * rows.dim),
      neighbours: (rows, query, k) => (this.inner.topKAmong(rows, query, k, null) ?? exactScan.topK(rows, query, k)).map((hit) => hit.row),
    });
  }

  status(): IvfStatus {
    return this.index.status();
  }

  /** Settles when no background build is running (one started meanwhile is awaited too). */
  idle(): Promise<void> {
    return this.index.idle();
  }

  rowsChanged(index: VectorRows, rows: readonly number[]): void {
    this.inner.rowsChanged(index, rows);
    this.index.rowsChanged(index, rows);
  }

  topK(index: VectorRows, query: Float32Array, k: number, eligible?: (row: number) => boolean): ScoredRow[] {
    const probed = k > 0 ? this.index.probe(index, query, k) : null;
    if (probed === null || probed === 'all') return this.inner.topK(index, query, k, eligible);
    return this.inner.topKAmong(index, query, k, probed, eligible) ?? exactScan.topK(index, query, k, eligible);
  }

  /** See IvfIndex.restore. */
  restore(saved: Uint8Array): boolean {
    return this.index.restore(saved);
  }

  onBuilt(save: (saved: Uint8Array) => void): void {
    this.index.onBuilt(save);
  }

  /** The lists for a compact index of the same vectors (compact-rows.ts), with this scan's settings, saved form and saver. */
  compactLists<S extends ListedRows>(source: IvfSource<S>): IvfIndex<S> {
    return this.index.handOver(source);
  }

  dispose(): void {
    this.index.dispose();
  }

  rowsAbove(index: VectorRows, queries: readonly Float32Array[], floor: number, cap: number, limit?: (query: number) => number): RowsAbove[] {
    return this.inner.rowsAbove(index, queries, floor, cap, limit);
  }
}

/** The k-means lists: int8 centroids in a kernel, each row's list and place in it. */
export class IvfLists {
  readonly dim: number;
  readonly count: number;
  readonly trainedRows: number;
  /** The measured share of rows a search probes; null until calibrated. */
  share: number | null = null;
  /**
   * The lowest best-centroid score among the calibration's queries: a query scoring below it with every centroid
   * lies outside what the share was measured on (a mix of topics, or common words only), and the lists may miss
   * its neighbours (recall@10 0.72 on such queries at 200k): it is answered by every row.
   */
  floor = -Infinity;
  /** The centroids as floats (unit rows), for the saved form. */
  centroids: Float32Array | null = null;
  private readonly stride: number;
  private readonly scales: Float32Array;
  private readonly members: Int32Array[];
  private readonly lengths: Int32Array;
  private rowList = new Int32Array(0);
  private rowPlace = new Int32Array(0);
  /** One past the highest row ever assigned (rows from here on are in no list). */
  private end = 0;
  private order: Int32Array;
  private scores: Float64Array;
  private keys: Float64Array;
  private shortlist = new Int32Array(0);
  /** Assignment goes through groups of centroids once there are many: the best GROUP_PROBE groups' centroids only. */
  private groups = 0;
  private groupScales = new Float32Array(0);
  private groupMembers: Int32Array[] = [];
  private groupScores = new Float64Array(0);
  private groupOrder = new Float64Array(0);
  /** Set when the centroids are to be grouped before the next assignment. */
  private ungrouped = false;

  constructor(dim: number, count: number, private readonly kernel: Int8Kernel, trainedRows: number) {
    this.dim = dim;
    this.count = count;
    this.trainedRows = trainedRows;
    this.stride = Math.ceil(dim / 16) * 16;
    this.scales = new Float32Array(count);
    this.lengths = new Int32Array(count);
    this.members = Array.from({ length: count }, () => new Int32Array(Math.max(4, Math.ceil(trainedRows / count))));
    this.order = new Int32Array(count);
    this.scores = new Float64Array(count);
    this.keys = new Float64Array(count);
    kernel.grow(this.groupsAt);
  }

  /**
   * Layout: [query: stride][centroids: count × stride][dots: count × int32][groups: groups × stride][group dots:
   * groups × int32][centroid list: count × int32].
   */
  private get dotsAt(): number {
    return this.stride * (this.count + 1);
  }

  private get groupsAt(): number {
    return this.dotsAt + this.count * 4;
  }

  private get groupDotsAt(): number {
    return this.groupsAt + this.groups * this.stride;
  }

  private get memberListAt(): number {
    return this.groupDotsAt + this.groups * 4;
  }

  /** Rows in list `list` (for tests). */
  listLength(list: number): number {
    return this.lengths[list] as number;
  }

  /** The list row `row` is in, or −1. */
  listOf(row: number): number {
    return row < this.end ? (this.rowList[row] as number) : -1;
  }

  /** Spherical k-means over `sample` (unit rows): false when `current` turned false between slices. */
  async train(sample: Float32Array, iterations: number, seed: number, slices: Slicer, current: () => boolean): Promise<boolean> {
    const { dim, count } = this;
    const points = sample.length / dim;
    const random = prng(seed + 7);
    const centroids = await seedCentroids(sample, dim, count, random, slices, current);
    if (!centroids) return false;
    const sums = new Float64Array(count * dim);
    const sizes = new Int32Array(count);
    for (let pass = 0; pass < iterations; pass++) {
      this.setCentroids(centroids, true);
      sums.fill(0);
      sizes.fill(0);
      for (let p = 0; p < points; ) {
        while (p < points && !slices.due()) {
          const c = this.nearest(sample, p * dim);
          sizes[c] = (sizes[c] as number) + 1;
          const at = c * dim;
          const from = p * dim;
          for (let d = 0; d < dim; d++) sums[at + d] = (sums[at + d] as number) + (sample[from + d] as number);
          p++;
        }
        await slices.yield();
        if (!current()) return false;
      }
      for (let c = 0; c < count; c++) {
        const at = c * dim;
        let norm = 0;
        for (let d = 0; d < dim; d++) norm += (sums[at + d] as number) ** 2;
        if (sizes[c] === 0 || norm === 0) {
          // An empty list restarts at a random sample point.
          const p = Math.floor(random() * points);
          centroids.set(sample.subarray(p * dim, (p + 1) * dim), at);
          continue;
        }
        const inv = 1 / Math.sqrt(norm);
        for (let d = 0; d < dim; d++) centroids[at + d] = (sums[at + d] as number) * inv;
      }
    }
    this.setCentroids(centroids, true);
    return true;
  }

  /** Puts row `row` (its unit vector at matrix[offset..]) in the list of its nearest centroid. Not yet in a list. */
  assign(row: number, matrix: Float32Array, offset: number): void {
    this.place(row, this.nearest(matrix, offset));
  }

  /** Puts row `row` (in no list yet) in list `list` (a saved assignment). */
  place(row: number, list: number): void {
    if (row >= this.rowList.length) {
      const capacity = Math.max(row + 1, Math.ceil(this.rowList.length * 1.5), 64);
      const from = this.rowList.length;
      this.rowList = grown(this.rowList, capacity);
      this.rowPlace = grown(this.rowPlace, capacity);
      this.rowList.fill(-1, from);
    }
    for (let r = this.end; r < row; r++) this.rowList[r] = -1;
    if (row >= this.end) this.end = row + 1;
    let members = this.members[list] as Int32Array;
    const length = this.lengths[list] as number;
    if (length === members.length) this.members[list] = members = grown(members, Math.ceil(length * 1.5) + 4);
    members[length] = row;
    this.lengths[list] = length + 1;
    this.rowList[row] = list;
    this.rowPlace[row] = length;
  }

  /**
   * Follows a change of the index: rows at or past its size leave their lists, and each changed row below it
   * moves to the list of its nearest centroid. Returns how many rows left.
   */
  follow(size: number, rows: readonly number[], read: (row: number) => Float32Array): number {
    let dropped = 0;
    for (let row = size; row < this.end; row++) if (this.drop(row)) dropped++;
    this.end = Math.min(this.end, size);
    for (const row of rows) {
      if (row >= size) continue;
      this.drop(row);
      this.assign(row, read(row), 0);
    }
    return dropped;
  }

  /** The centroids' approximate cosines to a unit query (valid until the next call). */
  centroidScores(query: Float32Array): Float64Array {
    const { kernel, stride, count, scales, scores } = this;
    const { scale } = quantize(query, 0, this.dim, new Int8Array(kernel.buffer, 0, stride), 0);
    kernel.dots(stride, count, stride, 0, this.dotsAt);
    const dots = new Int32Array(kernel.buffer, this.dotsAt, count);
    for (let c = 0; c < count; c++) scores[c] = (dots[c] as number) * (scales[c] as number) * scale;
    return scores;
  }

  /** The lists in order of their centroid's score to `query`, best first (valid until the next call). */
  ranked(query: Float32Array): Int32Array {
    const scores = this.centroidScores(query);
    const { order, keys, count } = this;
    // Sorted natively as numbers: (1 − score) to 1e-6, the list number in the low bits (ties: lower list first).
    const slots = 2 ** Math.ceil(Math.log2(count + 1));
    for (let c = 0; c < count; c++) keys[c] = Math.round((1 - (scores[c] as number)) * 1e6) * slots + c;
    keys.sort();
    for (let i = 0; i < count; i++) order[i] = (keys[i] as number) % slots;
    return order;
  }

  /**
   * The rows of the best lists for `query`, list by list, until at least `budget` (valid until the next call);
   * null when the query is below the floor with every centroid.
   */
  probe(query: Float32Array, budget: number): Int32Array | null {
    const order = this.ranked(query);
    if ((this.scores[order[0] as number] as number) < this.floor) return null;
    let total = 0;
    let lists = 0;
    while (lists < this.count && total < budget) total += this.lengths[order[lists++] as number] as number;
    if (this.shortlist.length < total) this.shortlist = new Int32Array(Math.ceil(total * 1.25));
    const out = this.shortlist;
    let at = 0;
    for (let i = 0; i < lists; i++) {
      const list = order[i] as number;
      out.set((this.members[list] as Int32Array).subarray(0, this.lengths[list] as number), at);
      at += this.lengths[list] as number;
    }
    return out.subarray(0, at);
  }

  private drop(row: number): boolean {
    if (row >= this.end) return false;
    const list = this.rowList[row] as number;
    if (list < 0) return false;
    const members = this.members[list] as Int32Array;
    const last = (this.lengths[list] as number) - 1;
    const place = this.rowPlace[row] as number;
    const moved = members[last] as number;
    members[place] = moved;
    this.rowPlace[moved] = place;
    this.lengths[list] = last;
    this.rowList[row] = -1;
    return true;
  }

  /** The list of the centroid nearest the unit vector at source[offset..] (by int8 score). */
  private nearest(source: Float32Array, offset: number): number {
    if (this.ungrouped) this.groupCentroids();
    const { kernel, stride, count, scales } = this;
    quantize(source, offset, this.dim, new Int8Array(kernel.buffer, 0, stride), 0);
    if (this.groups === 0) {
      kernel.dots(stride, count, stride, 0, this.dotsAt);
      return bestOf(new Int32Array(kernel.buffer, this.dotsAt, count), null, count, scales);
    }
    // The best groups by their centre, then the best centroid among their members.
    kernel.dots(this.groupsAt, this.groups, stride, 0, this.groupDotsAt);
    const groupDots = new Int32Array(kernel.buffer, this.groupDotsAt, this.groups);
    const list = new Int32Array(kernel.buffer, this.memberListAt, count);
    let listed = 0;
    const { groups, groupScores, groupOrder } = this;
    for (let g = 0; g < groups; g++) groupScores[g] = (groupDots[g] as number) * (this.groupScales[g] as number);
    // The probes-th best score, by a native numeric sort of a copy; groups at or above it, up to probes of them.
    groupOrder.set(groupScores);
    groupOrder.sort();
    const floor = groupOrder[groups - groupProbe(groups)] as number;
    for (let g = 0, taken = 0; g < groups && taken < groupProbe(groups); g++) {
      if ((groupScores[g] as number) < floor) continue;
      const members = this.groupMembers[g] as Int32Array;
      list.set(members, listed);
      listed += members.length;
      taken++;
    }
    kernel.dotsAt(stride, this.memberListAt, listed, stride, 0, this.dotsAt);
    return bestOf(new Int32Array(kernel.buffer, this.dotsAt, listed), list, listed, scales);
  }

  /** Makes `centroids` (unit rows) the lists' centroids; `grouped` also groups them for assignment. */
  setCentroids(centroids: Float32Array, grouped = false): void {
    const { dim, count, stride } = this;
    this.centroids = centroids;
    this.groups = 0;
    const codes = new Int8Array(this.kernel.buffer, stride, count * stride);
    codes.fill(0);
    for (let c = 0; c < count; c++) this.scales[c] = quantize(centroids, c * dim, dim, codes, c * stride).scale;
    // Grouped at the first assignment: lists restored on open answer searches without it (0.4 s at 4,000 lists).
    this.ungrouped = grouped && count >= GROUPED_FROM;
  }

  /** Groups the centroids for assignment (see `nearest`): spherical k-means over the centroids themselves. */
  private groupCentroids(): void {
    const { dim, count, stride, centroids } = this;
    this.ungrouped = false;
    if (!centroids) return;
    // Spherical k-means over the centroids themselves (a few passes in float32: count × groups is small).
    const groups = Math.ceil(Math.sqrt(count));
    const centres = new Float32Array(groups * dim);
    for (let g = 0; g < groups; g++) centres.set(centroids.subarray(Math.floor((g * count) / groups) * dim, (Math.floor((g * count) / groups) + 1) * dim), g * dim);
    const of = new Int32Array(count);
    for (let pass = 0; pass < 4; pass++) {
      for (let c = 0; c < count; c++) {
        let best = 0;
        let bestScore = -Infinity;
        for (let g = 0; g < groups; g++) {
          const score = dot(centroids, c * dim, centres, g * dim, dim);
          if (score > bestScore) (bestScore = score), (best = g);
        }
        of[c] = best;
      }
      centres.fill(0);
      for (let c = 0; c < count; c++) for (let d = 0; d < dim; d++) centres[(of[c] as number) * dim + d] = (centres[(of[c] as number) * dim + d] as number) + (centroids[c * dim + d] as number);
      for (let g = 0; g < groups; g++) {
        let norm = 0;
        for (let d = 0; d < dim; d++) norm += (centres[g * dim + d] as number) ** 2;
        const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
        for (let d = 0; d < dim; d++) centres[g * dim + d] = (centres[g * dim + d] as number) * inv;
      }
    }
    const members = Array.from({ length: groups }, (): number[] => []);
    for (let c = 0; c < count; c++) (members[of[c] as number] as number[]).push(c);
    this.groups = groups;
    this.groupMembers = members.map((m) => Int32Array.from(m));
    this.groupScales = new Float32Array(groups);
    this.groupScores = new Float64Array(groups);
    this.groupOrder = new Float64Array(groups);
    this.kernel.grow(this.memberListAt + count * 4);
    const groupCodes = new Int8Array(this.kernel.buffer, this.groupsAt, groups * stride);
    groupCodes.fill(0);
    for (let g = 0; g < groups; g++) this.groupScales[g] = quantize(centres, g * dim, dim, groupCodes, g * stride).scale;
  }
}

/** Index (into `rows`, or the candidate number itself) of the best int8 score; dots[i] is candidate i's product. */
function bestOf(dots: Int32Array, rows: Int32Array | null, count: number, scales: Float32Array): number {
  let best = 0;
  let bestScore = -Infinity;
  for (let i = 0; i < count; i++) {
    const c = rows ? (rows[i] as number) : i;
    const score = (dots[i] as number) * (scales[c] as number);
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}

function dot(a: Float32Array, at: number, b: Float32Array, bt: number, dim: number): number {
  let sum = 0;
  for (let d = 0; d < dim; d++) sum += (a[at + d] as number) * (b[bt + d] as number);
  return sum;
}

/** What a saved form holds: the centroids and the rows they were trained on. */
interface SavedLists {
  dim: number;
  count: number;
  trainedRows: number;
  centroids: Float32Array;
}

/** Saved form: little-endian u32 words [magic, version, checksum of the words after it, dim, count, trained rows], then the centroids (float32). */
const SAVED_MAGIC = 0x46564945; // 'EIVF'
export const IVF_SAVED_VERSION = 1;
const SAVED_HEADER_WORDS = 6;

export function encodeLists(lists: IvfLists): Uint8Array {
  const centroids = lists.centroids as Float32Array;
  const words = new Uint32Array(SAVED_HEADER_WORDS + centroids.length);
  words.set([SAVED_MAGIC, IVF_SAVED_VERSION, 0, lists.dim, lists.count, lists.trainedRows]);
  new Float32Array(words.buffer).set(centroids, SAVED_HEADER_WORDS);
  words[2] = wordSum(words, 3);
  return new Uint8Array(words.buffer);
}

/** The saved form's contents, or null when it is not one of this version (or fails its checksum). */
function decodeLists(bytes: Uint8Array): SavedLists | null {
  if (bytes.byteLength % 4 !== 0 || bytes.byteLength < SAVED_HEADER_WORDS * 4) return null;
  const words = new Uint32Array(bytes.slice().buffer);
  const [magic, version, sum, dim, count, trainedRows] = words as unknown as number[];
  if (magic !== SAVED_MAGIC || version !== IVF_SAVED_VERSION || !dim || !count || words.length !== SAVED_HEADER_WORDS + dim * count) return null;
  if (wordSum(words, 3) !== sum) return null;
  return { dim, count, trainedRows: trainedRows as number, centroids: new Float32Array(words.buffer, SAVED_HEADER_WORDS * 4) };
}

/** FNV-1a over the words from `from` on (each word as one step): catches a torn or altered saved form. */
export function wordSum(words: Uint32Array, from: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < words.length; i++) hash = Math.imul(hash ^ (words[i] as number), 0x01000193) >>> 0;
  return hash;
}

/**
 * k-means++ seeds: each next centroid a sample point drawn with probability ∝ its squared distance to the nearest
 * centroid so far (2 − 2·cosine), so clusters the first picks missed get centroids of their own. (Seeded from
 * random points alone, in high dimension where clusters are nearly orthogonal, k-means left a third of 1,000
 * clusters without a centroid and their rows scattered over unrelated lists.) Null when `current` turned false.
 */
async function seedCentroids(sample: Float32Array, dim: number, count: number, random: () => number, slices: Slicer, current: () => boolean): Promise<Float32Array | null> {
  // Drawn from the first SEED_PER_LIST × count sample points: the cost is count × points.
  const points = Math.min(sample.length / dim, count * SEED_PER_LIST);
  const centroids = new Float32Array(count * dim);
  const stride = Math.ceil(dim / 16) * 16;
  const kernel = createInt8KernelSoon(stride * (points + 1) + points * 4);
  if (!kernel) {
    // Not compiled yet (no SIMD at all is checked before): distinct sample points, the sample being in random order.
    for (let c = 0; c < count; c++) centroids.set(sample.subarray((c % points) * dim, ((c % points) + 1) * dim), c * dim);
    return centroids;
  }
  kernel.grow(stride * (points + 1) + points * 4);
  const codes = new Int8Array(kernel.buffer, stride, points * stride);
  const scales = new Float32Array(points);
  for (let p = 0; p < points; p++) scales[p] = quantize(sample, p * dim, dim, codes, p * stride).scale;
  const nearest = new Float64Array(points).fill(-1);
  const out = stride * (points + 1);
  let pick = Math.floor(random() * points);
  for (let c = 0; c < count; c++) {
    if (slices.due()) {
      await slices.yield();
      if (!current()) return null;
    }
    centroids.set(sample.subarray(pick * dim, (pick + 1) * dim), c * dim);
    const { scale } = quantize(sample, pick * dim, dim, new Int8Array(kernel.buffer, 0, stride), 0);
    kernel.dots(stride, points, stride, 0, out);
    const dots = new Int32Array(kernel.buffer, out, points);
    let total = 0;
    for (let p = 0; p < points; p++) {
      const cosine = (dots[p] as number) * (scales[p] as number) * scale;
      if (cosine > (nearest[p] as number)) nearest[p] = cosine;
      total += Math.max(0, 2 - 2 * (nearest[p] as number));
    }
    let target = random() * total;
    pick = points - 1;
    for (let p = 0; p < points; p++) {
      target -= Math.max(0, 2 - 2 * (nearest[p] as number));
      if (target <= 0) {
        pick = p;
        break;
      }
    }
  }
  return centroids;
}

/**
 * The least share of rows whose probe holds `targetRecall` of the exact top k of sample rows (themselves left
 * out), and the lowest best-centroid score among those rows (IvfLists.floor); null when `current` turned false. One sample row per slice step: its exact top k and the lists' ranks
 * are read at one moment, so rows changing between steps do not matter.
 */
async function calibrate<R extends ListedRows>(
  source: IvfSource<R>,
  index: () => R,
  reader: (rows: R) => (row: number) => Float32Array,
  lists: IvfLists,
  { calibrationQueries, calibrationK, targetRecall, seed }: IvfSettings,
  slices: Slicer,
  current: () => boolean,
): Promise<{ share: number; floor: number } | null> {
  const random = prng(seed + 13);
  const needs: number[] = [];
  let floor = Infinity;
  const rank = new Int32Array(lists.count);
  const before = new Float64Array(lists.count);
  for (let q = 0; q < calibrationQueries; q++) {
    if (slices.due()) await slices.yield();
    if (!current()) return null;
    const rows = index();
    if (rows.size <= calibrationK) break;
    const row = Math.floor(random() * rows.size);
    const query = normalize(reader(rows)(row));
    const exact = source.neighbours(rows, query, calibrationK + 1);
    const order = lists.ranked(query);
    floor = Math.min(floor, lists.centroidScores(query)[order[0] as number] as number);
    let total = 0;
    for (let i = 0; i < lists.count; i++) {
      const list = order[i] as number;
      rank[list] = i;
      before[list] = total;
      total += lists.listLength(list);
    }
    const neighbours = exact.filter((hit) => hit !== row).slice(0, calibrationK);
    // A probe takes list after list while it holds fewer than its budget: a list is probed once the budget exceeds the rows before it.
    for (const hit of neighbours) {
      const list = lists.listOf(hit);
      needs.push(list < 0 ? 1 : ((before[list] as number) + 1) / rows.size);
    }
  }
  if (needs.length === 0) return { share: 1, floor: -Infinity };
  needs.sort((a, b) => a - b);
  return { share: needs[Math.min(needs.length - 1, Math.ceil(targetRecall * needs.length) - 1)] as number, floor };
}

/** `count` rows drawn at random (with replacement), their floats copied, in random order. */
function sampleRows(dim: number, size: number, read: (row: number) => Float32Array, count: number, seed: number): Float32Array {
  const random = prng(seed);
  const out = new Float32Array(count * dim);
  for (let i = 0; i < count; i++) out.set(read(Math.floor(random() * size)), i * dim);
  return out;
}

/** Background work in slices of SLICE_MS, yielding to other tasks between them. */
class Slicer {
  private start = now();

  due(): boolean {
    return now() - this.start >= SLICE_MS;
  }

  async yield(): Promise<void> {
    await nextTask();
    this.start = now();
  }
}

function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}
