/**
 * `bm25TopK`'s answer (same ids, same scores to the bit, same order, ties included) without scoring every posting
 * of common terms, and without reading all of them where that pays: MaxScore dynamic pruning, document at a time
 * in windows of short ids.
 *
 * The score is (Σ over matched terms of weight × the term's score) × max(1, number of counted terms matched), or the
 * sum alone when `bm25.matchedTerms` is false (weights and counting: `WeightedTerm`). It grows with each term's
 * score and with the set of terms matched, so per-list upper bounds (the list's largest posting score, times its
 * term's weight) still bound it: a document that matched lists with bounds summing to σ, c of them counted, and can
 * still match the terms in R, scores at most (σ + Σ_R ub)·max(1, c + |R counted|). Terms are sorted by upper bound; the longest prefix whose (Σ ub)·(its size) is
 * below the current k-th score is "non-essential": a document matching only those cannot enter, so candidates come
 * from the other lists. In each window the essential lists are read (document ids only, each noted with its list's
 * bound); the non-essential ones are read too when they hold few postings there, else probed (galloping search)
 * for a candidate only while its bound can still reach the k-th score. Only documents whose bound reaches it are
 * scored, exactly.
 *
 * Exactness: each matched list's score is computed with the exhaustive scorer's own operations and summed in its
 * order (fields within a term, terms in query order), so scores are equal bit for bit; ties are broken by the
 * exhaustive scorer's first-seen order (first query term matched, then the field it matched first, then short id,
 * as postings are in ascending short id). Bounds are inflated by a relative 1e-9, so rounding never prunes a
 * document that belongs in the answer. Lists come from posting-lists.ts (views of a snapshot's arrays, or copies).
 */
import { bm25TopK, fieldLengths, termCounts, termText, termWeight, type Bm25Params, type QueryTerm } from './bm25-topk.js';
import type { MiniSearchIndex } from './minisearch-adapter.js';
import { postingCache, seek, type PostingList } from './posting-lists.js';
import { TopK } from '../util/topk.js';

/** Relative margin on every bound against floating-point rounding. */
const INFLATE = 1 + 1e-9;
/** Window cells (short ids × query lists) of per-list scratch. */
const WINDOW_CELLS = 1 << 17;
/** Short ids per window: the first, and the most (the window bounds the scratch and how often the pruning bound is renewed). */
const FIRST_WINDOW = 256;
const MAX_WINDOW = 4096;
/** Non-essential lists are read rather than probed in a window when they hold at most this many postings per candidate. */
const SCAN_RATIO = 2;
/** Queries whose terms hold at most this many postings in all are answered by the exhaustive scorer. */
const MIN_POSTINGS = 4096;
/**
 * Up to this many postings, every one is read off the typed lists, term at a time (`termAtATime`), with no pruning
 * set-up: below it MaxScore's windows and probes cost more than the postings they skip (the feedback queries of 3.4k
 * abstracts: 13k postings, CPU 0.65 ms read whole, 1.2 ms pruned); the two cost about the same at 16–22k postings,
 * on long texts and at 100k short memories alike (measured in issue 45).
 */
const DENSE_POSTINGS = 20_000;
const TWO_32 = 4294967296;
/** Running totals over all searches, for tests and measurements: postings read whole, probes, documents scored exactly. */
export const pruningCounters = { postingsRead: 0, probes: 0, documentsScored: 0 };

/** One term's postings in one field, with what scoring them needs. */
interface Cursor {
  docs: Uint32Array;
  freqs: ArrayLike<number>;
  fieldId: number;
  /** Position of the field in `fieldBoosts`' key order (the exhaustive scorer's field order). */
  fieldOrder: number;
  /** The term's position among the query's indexed terms. */
  term: number;
  boost: number;
  idf: number;
  avgLength: number;
  /** `PostingCache.lengthTerms` of the field. */
  lengthTerms: Float64Array;
  /** Largest score a posting of this list can add (inflated). */
  bound: number;
  at: number;
  /** Where the list stood when the current window was read (if read whole). */
  windowStart: number;
}

