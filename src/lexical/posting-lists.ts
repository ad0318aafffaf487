/**
 * Postings as sorted typed arrays, for the pruned scorer (bm25-pruned.ts), which needs to walk several lists in
 * step and to jump into a list (galloping search) rather than read it whole.
 *
 * A list restored from a snapshot (`PackedPostings`) is served as views of its own arrays: no copy, and never a
 * lookup on the Map, which would unpack it. Other lists (MiniSearch's Maps) are copied once and kept in a cache
 * bounded by `POSTING_CACHE_BYTES` (least recently used first out). Every entry holds live documents only. When
 * documents were only added since the last search (MiniSearch's next short id and document count moved together), an
 * entry is extended in place the next time its term is read: the new documents' short ids are above every cached one,
 * so their postings go at the end, and a write costs the next search a lookup per new document and term read, not a
 * copy of every list. Anything else (a discard lowers the document count, `removeAll` replaces the term index) drops
 * the whole cache.
 */
import type { MiniSearchIndex } from './minisearch-adapter.js';
import { PackedPostings } from './packed-postings.js';
import { memoizeByObject } from '../util/memo.js';

/** Lists made from the index's postings and lists extended in place, since load: work a test can count. */
export const postingListCounters = { built: 0, extended: 0 };

/** Bytes of copied postings kept between searches (views into a snapshot cost nothing here). */
const POSTING_CACHE_BYTES = 32 << 20;

/** One term's live postings in one field, ascending short id. */
export interface PostingList {
  docs: Uint32Array;
  freqs: ArrayLike<number>;
  /** Bytes this entry copied (0 for views into a snapshot). */
  bytes: number;
  /** MiniSearch's next short id when the list was last brought up to date: it holds every live posting below it. */
  validTo: number;
  /** Whether `docs` and `freqs` view every posting of a PackedPostings (each live): an add extends them in place. */
  whole: boolean;
  /** Room to append in place: `docs` and `freqs` are views of their first `docs.length` entries (null: none yet). */
  room: { docs: Uint32Array; freqs: Uint32Array } | null;
  /**
   * An upper bound of `d + tf·(k+1)/(tf + k·(1−b+b·len/avg))` over the first `maxPartCount` postings, for the
   * parameters in `maxPartKey` and any average length up to `maxPartAvg` (bm25-pruned.ts keeps it).
   */
  maxPart: number;
  maxPartKey: string;
  maxPartAvg: number;
  maxPartCount: number;
  /** How much the bound was widened for a larger average since it was last computed exactly (1: exact). */
  maxPartSlack: number;
}

function newList(docs: Uint32Array, freqs: ArrayLike<number>, bytes: number, validTo: number): PostingList {
  return { docs, freqs, bytes, validTo, room: null, whole: false, maxPart: 0, maxPartKey: '', maxPartAvg: 0, maxPartCount: 0, maxPartSlack: 1 };
}

/** A term's lists by field id; null when its postings are not in ascending short id (never expected). */
type TermLists = Map<number, PostingList | null>;

export class PostingCache {
  private nextId = -1;
  private documentCount = -1;
  private termIndex: object | null = null;
  private byTerm = new Map<string, TermLists>();
  private byField = new Map<number, { key: string; values: Float64Array }>();
  private bytes = 0;

  constructor(private readonly index: MiniSearchIndex) {}

  /** Bytes held now: copied postings and per-document length terms. */
  get heldBytes(): number {
    let bytes = this.bytes;
    for (const { values } of this.byField.values()) bytes += values.byteLength;
    return bytes;
  }

  /**
   * Per short id, BM25's length term `k·(1−b+b·len/avg)` of `fieldId` (NaN until `lengthTerm` fills it): the part
   * of a posting's score that does not depend on the term, computed once per document rather than per posting.
   */
  lengthTerms(fieldId: number, key: string): Float64Array {
    let held = this.byField.get(fieldId);
    if (!held || held.key !== key) this.byField.set(fieldId, (held = { key, values: new Float64Array(this.nextId).fill(NaN) }));
    else if (held.values.length < this.nextId) {
      const grown = new Float64Array(Math.max(this.nextId, held.values.length * 2)).fill(NaN);
      grown.set(held.values);
      held.values = grown;
    }
    return held.values;
  }

  /**
   * Keeps the entries when documents were only added since the last call (each is extended when next read), and
   * drops everything when the live documents may otherwise have changed.
   */
  sync(): void {
    const index = this.index;
    if (index.nextId === this.nextId && index.documentCount === this.documentCount && index.termIndexIdentity === this.termIndex) return;
    const added = index.nextId - this.nextId;
    if (this.nextId >= 0 && added > 0 && index.documentCount - this.documentCount === added && index.termIndexIdentity === this.termIndex) {
      this.nextId = index.nextId;
      this.documentCount = index.documentCount;
      return;
    }
    this.nextId = index.nextId;
    this.documentCount = index.documentCount;
    this.termIndex = index.termIndexIdentity;
    this.byTerm.clear();
    this.byField.clear();
    this.bytes = 0;
  }

