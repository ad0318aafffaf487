/**
 * MiniSearch's own BM25+ OR query, scored straight off its index into typed arrays with a bounded top-k, instead
 * of `search()`: that builds a result object per matching document (match maps, term lists) and sorts all of
 * them, which made queries of very common words or a pasted paragraph slow on a large index.
 * Same terms, same formula, same order of accumulation, same tie order (first seen first, as MiniSearch's
 * stable sort over its result map), same lazy clean-up of discarded documents: the answer is MiniSearch's
 * answer once a term's postings are clean (see below for the first read after a change), with work bounded by the
 * postings read (no allocation per posting, no sort of all matches).
 *
 * It reads MiniSearch's index through minisearch-adapter.ts (when that returns null, the caller uses `search()`).
 * Exact-term queries only: prefix and fuzzy matching go through `search()`.
 */
import { grown } from '../util/grow.js';
import { memoizeByObject } from '../util/memo.js';
import { TopK } from '../util/topk.js';
import type { MiniSearchIndex } from './minisearch-adapter.js';

export interface Bm25Params {
  k: number;
  b: number;
  d: number;
  /** Multiply a document's sum by the number of query terms it matched (MiniSearch's rule). Default true. */
  matchedTerms?: boolean;
}

/**
 * A query term with a weight multiplying its score (as a field boost does), and whether it counts toward the
 * matched-terms factor: pseudo-relevance feedback adds terms that must rank without making every memory that holds
 * one of them a "two-term match" (the factor is then max(1, counted terms matched)). A plain string is weight 1, counted.
 */
export interface WeightedTerm {
  term: string;
  weight: number;
  counts: boolean;
}

export type QueryTerm = string | WeightedTerm;

export const termText = (t: QueryTerm): string => (typeof t === 'string' ? t : t.term);
export const termWeight = (t: QueryTerm): number => (typeof t === 'string' ? 1 : t.weight);
export const termCounts = (t: QueryTerm): boolean => typeof t === 'string' || t.counts;

/** Reused between searches: per short document id, its score, this term's score and its matched-term count. */
class Scratch {
  scores = new Float64Array(0);
  termScores = new Float64Array(0);
  quality = new Uint16Array(0);
  counted = new Uint16Array(0);
  inTerm = new Uint8Array(0);

  ensure(size: number): void {
    if (size <= this.scores.length) return;
    const capacity = Math.max(size, this.scores.length * 2, 1024);
    this.scores = grown(this.scores, capacity);
    this.termScores = grown(this.termScores, capacity);
    this.quality = grown(this.quality, capacity);
    this.counted = grown(this.counted, capacity);
    this.inTerm = grown(this.inTerm, capacity);
  }
}

const scratch = new Scratch();

/**
 * Field lengths by short document id in flat arrays, filled on first read: a posting then costs no Map lookup.
 * Safe to keep: MiniSearch never reuses a short id and a document's field lengths never change under one id.
 */
class FieldLengths {
  private byField: Float64Array[] = [];

  constructor(private readonly index: MiniSearchIndex) {}

  get(docId: number, fieldId: number): number {
    let lengths = this.byField[fieldId];
    if (!lengths || docId >= lengths.length) {
      const grown = new Float64Array(Math.max(docId + 1, (lengths?.length ?? 0) * 2, 1024)).fill(-1);
      if (lengths) grown.set(lengths);
      this.byField[fieldId] = lengths = grown;
    }
    let length = lengths[docId] as number;
    if (length < 0) {
      length = (this.index.fieldLengths.get(docId) as readonly number[])[fieldId] as number;
      lengths[docId] = length;
    }
    return length;
  }
}

/** The field lengths of `index` (one per MiniSearch instance). */
export const fieldLengths: (index: MiniSearchIndex) => FieldLengths = memoizeByObject((index) => new FieldLengths(index));

/**
 * The best `limit` documents for the OR of `terms` (already processed, distinct), as MiniSearch would rank them:
 * score = Σ over terms (weight × Σ over fields of boost × BM25+), times max(1, the number of counted query terms
 * matched) (unless `bm25.matchedTerms` is false). With plain string terms that is MiniSearch's own score.
 * It reads every posting of every term: the reference that `bm25TopKPruned` (bm25-pruned.ts) must equal.
 */