/** Per window: per short id, and per short id and list, reused between searches. */
class WindowScratch {
  docStamp = new Int32Array(0);
  bound = new Float64Array(0);
  matched = new Uint16Array(0);
  touched = new Int32Array(0);
  /** Per short id in the window, the last list found holding it; `chain` (by list, then short id) the one before, or -1. */
  head = new Int32Array(0);
  chain = new Int32Array(0);
  /** The lists holding one document, in list order. */
  found = new Int32Array(0);
  stamp = 0;

  ensure(window: number, lists: number): void {
    const cells = window * lists;
    if (this.docStamp.length < window) {
      this.docStamp = new Int32Array(window);
      this.bound = new Float64Array(window);
      this.matched = new Uint16Array(window);
      this.touched = new Int32Array(window);
      this.head = new Int32Array(window);
    }
    if (this.chain.length < cells) {
      this.chain = new Int32Array(cells);
    }
    if (this.found.length < lists) this.found = new Int32Array(lists);
  }

  /** A stamp no cell holds yet. */
  next(): number {
    if (this.stamp >= 0x7ffffff0) {
      this.stamp = 0;
      this.docStamp.fill(0);
    }
    return ++this.stamp;
  }
}

const scratch = new WindowScratch();

/** Whether (score, key) ranks below (otherScore, otherKey): a lower score, or the same and seen later. */
function ranksBelow(score: number, key: number, otherScore: number, otherKey: number): boolean {
  return score < otherScore || (score === otherScore && key > otherKey);
}

/** Bounded heap ordered as the exhaustive scorer's TopK: higher score first, then lower first-seen key. */
class Best {
  readonly scores: Float64Array;
  readonly keys: Float64Array;
  readonly docs: Int32Array;
  size = 0;

  constructor(readonly capacity: number) {
    this.scores = new Float64Array(capacity);
    this.keys = new Float64Array(capacity);
    this.docs = new Int32Array(capacity);
  }

  get threshold(): number {
    return this.size < this.capacity ? -Infinity : (this.scores[0] as number);
  }

  /** Whether (score, key) would take a place. */
  admits(score: number, key: number): boolean {
    if (this.size < this.capacity) return score === score; // NaN never does
    const worst = this.scores[0] as number;
    return score > worst || (score === worst && key < (this.keys[0] as number));
  }

  push(doc: number, score: number, key: number): void {
    let slot: number;
    if (this.size < this.capacity) {
      slot = this.size++;
      while (slot > 0) {
        const parent = (slot - 1) >> 1;
        if (!ranksBelow(score, key, this.scores[parent] as number, this.keys[parent] as number)) break;
        this.move(parent, slot);
        slot = parent;
      }
    } else {
      // Replaces the worst (the root) and sinks.
      slot = 0;
      for (;;) {
        const left = 2 * slot + 1;
        if (left >= this.size) break;
        const right = left + 1;
        const worse =
          right < this.size && ranksBelow(this.scores[right] as number, this.keys[right] as number, this.scores[left] as number, this.keys[left] as number)
            ? right
            : left;
        if (!ranksBelow(this.scores[worse] as number, this.keys[worse] as number, score, key)) break;
        this.move(worse, slot);
        slot = worse;
      }
    }
    this.scores[slot] = score;
    this.keys[slot] = key;
    this.docs[slot] = doc;
  }

  private move(from: number, to: number): void {
    this.scores[to] = this.scores[from] as number;
    this.keys[to] = this.keys[from] as number;
    this.docs[to] = this.docs[from] as number;
  }

  /** Best first. */
  sorted(): { doc: number; score: number }[] {
    const order = Array.from({ length: this.size }, (_, i) => i);
    order.sort((a, b) => (this.scores[b] as number) - (this.scores[a] as number) || (this.keys[a] as number) - (this.keys[b] as number));
    return order.map((i) => ({ doc: this.docs[i] as number, score: this.scores[i] as number }));
  }
}

