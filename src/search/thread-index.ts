/**
 * Memories in order: those that share a thread (`meta.thread`: a chat session, a document, a meeting) form a sequence
 * ordered by `createdAt`, ties kept in the order the engine first saw them (the order they were added, or loaded
 * from the store); memories without a thread form one more sequence, by time. The neighbours stage and `timeline`
 * read it; the engine keeps it current.
 */
import type { MemoryRecord } from '../types.js';

/** The thread a memory belongs to: `meta.thread` when it is a non-empty string or a finite number. */
export function threadOf(record: Pick<MemoryRecord, 'meta'>): string | undefined {
  return threadKey(record.meta?.thread);
}

/** A `meta.thread` value as the index files it: a non-empty string, or a finite number as a string. */
function threadKey(thread: unknown): string | undefined {
  if (typeof thread === 'string' && thread.length > 0) return thread;
  if (typeof thread === 'number' && Number.isFinite(thread)) return String(thread);
  return undefined;
}

interface Entry {
  id: string;
  /** Undefined for a memory without a thread: it belongs to the time sequence. */
  thread: string | undefined;
  createdAt: number;
  /** Arrival order: breaks createdAt ties. */
  seq: number;
  /** Index in its sequence's `entries`, valid while the sequence is `indexed`. */
  position: number;
}

/** One ordered sequence: a thread, or the time sequence of the memories without one. */
interface Sequence {
  /** Entries in order once sorted; may hold stale entries (removed or re-filed) until the next read compacts it. */
  entries: Entry[];
  /** Whether every entry's `position` is its index (false until the next read renumbers them). */
  indexed: boolean;
  sorted: boolean;
  /** Entries in `entries` that are no longer live. */
  stale: number;
}

/** Where a memory's neighbours come from: its thread, or the time sequence of the memories without a thread. */
type SequenceKind = 'thread' | 'time';

function emptySequence(): Sequence {
  return { entries: [], indexed: true, sorted: true, stale: 0 };
}

/**
 * Re-indexing passes over a sequence and the entries they walked, and entries renumbered by in-place insertions,
 * since load: work a test can count.
 */
export const threadIndexCounters = { passes: 0, entriesWalked: 0, entriesShifted: 0 };

/** In-place insertions into a short sequence may always renumber this many entries per call. */
const MIN_SHIFT_BUDGET = 1024;

/**
 * Every memory in order: those with a thread in their thread, those without one in a single time sequence
 * (same order: createdAt, ties by arrival), which `timeline` reads and the neighbours stage may use (`byTime`).
 * Removal is lazy: a removed or re-filed memory leaves a stale entry, dropped by the next read of its
 * sequence, so removing many memories from a long sequence costs one pass, not one per memory.
 */