  /**
   * `term`'s live postings in `fieldId` (`postings` is what the index holds there), or null when they are not in
   * ascending order. Discarded documents met are taken out of the index, one occurrence per read, as the exhaustive
   * scorer does. Call `sync` first.
   */
  list(term: string, fieldId: number, postings: ReadonlyMap<number, number>): PostingList | null {
    let lists = this.byTerm.get(term);
    if (lists) {
      // Most recently used last.
      this.byTerm.delete(term);
      this.byTerm.set(term, lists);
      const cached = lists.get(fieldId);
      if (cached === null || (cached !== undefined && cached.validTo === this.nextId)) return cached;
      if (cached !== undefined) {
        const bytes = cached.bytes;
        const list = this.extend(cached, term, fieldId, postings);
        this.bytes += (list?.bytes ?? 0) - bytes;
        if (list !== cached) lists.set(fieldId, list);
        return list;
      }
    } else {
      this.byTerm.set(term, (lists = new Map()));
    }
    const list = this.build(term, fieldId, postings);
    lists.set(fieldId, list);
    this.bytes += list?.bytes ?? 0;
    return list;
  }

  /** Evicts least recently used terms until the copies fit the budget. */
  trim(budget = POSTING_CACHE_BYTES): void {
    for (const [term, lists] of this.byTerm) {
      if (this.bytes <= budget) return;
      for (const list of lists.values()) this.bytes -= list?.bytes ?? 0;
      this.byTerm.delete(term);
    }
  }

  private build(term: string, fieldId: number, postings: ReadonlyMap<number, number>): PostingList | null {
    postingListCounters.built++;
    const index = this.index;
    const documentIds = index.documentIds;
    const dirty = index.dirtCount > 0;
    const packed = postings instanceof PackedPostings ? postings.packed() : null;
    if (packed) {
      let clean = true;
      if (dirty) for (let i = 0; i < packed.docs.length && clean; i++) clean = documentIds.has(packed.docs[i] as number);
      if (clean) return ascending(packed.docs) ? { ...newList(packed.docs, packed.freqs, 0, this.nextId), whole: true } : null;
    }
    const size = postings.size;
    const docs = new Uint32Array(size);
    const freqs = new Uint32Array(size);
    const discarded: number[] = [];
    let n = 0;
    postings.forEach((freq, docId) => {
      if (dirty && !documentIds.has(docId)) discarded.push(docId);
      else {
        docs[n] = docId;
        freqs[n] = freq;
        n++;
      }
    });
    for (const docId of discarded) index.dropDiscardedOccurrence(fieldId, docId, term);
    const liveDocs = n === size ? docs : docs.slice(0, n);
    const liveFreqs = n === size ? freqs : freqs.slice(0, n);
    if (!ascending(liveDocs)) return null;
    return newList(liveDocs, liveFreqs, liveDocs.byteLength + liveFreqs.byteLength, this.nextId);
  }

  /**
   * `list` brought up to the next short id: the postings of the documents added since, appended. A packed list that
   * the entry views whole grew at its end in place (the adapter's addTerm), so the entry takes its arrays as they are
   * now: the postings before stay where they were, and the bound over them (maxPart) holds. Rebuilt instead when more documents were added
   * than the term has postings (reading the Map whole is then the cheaper way).
   */
  private extend(list: PostingList, term: string, fieldId: number, postings: ReadonlyMap<number, number>): PostingList | null {
    const from = list.validTo;
    const to = this.nextId;
    const packed = list.whole && postings instanceof PackedPostings ? postings.packed() : null;
    if (packed) {
      postingListCounters.extended++;
      list.docs = packed.docs;
      list.freqs = packed.freqs;
      list.bytes = 0;
      list.room = null;
      list.validTo = to;
      return list;
    }
    if (to - from > postings.size) return this.build(term, fieldId, postings);
    postingListCounters.extended++;
    let count = list.docs.length;
    for (let doc = from; doc < to; doc++) {
      const freq = postings.get(doc);
      if (freq === undefined) continue;
      let room = list.room;
      if (!room || room.docs.length === count) {
        // From the room filled so far in this call, else from the list as it stood.
        const source = room ?? { docs: list.docs, freqs: list.freqs };
        const capacity = Math.max(16, Math.ceil(count * 1.5));
        room = { docs: new Uint32Array(capacity), freqs: new Uint32Array(capacity) };
        room.docs.set(source.docs.subarray(0, count));
        for (let i = 0; i < count; i++) room.freqs[i] = source.freqs[i] as number;
        list.room = room;
        list.bytes = room.docs.byteLength + room.freqs.byteLength;
      }
      room.docs[count] = doc;
      room.freqs[count] = freq;
      count++;
    }
    if (list.room && count !== list.docs.length) {
      list.docs = list.room.docs.subarray(0, count);
      list.freqs = list.room.freqs.subarray(0, count);
    }
    list.validTo = to;
    return list;
  }
}

function ascending(docs: Uint32Array): boolean {
  for (let i = 1; i < docs.length; i++) if ((docs[i] as number) <= (docs[i - 1] as number)) return false;
  return true;
}

/** The cache of `index` (one per MiniSearch instance, so it lives as long as the index). */
export const postingCache: (index: MiniSearchIndex) => PostingCache = memoizeByObject((index) => new PostingCache(index));

/** First position at or after `from` whose document is at least `target` (`docs.length` if none): galloping search. */
export function seek(docs: Uint32Array, from: number, target: number): number {
  const length = docs.length;
  if (from >= length || (docs[from] as number) >= target) return from;
  let low = from;
  let step = 1;
  let high = from + 1;
  while (high < length && (docs[high] as number) < target) {
    low = high;
    step <<= 1;
    high = low + step;
  }
  if (high > length) high = length;
  low++;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((docs[mid] as number) < target) low = mid + 1;
    else high = mid;
  }
  return low;
}