const safe = (x: number) => Number.isFinite(x);

/**
 * The best `limit` documents for the OR of `terms`, exactly as `bm25TopK` returns them (same arguments). Falls back
 * to `bm25TopK` when a bound would not hold (a non-positive boost or term weight, parameters outside BM25's range) or
 * a term's postings are not in ascending short id.
 */
export function bm25TopKPruned(
  index: MiniSearchIndex,
  terms: readonly QueryTerm[],
  fieldBoosts: Record<string, number>,
  bm25: Bm25Params,
  limit: number,
  eligible?: (id: string) => boolean,
  /**
   * For tests and measurements: `window` short ids per window (default from the list count; small crosses many
   * windows), `maxScore` false reads every list in full instead of probing the non-essential ones (default true),
   * `scanRatio` replaces `SCAN_RATIO` (0: always probe), `minPostings` replaces `MIN_POSTINGS` (-1: never the
   * exhaustive scorer), `dense` true reads every posting term at a time, false never (default: up to `DENSE_POSTINGS`).
   */
  tuning: { window?: number; maxScore?: boolean; scanRatio?: number; minPostings?: number; dense?: boolean } = {},
): { id: string; score: number }[] {
  const { k, b, d } = bm25;
  const fields = Object.keys(fieldBoosts);
  const boosts = fields.map((field) => fieldBoosts[field] || 1);
  const exhaustive = () => bm25TopK(index, terms, fieldBoosts, bm25, limit, eligible);
  if (!(limit >= 1) || !safe(k) || !safe(b) || !safe(d) || k < 0 || b < 0 || b > 1 || d < 0 || fields.length > 255) return exhaustive();
  if (boosts.some((boost) => !safe(boost) || boost <= 0)) return exhaustive();
  if (terms.some((t) => { const w = termWeight(t); return !safe(w) || w <= 0; })) return exhaustive();

  // Few postings in all: reading them all costs less than setting up the pruning.
  let postingCount = 0;
  for (const term of terms) {
    const data = index.termPostings(termText(term));
    if (data) for (const field of fields) postingCount += data.get(index.fieldIds[field] as number)?.size ?? 0;
  }
  if (postingCount <= (tuning.minPostings ?? MIN_POSTINGS)) return exhaustive();

  const cache = postingCache(index);
  cache.sync();
  const total = index.documentCount;
  const averageFieldLengths = index.averageFieldLengths;
  const lengths = fieldLengths(index);
  const partKey = `${k} ${b} ${d}`;
  // Every list (term, field) in the exhaustive scorer's order: query order, then field order. Terms own a run of lists.
  const lists: Cursor[] = [];
  const termFirst: number[] = [];
  const termBound: number[] = [];
  /** Per indexed term: its weight, and 1 when it counts toward the matched-terms factor. */
  const weightOf: number[] = [];
  const countOf: number[] = [];
  for (const queryTerm of terms) {
    const term = termText(queryTerm);
    const weight = termWeight(queryTerm);
    const data = index.termPostings(term);
    if (!data) continue;
    const first = lists.length;
    let bound = 0;
    for (let f = 0; f < fields.length; f++) {
      const fieldId = index.fieldIds[fields[f] as string] as number;
      const postings = data.get(fieldId);
      if (!postings) continue;
      const list = cache.list(term, fieldId, postings);
      if (!list) return exhaustive();
      if (list.docs.length === 0) continue;
      const matching = list.docs.length;
      const avgLength = averageFieldLengths[fieldId] as number;
      const idf = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
      boundParts(list, partKey, k, b, d, avgLength, (doc) => lengths.get(doc, fieldId));
      const boost = boosts[f] as number;
      const listBound = weight * (boost * (idf * list.maxPart)) * INFLATE;
      bound += listBound;
      const lengthTerms = cache.lengthTerms(fieldId, `${partKey} ${avgLength}`);
      lists.push({ docs: list.docs, freqs: list.freqs, fieldId, fieldOrder: f, term: termFirst.length, boost, idf, avgLength, lengthTerms, bound: listBound, at: 0, windowStart: 0 });
    }
    if (lists.length === first) continue;
    termFirst.push(first);
    termBound.push(bound * INFLATE);
    weightOf.push(weight);
    countOf.push(termCounts(queryTerm) ? 1 : 0);
  }
  cache.trim();
  const termCount = termFirst.length;
  const listCount = lists.length;
  termFirst.push(listCount);
  if (termCount === 0 || total === 0) return [];
  if (termCount > 0xffff) return exhaustive();

  // Few postings: read them all, term at a time as the exhaustive scorer does, off the typed lists (no pruning set-up).
  if (tuning.dense ?? postingCount <= DENSE_POSTINGS) {
    const coordinate = bm25.matchedTerms !== false;
    return termAtATime(lists, termFirst, weightOf, countOf, bm25, lengths, coordinate, index.nextId, limit, index.documentIds, eligible);
  }

  // Terms by ascending upper bound; prefix[j] = Σ of the j smallest bounds, counted[j] how many of them count.
  const byBound = Array.from({ length: termCount }, (_, t) => t).sort((x, y) => (termBound[x] as number) - (termBound[y] as number));
  const prefix = new Float64Array(termCount + 1);
  const countedPrefix = new Int32Array(termCount + 1);
  for (let j = 0; j < termCount; j++) {
    prefix[j + 1] = (prefix[j] as number) + (termBound[byBound[j] as number] as number);
    countedPrefix[j + 1] = (countedPrefix[j] as number) + (countOf[byBound[j] as number] as number);
  }

  const window =
    tuning.window !== undefined && tuning.window >= 1
      ? Math.floor(tuning.window)
      : Math.min(MAX_WINDOW, Math.max(FIRST_WINDOW, Math.floor(WINDOW_CELLS / listCount)));
  // Small first windows: nothing is pruned until the heap is full, so the first window is read whole.
  let span = Math.min(FIRST_WINDOW, window);
  scratch.ensure(window, listCount);
  const { docStamp, bound: docBound, matched, touched, head, chain, found } = scratch;
  // Each term's place in `byBound`: places from `nonEssential` on were read whole in the window.
  const termRank = new Int32Array(termCount);
  for (let j = 0; j < termCount; j++) termRank[byBound[j] as number] = j;
  const best = new Best(Math.min(Math.floor(limit), total));
  const documentIds = index.documentIds;
  const fieldCount = fields.length;
  const maxScore = tuning.maxScore ?? true;
  // The matched-term factor for c counted terms: max(1, c), or 1 without it. Non-decreasing in c, so the bounds hold.
  const coordinate = bm25.matchedTerms !== false;
  const factor = (c: number) => (coordinate && c > 1 ? c : 1);
  const scanRatio = tuning.scanRatio ?? SCAN_RATIO;
  let theta = -Infinity;
  let nonEssential = 0;

  /** The score at `doc` of list `c` at posting `at`, with the exhaustive scorer's operations (the length term is its own subexpression). */
  const weigh = (c: Cursor, at: number, doc: number): number => {
    const termFreq = c.freqs[at] as number;
    let lengthTerm = c.lengthTerms[doc] as number;
    if (lengthTerm !== lengthTerm) c.lengthTerms[doc] = lengthTerm = k * (1 - b + (b * lengths.get(doc, c.fieldId)) / c.avgLength);
    const raw = c.idf * (d + (termFreq * (k + 1)) / (termFreq + lengthTerm));
    return c.boost * raw;
  };

  for (;;) {
    if (maxScore) while (nonEssential < termCount && (prefix[nonEssential + 1] as number) * factor(countedPrefix[nonEssential + 1] as number) * INFLATE < theta) nonEssential++;
    if (nonEssential === termCount) break;
    // The window starts at the smallest short id left in an essential list.
    let low = Infinity;
    for (let j = nonEssential; j < termCount; j++) {
      const t = byBound[j] as number;
      for (let l = termFirst[t] as number; l < (termFirst[t + 1] as number); l++) {
        const c = lists[l] as Cursor;
        if (c.at < c.docs.length && (c.docs[c.at] as number) < low) low = c.docs[c.at] as number;
      }
    }
    if (low === Infinity) break;
    const high = low + span;
    span = Math.min(window, span * 2);
    const stamp = scratch.next();
    let touchedCount = 0;

    /** Reads every posting in the window of the terms byBound[from, to), noting each list's bound (no scoring yet). */
    const read = (from: number, to: number): void => {
      for (let j = from; j < to; j++) {
        const t = byBound[j] as number;
        for (let l = termFirst[t] as number; l < (termFirst[t + 1] as number); l++) {
          const c = lists[l] as Cursor;
          const docs = c.docs;
          const listBound = c.bound;
          const counts = countOf[c.term] as number;
          let at = seek(docs, c.at, low);
          c.windowStart = at;
          for (; at < docs.length; at++) {
            const doc = docs[at] as number;
            if (doc >= high) break;
            const offset = doc - low;
            if (docStamp[offset] !== stamp) {
              docStamp[offset] = stamp;
              docBound[offset] = listBound;
              matched[offset] = counts;
              touched[touchedCount++] = offset;
              chain[l * window + offset] = -1;
            } else {
              docBound[offset] = (docBound[offset] as number) + listBound;
              matched[offset] = (matched[offset] as number) + counts;
              chain[l * window + offset] = head[offset] as number;
            }
            head[offset] = l;
          }
          pruningCounters.postingsRead += at - c.windowStart;
          c.at = at;
        }
      }
    };
    // Essential lists first. Then the non-essential ones too when they hold few postings here against the
    // candidates found: probing costs more per document than reading a posting. Terms byBound[0, probed) are
    // probed in this window.
    read(nonEssential, termCount);
    let probed = nonEssential;
    if (nonEssential > 0) {
      let waiting = 0;
      for (let j = 0; j < nonEssential; j++) {
        const t = byBound[j] as number;
        for (let l = termFirst[t] as number; l < (termFirst[t + 1] as number); l++) {
          const c = lists[l] as Cursor;
          c.at = seek(c.docs, c.at, low);
          waiting += seek(c.docs, c.at, high) - c.at;
        }
      }
      if (waiting <= scanRatio * touchedCount) {
        read(0, nonEssential);
        probed = 0;
      }
    }

    // Candidates in ascending short id, so non-essential cursors only move forward. A document's bound counts the
    // lists it matched (at least its terms), each at its list's bound; its count, the counted lists (at least the counted terms).
    // (Sorted when few, else found by a sweep of the window, which costs less than sorting many.)
    const sweep = touchedCount * 16 > high - low;
    if (!sweep) touched.subarray(0, touchedCount).sort();
    const end = sweep ? high - low : touchedCount;
    candidates: for (let i = 0; i < end; i++) {
      const offset = sweep ? i : (touched[i] as number);
      if (sweep && docStamp[offset] !== stamp) continue;
      const doc = low + offset;
      let upper = docBound[offset] as number;
      let count = matched[offset] as number;
      if ((upper + (prefix[probed] as number)) * factor(count + (countedPrefix[probed] as number)) * INFLATE < theta) continue;
      for (let j = probed - 1; j >= 0; j--) {
        const t = byBound[j] as number;
        pruningCounters.probes++;
        for (let l = termFirst[t] as number; l < (termFirst[t + 1] as number); l++) {
          const c = lists[l] as Cursor;
          c.at = seek(c.docs, c.at, doc);
          if (c.at >= c.docs.length || c.docs[c.at] !== doc) continue;
          chain[l * window + offset] = head[offset] as number;
          head[offset] = l;
          upper += c.bound;
          count += countOf[c.term] as number;
        }
        if ((upper + (prefix[j] as number)) * factor(count + (countedPrefix[j] as number)) * INFLATE < theta) continue candidates;
      }
      pruningCounters.documentsScored++;
      // Every matched list is known: the exact score, summed as the exhaustive scorer sums it (fields within a
      // term, then weight × that in query order), times the counted terms matched.
      let foundCount = 0;
      for (let l = head[offset] as number; l >= 0; l = chain[l * window + offset] as number) {
        // Insertion into list order (a document is in few of the query's lists).
        let at = foundCount++;
        while (at > 0 && (found[at - 1] as number) > l) {
          found[at] = found[at - 1] as number;
          at--;
        }
        found[at] = l;
      }
      let sum = 0;
      let terms = 0;
      let first = -1;
      let termScore = 0;
      let term = -1;
      for (let f = 0; f < foundCount; f++) {
        const l = found[f] as number;
        const c = lists[l] as Cursor;
        // Lists read whole in the window were read to its end; a probed one stands on the document.
        const at = probed <= (termRank[c.term] as number) ? seek(c.docs, c.windowStart, doc) : c.at;
        const w = weigh(c, at, doc);
        if (c.term === term) termScore += w;
        else {
          if (term >= 0) sum += (weightOf[term] as number) * termScore;
          else first = c.term * fieldCount + c.fieldOrder;
          term = c.term;
          termScore = w;
          terms += countOf[c.term] as number;
        }
      }
      sum += (weightOf[term] as number) * termScore;
      const score = coordinate ? sum * Math.max(1, terms) : sum;
      const key = first * TWO_32 + doc;
      if (!best.admits(score, key)) continue;
      if (eligible && !eligible(documentIds.get(doc) as string)) continue;
      best.push(doc, score, key);
      theta = best.threshold;
    }
  }
  return best.sorted().map(({ doc, score }) => ({ id: documentIds.get(doc) as string, score }));
}