export class ThreadIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly threads = new Map<string, Sequence>();
  private time = emptySequence();
  private threaded = 0;
  private nextSeq = 0;

  /** Memories filed in a thread (those in the time sequence are not counted). */
  get size(): number {
    return this.threaded;
  }

  /**
   * Fills an empty index with the stored memories at open (`thread`: `meta.thread`), in arrival order: each sequence
   * sorted once, by a stable sort of createdAt over typed arrays (the per-entry path would sort a million entries
   * through a comparator on the first search). Throws when the index is not empty.
   */
  load(records: readonly { id: string; createdAt: number; thread?: unknown }[]): void {
    if (this.entries.size > 0 || this.nextSeq > 0) throw new Error('ThreadIndex.load: the index is not empty');
    const byThread = new Map<string | undefined, Entry[]>([[undefined, []]]);
    for (const record of records) {
      const thread = threadKey(record.thread);
      const entry: Entry = { id: record.id, thread, createdAt: record.createdAt, seq: this.nextSeq++, position: -1 };
      const previous = this.entries.get(record.id);
      if (previous) previous.position = -2; // an id twice: the later one is kept, as upsertAll would
      this.entries.set(record.id, entry);
      const list = byThread.get(thread);
      if (list) list.push(entry);
      else byThread.set(thread, [entry]);
    }
    for (const [thread, list] of byThread) {
      const live = list.filter((entry) => entry.position !== -2);
      const entries = sortedByTime(live);
      entries.forEach((entry, i) => (entry.position = i));
      const sequence: Sequence = { entries, indexed: true, sorted: true, stale: 0 };
      if (thread === undefined) this.time = sequence;
      else if (entries.length > 0) {
        this.threads.set(thread, sequence);
        this.threaded += entries.length;
      }
    }
  }

  /** Adds or re-files records (a changed thread or createdAt moves them). */
  upsertAll(records: readonly Pick<MemoryRecord, 'id' | 'createdAt' | 'meta'>[]): void {
    /** Entries renumbered in each sequence by this call's in-place insertions. */
    const shifted = new Map<Sequence, number>();
    for (const record of records) {
      const thread = threadOf(record);
      const previous = this.entries.get(record.id);
      if (previous) {
        if (previous.thread === thread && previous.createdAt === record.createdAt) continue;
        this.remove(record.id);
      }
      const entry: Entry = { id: record.id, thread, createdAt: record.createdAt, seq: previous?.seq ?? this.nextSeq++, position: -1 };
      this.entries.set(record.id, entry);
      let sequence = this.time;
      if (thread !== undefined) {
        this.threaded++;
        sequence = this.threads.get(thread) ?? emptySequence();
        this.threads.set(thread, sequence);
      }
      const { entries } = sequence;
      const last = entries[entries.length - 1];
      // Appending in order (the common case: a chat grows at its end) keeps the sequence sorted and its positions valid.
      if (last === undefined || compare(last, entry) <= 0) {
        entry.position = entries.push(entry) - 1;
        if (!sequence.sorted || sequence.stale > 0) sequence.indexed = false;
        continue;
      }
      // Out of order into an indexed sequence: put in its place and renumber the entries after it, while that moves
      // fewer entries in this call than the sequence holds (a re-sort on the next read walks them all, and sorts).
      const at = sequence.indexed ? insertionPoint(entries, entry) : -1;
      const moved = (shifted.get(sequence) ?? 0) + entries.length - at;
      if (at >= 0 && moved <= Math.max(entries.length, MIN_SHIFT_BUDGET)) {
        shifted.set(sequence, moved);
        threadIndexCounters.entriesShifted += entries.length - at;
        entries.splice(at, 0, entry);
        for (let i = at; i < entries.length; i++) entries[i]!.position = i;
        continue;
      }
      sequence.sorted = false;
      sequence.indexed = false;
      entry.position = entries.push(entry) - 1;
    }
  }

  /** Whether two memories are in one thread. */
  sameThread(a: string, b: string): boolean {
    const thread = this.entries.get(a)?.thread;
    return thread !== undefined && thread === this.entries.get(b)?.thread;
  }

  /**
   * Whether memory `b` comes after memory `a`: in one thread by the thread's order (time, then arrival), elsewhere
   * by createdAt alone (false on a tie: nothing orders them). False for an unknown id.
   */
  isLater(a: string, b: string): boolean {
    const first = this.entries.get(a);
    const second = this.entries.get(b);
    if (!first || !second) return false;
    if (first.thread !== undefined && first.thread === second.thread) return compare(first, second) < 0;
    return second.createdAt > first.createdAt;
  }

  remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    if (entry.thread !== undefined) this.threaded--;
    const sequence = this.sequenceOf(entry);
    sequence.stale++;
    sequence.indexed = false;
    if (entry.thread !== undefined && sequence.stale === sequence.entries.length) this.threads.delete(entry.thread);
  }

  clear(): void {
    this.entries.clear();
    this.threads.clear();
    this.time = emptySequence();
    this.threaded = 0;
  }

  /**
   * Memories of the same sequence within `window` places of `id`, nearest first (before, then after, at each
   * distance). A memory without a thread has neighbours only when `byTime` is set: then the other memories
   * without a thread, by createdAt, as far as consecutive ones are more than 0 and at most `maxGapMs` apart.
   */
  neighbours(id: string, window: number, byTime = false, maxGapMs = Infinity): { id: string; distance: number }[] {
    const entry = this.entries.get(id);
    if (!entry || window < 1 || (entry.thread === undefined && !byTime)) return [];
    const sequence = this.sequenceOf(entry);
    const at = this.positionOf(sequence, entry);
    const byThread = entry.thread !== undefined;
    const { entries } = sequence;
    const joins = byThread ? () => true : joinsInTime(maxGapMs);
    let beforeOpen = true;
    let afterOpen = true;
    // In time, a sitting is three memories at least: two notes that happen to fall within the gap (dated one-off
    // notes, documents imported with their dates) are no sequence, and lend each other nothing.
    if (!byThread && !this.inSitting(entries, at, joins)) return [];
    const out: { id: string; distance: number }[] = [];
    for (let distance = 1; distance <= window; distance++) {
      const before = entries[at - distance];
      const after = entries[at + distance];
      beforeOpen &&= before !== undefined && joins(entries[at - distance + 1]!.createdAt - before.createdAt);
      afterOpen &&= after !== undefined && joins(after.createdAt - entries[at + distance - 1]!.createdAt);
      if (beforeOpen) out.push({ id: before!.id, distance });
      if (afterOpen) out.push({ id: after!.id, distance });
      if (!beforeOpen && !afterOpen) break;
    }
    return out;
  }

  /**
   * Whether a memory is in a sequence: it has a thread, or it is in a sitting over time (as `neighbours` reads one
   * with `byTime` and `maxGapMs`). False for an unknown id. Decay reads it (`decayScope: 'sequences'`).
   */
  inSequence(id: string, maxGapMs: number): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    if (entry.thread !== undefined) return true;
    const at = this.positionOf(this.time, entry);
    return this.inSitting(this.time.entries, at, joinsInTime(maxGapMs));
  }

  /** Whether the memory at `at` and the steps that join it reach two more memories (three in the sitting). */
  private inSitting(entries: readonly Entry[], at: number, joins: (step: number) => boolean): boolean {
    let joined = 0;
    for (let i = at; i > 0 && joined < 2 && joins(entries[i]!.createdAt - entries[i - 1]!.createdAt); i--) joined++;
    for (let i = at; i + 1 < entries.length && joined < 2 && joins(entries[i + 1]!.createdAt - entries[i]!.createdAt); i++) joined++;
    return joined >= 2;
  }

  /**
   * Up to `before` ids just before `id` and `after` just after it in its sequence, each list oldest first, and
   * which sequence that is; undefined for an unknown id.
   */
  around(id: string, before: number, after: number): { before: string[]; after: string[]; by: SequenceKind } | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    const sequence = this.sequenceOf(entry);
    const at = this.positionOf(sequence, entry);
    const slice = (from: number, to: number) => sequence.entries.slice(Math.max(0, from), to).map((e) => e.id);
    return {
      before: slice(at - before, at),
      after: slice(at + 1, at + 1 + after),
      by: entry.thread === undefined ? 'time' : 'thread',
    };
  }

  private sequenceOf(entry: Entry): Sequence {
    return entry.thread === undefined ? this.time : this.threads.get(entry.thread)!;
  }

  /** `entry`'s index in its sequence, compacting, sorting and renumbering the sequence first when a change left it stale. */
  private positionOf(sequence: Sequence, entry: Entry): number {
    if (!sequence.indexed) {
      threadIndexCounters.passes++;
      threadIndexCounters.entriesWalked += sequence.entries.length;
      // Live entries are exactly those the id map still points to.
      if (sequence.stale > 0) sequence.entries = sequence.entries.filter((e) => this.entries.get(e.id) === e);
      if (!sequence.sorted) sequence.entries.sort(compare);
      sequence.entries.forEach((e, i) => (e.position = i));
      sequence.stale = 0;
      sequence.sorted = true;
      sequence.indexed = true;
    }
    return entry.position;
  }
}

