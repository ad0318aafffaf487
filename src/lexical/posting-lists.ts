/**
 * Postings as sorted typed arrays, for the pruned scorer (bm25-pruned.ts), which needs to walk several lists in
 * step and to jump into a list (galloping search) rather than read it whole.
 *
 * A list restored from a snapshot (`PackedPostings`) is served as views of its own arrays: no copy, and never a
 * lookup on the Map, which would unpack it. Other lists (MiniSearch's Maps) are copied once and kept in a cache
 * bounded by `POSTING_CACHE_BYTES` (least recently used first out). Every entry holds live documents only, so the
 * whole cache is dropped when the set of live documents may have changed: an add moves MiniSearch's next short id,
 * a discard lowers its document count, `removeAll` replaces its term index.
 */
import type { MiniSearchIndex } from './minisearch-adapter.js';
import { PackedPostings } from './packed-postings.js';
import { memoizeByObject } from '../util/memo.js';

/** Bytes of copied postings kept between searches (views into a snapshot cost nothing here). */
const POSTING_CACHE_BYTES = 32 << 20;

/** One term's live postings in one field, ascending short id. */
export interface PostingList {
  readonly docs: Uint32Array;
  readonly freqs: ArrayLike<number>;
  /** Bytes this entry copied (0 for views into a snapshot). */
  readonly bytes: number;
  /** Largest `d + tf·(k+1)/(tf + k·(1−b+b·len/avg))` over the list, for the parameters in `maxPartKey`. */
  maxPart: number;
  maxPartKey: string;
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
    return held.values;
  }

  /** Drops everything when the live documents may have changed since the last call. */
  sync(): void {
    const index = this.index;
    if (index.nextId === this.nextId && index.documentCount === this.documentCount && index.termIndexIdentity === this.termIndex) return;
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
      if (cached !== undefined) return cached;
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
    const index = this.index;
    const documentIds = index.documentIds;
    const dirty = index.dirtCount > 0;
    const packed = postings instanceof PackedPostings ? postings.packed() : null;
    if (packed) {
      let clean = true;
      if (dirty) for (let i = 0; i < packed.docs.length && clean; i++) clean = documentIds.has(packed.docs[i] as number);
      if (clean) return ascending(packed.docs) ? { docs: packed.docs, freqs: packed.freqs, bytes: 0, maxPart: 0, maxPartKey: '' } : null;
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
    return { docs: liveDocs, freqs: liveFreqs, bytes: liveDocs.byteLength + liveFreqs.byteLength, maxPart: 0, maxPartKey: '' };
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