/** Per short id: the search's and the term's stamps, sums and counted terms (`termAtATime`), reused between searches. */
class DenseScratch {
  stamp = new Int32Array(0);
  termStamp = new Int32Array(0);
  score = new Float64Array(0);
  termScore = new Float64Array(0);
  counted = new Uint16Array(0);
  private last = 0;

  ensure(size: number): void {
    if (this.stamp.length >= size) return;
    const capacity = Math.max(size, this.stamp.length * 2, 1024);
    this.stamp = new Int32Array(capacity);
    this.termStamp = new Int32Array(capacity);
    this.score = new Float64Array(capacity);
    this.termScore = new Float64Array(capacity);
    this.counted = new Uint16Array(capacity);
    this.last = 0;
  }

  /** A stamp no cell holds yet. */
  next(): number {
    if (this.last >= 0x7ffffff0) {
      this.last = 0;
      this.stamp.fill(0);
      this.termStamp.fill(0);
    }
    return ++this.last;
  }
}

const dense = new DenseScratch();

/**
 * `bm25TopK` itself over the typed lists: every posting read, term by term in query order, fields in order within a
 * term, each document's sums made with the same operations in the same order, and ties to the first seen (the
 * exhaustive scorer's order: lists hold ascending short ids, as its postings do).
 */