/**
 * In time, a step joins two memories when it is no longer than the gap (what lies past it belongs to another stretch
 * of time) and not zero: memories stored at one instant are a batch (an import), whose order says nothing.
 */
function joinsInTime(gap: number): (step: number) => boolean {
  return (step) => step > 0 && step <= gap;
}

/**
 * `entries` (in arrival order) sorted by createdAt, ties in arrival order: what sorting by `compare` gives, without
 * a comparator call per step. Each entry's rank among the distinct times is found by binary search in a natively
 * sorted Float64Array, then a counting sort by rank keeps arrival order within a rank.
 */
function sortedByTime(entries: Entry[]): Entry[] {
  const n = entries.length;
  if (n < 2) return entries;
  const times = new Float64Array(n);
  let ordered = true;
  for (let i = 0; i < n; i++) {
    times[i] = entries[i]!.createdAt;
    if (i > 0 && (times[i] as number) < (times[i - 1] as number)) ordered = false;
  }
  if (ordered) return entries;
  if (times.some(Number.isNaN)) return entries.slice().sort(compare);
  const sorted = times.slice().sort();
  let distinct = 0;
  for (let i = 0; i < n; i++) if (i === 0 || (sorted[i] as number) !== (sorted[distinct - 1] as number)) sorted[distinct++] = sorted[i] as number;
  const ranks = new Uint32Array(n);
  const starts = new Uint32Array(distinct + 1);
  for (let i = 0; i < n; i++) {
    const t = times[i] as number;
    let low = 0;
    let high = distinct - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((sorted[mid] as number) < t) low = mid + 1;
      else high = mid;
    }
    ranks[i] = low;
    starts[low + 1] = (starts[low + 1] as number) + 1;
  }
  for (let r = 0; r < distinct; r++) starts[r + 1] = (starts[r + 1] as number) + (starts[r] as number);
  const out = new Array<Entry>(n);
  for (let i = 0; i < n; i++) {
    const rank = ranks[i] as number;
    out[starts[rank] as number] = entries[i]!;
    starts[rank] = (starts[rank] as number) + 1;
  }
  return out;
}

function compare(a: Entry, b: Entry): number {
  return a.createdAt - b.createdAt || a.seq - b.seq;
}

/** The first index of sorted `entries` whose entry comes after `entry`. */
function insertionPoint(entries: readonly Entry[], entry: Entry): number {
  let low = 0;
  let high = entries.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compare(entries[mid]!, entry) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