export function bm25TopK(
  index: MiniSearchIndex,
  terms: readonly QueryTerm[],
  fieldBoosts: Record<string, number>,
  bm25: Bm25Params,
  limit: number,
  eligible?: (id: string) => boolean,
): { id: string; score: number }[] {
  const { k, b, d } = bm25;
  const coordinate = bm25.matchedTerms !== false;
  // Read once: nothing in a search replaces these maps (dropping an occurrence changes postings only).
  const total = index.documentCount;
  const dirty = index.dirtCount > 0;
  const documentIds = index.documentIds;
  const fieldIds = index.fieldIds;
  const averageFieldLengths = index.averageFieldLengths;
  const touched: number[] = [];
  const inThisTerm: number[] = [];
  const lengths = fieldLengths(index);
  for (const queryTerm of terms) {
    const term = termText(queryTerm);
    const data = index.termPostings(term);
    if (!data) continue;
    inThisTerm.length = 0;
    for (const field of Object.keys(fieldBoosts)) {
      const fieldBoost = fieldBoosts[field] || 1;
      const fieldId = fieldIds[field] as number;
      const postings = data.get(fieldId);
      if (!postings) continue;
      // Discarded documents still in the postings are counted out before scoring, so every document is scored with
      // the document frequency of the live ones. (MiniSearch counts them out as it meets them: the documents scored
      // before a discarded one get the old frequency, so the first search of a term after a change ranked
      // differently from later ones.) Like MiniSearch, each read takes one occurrence of them out of the index.
      const discarded: number[] = [];
      const size = postings.size; // before dropping occurrences, which may delete from it
      if (dirty) {
        postings.forEach((_, docId) => {
          if (!documentIds.has(docId)) discarded.push(docId);
        });
        for (const docId of discarded) index.dropDiscardedOccurrence(fieldId, docId, term);
      }
      const matching = size - discarded.length;
      if (matching === 0) continue;
      const avgLength = averageFieldLengths[fieldId] as number;
      const idf = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
      postings.forEach((termFreq, docId) => {
        if (discarded.length > 0 && !documentIds.has(docId)) return;
        const fieldLength = lengths.get(docId, fieldId);
        const raw = idf * (d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * fieldLength) / avgLength)));
        const weighted = fieldBoost * raw;
        if (docId >= scratch.scores.length) scratch.ensure(docId + 1);
        if (scratch.inTerm[docId] === 0) {
          scratch.inTerm[docId] = 1;
          scratch.termScores[docId] = weighted;
          inThisTerm.push(docId);
        } else {
          scratch.termScores[docId] = (scratch.termScores[docId] as number) + weighted;
        }
      });
    }
    // Fold this term's score in, in the order MiniSearch adds per-term results (× 1 is exact: plain terms unchanged).
    const weight = termWeight(queryTerm);
    const counts = termCounts(queryTerm) ? 1 : 0;
    for (const docId of inThisTerm) {
      scratch.inTerm[docId] = 0;
      const termScore = weight * (scratch.termScores[docId] as number);
      if (scratch.quality[docId] === 0) {
        touched.push(docId);
        scratch.scores[docId] = termScore;
      } else {
        scratch.scores[docId] = (scratch.scores[docId] as number) + termScore;
      }
      scratch.quality[docId] = (scratch.quality[docId] as number) + 1;
      scratch.counted[docId] = (scratch.counted[docId] as number) + counts;
    }
  }
  // Ties keep first-seen order, like MiniSearch's stable sort of its result map: TopK prefers the lower index.
  const top = new TopK(limit);
  for (let order = 0; order < touched.length; order++) {
    const docId = touched[order] as number;
    const score = (scratch.scores[docId] as number) * (coordinate ? Math.max(1, scratch.counted[docId] as number) : 1);
    scratch.quality[docId] = 0;
    scratch.counted[docId] = 0;
    if (score > top.threshold && (!eligible || eligible(documentIds.get(docId) as string))) top.push(order, score);
  }
  return top.drain().map(({ index: order, score }) => ({ id: documentIds.get(touched[order] as number) as string, score }));
}

/**
 * What a memory could score for `terms` under `bm25TopK`'s formula, and each term's idf (the largest over the
 * fields, boost included): per term the best field's `boost × idf × (d + saturation)`, summed over the terms the
 * index holds, times their number when the matched-term factor is on. `saturation` 1 is "each term once, at the field's
 * average length" (the `reference` bound); k + 1 is the limit of BM25's term-frequency part (the `ceiling`). Terms
 * no live memory contains are left out: no memory can match them, so they must not lower what a full match earns.
 * Reads the index only (no clean-up of discarded documents; they are counted out as `bm25TopK` counts them).
 */
export function bm25Bound(
  index: MiniSearchIndex,
  terms: readonly string[],
  fieldBoosts: Record<string, number>,
  bm25: Bm25Params,
): { reference: number; ceiling: number; idf: Map<string, number> } {
  const { k, d } = bm25;
  const total = index.documentCount;
  const dirty = index.dirtCount > 0;
  const documentIds = index.documentIds;
  const idfByTerm = new Map<string, number>();
  let reference = 0;
  let ceiling = 0;
  for (const term of terms) {
    const data = index.termPostings(term);
    if (!data) continue;
    let best = 0;
    let bestIdf = 0;
    for (const field of Object.keys(fieldBoosts)) {
      const postings = data.get(index.fieldIds[field] as number);
      if (!postings) continue;
      let matching = postings.size;
      if (dirty) postings.forEach((_, docId) => void (documentIds.has(docId) ? 0 : matching--));
      if (matching <= 0) continue;
      const idf = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
      const weighted = (fieldBoosts[field] || 1) * idf;
      if (weighted > best) best = weighted;
      if (idf > bestIdf) bestIdf = idf;
    }
    if (best === 0) continue;
    idfByTerm.set(term, bestIdf);
    reference += best * (d + 1);
    ceiling += best * (d + k + 1);
  }
  const matched = bm25.matchedTerms === false ? 1 : idfByTerm.size;
  return { reference: reference * matched, ceiling: ceiling * matched, idf: idfByTerm };
}