function termAtATime(
  lists: readonly Cursor[],
  termFirst: readonly number[],
  weightOf: readonly number[],
  countOf: readonly number[],
  { k, b, d }: Bm25Params,
  lengths: ReturnType<typeof fieldLengths>,
  coordinate: boolean,
  size: number,
  limit: number,
  documentIds: MiniSearchIndex['documentIds'],
  eligible: ((id: string) => boolean) | undefined,
): { id: string; score: number }[] {
  dense.ensure(size);
  const { stamp, termStamp, score, termScore, counted } = dense;
  const search = dense.next();
  const touched: number[] = [];
  const inTerm: number[] = [];
  for (let t = 0; t + 1 < termFirst.length; t++) {
    const current = dense.next();
    inTerm.length = 0;
    for (let l = termFirst[t] as number; l < (termFirst[t + 1] as number); l++) {
      const c = lists[l] as Cursor;
      const { docs, freqs, lengthTerms, idf, boost, avgLength, fieldId } = c;
      for (let at = 0; at < docs.length; at++) {
        const doc = docs[at] as number;
        // `weigh`'s operations, inline (a closure argument here cost V8 its inlining: 20 ns a posting).
        const termFreq = freqs[at] as number;
        let lengthTerm = lengthTerms[doc] as number;
        if (lengthTerm !== lengthTerm) lengthTerms[doc] = lengthTerm = k * (1 - b + (b * lengths.get(doc, fieldId)) / avgLength);
        const w = boost * (idf * (d + (termFreq * (k + 1)) / (termFreq + lengthTerm)));
        if (termStamp[doc] !== current) {
          termStamp[doc] = current;
          termScore[doc] = w;
          inTerm.push(doc);
        } else termScore[doc] = (termScore[doc] as number) + w;
      }
    }
    const weight = weightOf[t] as number;
    const counts = countOf[t] as number;
    for (const doc of inTerm) {
      const value = weight * (termScore[doc] as number);
      if (stamp[doc] !== search) {
        stamp[doc] = search;
        score[doc] = value;
        counted[doc] = counts;
        touched.push(doc);
      } else {
        score[doc] = (score[doc] as number) + value;
        counted[doc] = (counted[doc] as number) + counts;
      }
    }
  }
  const top = new TopK(limit);
  for (let order = 0; order < touched.length; order++) {
    const doc = touched[order] as number;
    const sum = score[doc] as number;
    const value = coordinate ? sum * Math.max(1, counted[doc] as number) : sum;
    if (value > top.threshold && (!eligible || eligible(documentIds.get(doc) as string))) top.push(order, value);
  }
  return top.drain().map(({ index: order, score: value }) => ({ id: documentIds.get(touched[order] as number) as string, score: value }));
}

/** Widening the bound for a larger average beyond this factor (since it was exact) recomputes it exactly. */
const MAX_SLACK = 1.02;

/**
 * Keeps `list.maxPart` an upper bound of every posting's part at `avgLength` (valid for any average up to
 * `list.maxPartAvg`). A part grows with the average, by at most its ratio: `tf·(k+1)/(tf + k(1−b) + k·b·len/avg)`
 * is multiplied by less than `avg′/avg` when the average rises to `avg′`. So after writes the bound is widened by
 * that ratio and the postings appended since are folded in, rather than every posting read again; it is computed
 * exactly when the parameters change or the widening passes MAX_SLACK. Only the pruning depends on it: a looser bound
 * prunes less, the answer is the same.
 */
function boundParts(list: PostingList, key: string, k: number, b: number, d: number, avgLength: number, lengthOf: (doc: number) => number): void {
  let from = list.maxPartCount;
  if (list.maxPartKey === key && avgLength > list.maxPartAvg) {
    const ratio = avgLength / list.maxPartAvg;
    list.maxPart = d + (list.maxPart - d) * ratio;
    list.maxPartSlack *= ratio;
    list.maxPartAvg = avgLength;
  }
  if (list.maxPartKey !== key || !(list.maxPartSlack <= MAX_SLACK)) {
    list.maxPart = 0;
    list.maxPartKey = key;
    list.maxPartAvg = avgLength;
    list.maxPartSlack = 1;
    from = 0;
  }
  const { docs, freqs } = list;
  if (from >= docs.length) return;
  // Folded in at the bound's own average (not below the current one), so the bound stays valid for it.
  const avg = list.maxPartAvg;
  let max = list.maxPart;
  for (let i = from; i < docs.length; i++) {
    const termFreq = freqs[i] as number;
    const part = d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * lengthOf(docs[i] as number)) / avg));
    if (part > max || part !== part) max = part;
  }
  list.maxPart = max;
  list.maxPartCount = docs.length;
}
