/**
 * The lexical leg: BM25 over each memory's text and tags, with MiniSearch.
 *
 * Queries never reach MiniSearch as syntax: they are cut to a bounded length, stripped of control characters
 * and lone surrogates, tokenized and term-processed exactly like the indexed text, de-duplicated and capped,
 * then searched as a plain OR of terms. So no character sequence (operators, quotes, emoji, a pasted
 * paragraph) can throw, and a very long query does bounded work.
 */
import MiniSearch from 'minisearch';
import { memoizeByText } from '../util/memo.js';
import { bm25TopK, readMiniSearch, type MiniSearchInternals } from './bm25-topk.js';
import type { DecodedSnapshot, LexicalState, TermData } from './snapshot.js';
import type { MemoryRecord } from '../types.js';
import { stemEnglish } from './stem.js';
import { termTree, type TermTree } from './term-tree.js';
import { ENGLISH_STOP_WORDS } from './stopwords.js';

export interface LexicalOptions {
  /** Terms dropped at index and query time. Default: `ENGLISH_STOP_WORDS`; `false` keeps every term. */
  stopWords?: Iterable<string> | false;
  /**
   * Reduces each lowercased term that survived the stop words to its stem, at index and query time alike, so
   * "painted" finds "painting". Default: `stemEnglish` (Porter2); `false` indexes words as written. On LoCoMo
   * dev it took BM25's recall@10 from 0.595 to 0.635 (docs/quality.md).
   */
  stem?: ((term: string) => string) | false;
  /**
   * Applied to each term after stemming. Return a string, several strings, or a falsy value to drop the
   * term. Must be pure, like `stem`: results are memoised per token. Default: identity.
   */
  processTerm?: (term: string) => string | string[] | null | undefined | false;
  /** Field weights. Default `{ text: 1, tags: 1 }`. */
  fieldBoost?: { text?: number; tags?: number };
  /** MiniSearch BM25+ parameters. Default `{ k: 1.2, b: 0.7, d: 0.5 }` (MiniSearch's own). */
  bm25?: { k: number; b: number; d: number };
  /** Prefix matching of query terms. Default false. */
  prefix?: boolean;
  /** MiniSearch fuzziness (fraction of term length) or false. Default false. */
  fuzzy?: number | false;
  /** Distinct query terms kept, in order of appearance. Default 64. */
  maxQueryTerms?: number;
  /** Query characters read. Default 10,000. */
  maxQueryChars?: number;
}

const SPACE_OR_PUNCTUATION = /[\n\r\p{Z}\p{P}]+/u;
// Control characters, lone surrogates and other unassigned/format code points carry no searchable meaning.
const UNSAFE = /[\p{Cc}\p{Cs}\p{Cn}]/gu;
// Query terms are joined with a separator that sanitised text can never contain.
const TERM_SEPARATOR = '\u0000';

interface LexicalDoc {
  id: string;
  text: string;
  tags: string;
}

export class LexicalIndex {
  private search_: MiniSearch<LexicalDoc>;
  private readonly termOf: (term: string) => string[];
  private readonly options: Required<Omit<LexicalOptions, 'stopWords' | 'stem' | 'processTerm' | 'fieldBoost'>> & {
    fieldBoost: { text: number; tags: number };
  };
  /** Identifies the index-time settings: a snapshot made under other settings must not be loaded. */
  readonly settingsKey: string;

  constructor(options: LexicalOptions = {}) {
    const stopWords = options.stopWords === false ? new Set<string>() : new Set(options.stopWords ?? ENGLISH_STOP_WORDS);
    const custom = options.processTerm;
    const stem = options.stem === undefined ? stemEnglish : options.stem;
    // Memoised per raw token (callers never mutate the arrays): stemming was a third of the cost of indexing.
    this.termOf = memoizeByText((raw) => {
      const lower = raw.toLowerCase();
      if (!lower || stopWords.has(lower)) return [];
      const term = stem ? stem(lower) : lower;
      if (!term) return [];
      if (!custom) return [term];
      const out = custom(term);
      return (Array.isArray(out) ? out : [out]).filter((t): t is string => typeof t === 'string' && t.length > 0);
    }, 50_000);
    this.options = {
      fieldBoost: { text: 1, tags: 1, ...options.fieldBoost },
      bm25: options.bm25 ?? { k: 1.2, b: 0.7, d: 0.5 },
      prefix: options.prefix ?? false,
      fuzzy: options.fuzzy ?? false,
      maxQueryTerms: options.maxQueryTerms ?? 64,
      maxQueryChars: options.maxQueryChars ?? 10_000,
    };
    const stemKey = stem === stemEnglish ? 'porter2' : stem ? String(stem) : null;
    this.settingsKey = JSON.stringify({ v: 1, stop: [...stopWords].sort(), stem: stemKey, term: custom ? String(custom) : null });
    this.search_ = new MiniSearch<LexicalDoc>(this.miniSearchOptions());
  }

  /** The index's state, for a snapshot (snapshot.ts). Throws when this MiniSearch does not look like version 7. */
  state(): LexicalState {
    const m = internals(this.search_);
    return {
      documentCount: m._documentCount, nextId: m._nextId, dirtCount: m._dirtCount, fieldIds: m._fieldIds,
      avgFieldLength: m._avgFieldLength, documentIds: m._documentIds as Map<number, string>, fieldLength: m._fieldLength, terms: m._index,
    };
  }

  /** Replaces the index with a state read from a snapshot made under the same settings (it takes the maps over). */
  restore(state: DecodedSnapshot['state']): void {
    const search = new MiniSearch<LexicalDoc>(this.miniSearchOptions());
    const m = internals(search);
    if (JSON.stringify(m._fieldIds) !== JSON.stringify(state.fieldIds)) throw new Error('lexical snapshot: other fields');
    m._documentCount = state.documentCount;
    m._nextId = state.nextId;
    m._dirtCount = state.dirtCount;
    m._avgFieldLength = state.avgFieldLength;
    m._documentIds = state.documentIds;
    m._fieldLength = state.fieldLength;
    for (const [shortId, id] of state.documentIds) m._idToShortId.set(id, shortId);
    if (m._idToShortId.size !== state.documentIds.size) throw new Error('lexical snapshot: one id twice');
    m._index = new m._index.constructor(termTree(state.terms));
    this.search_ = search;
  }

  private miniSearchOptions() {
    return {
      fields: ['text', 'tags'],
      storeFields: [],
      tokenize: (text: string) => text.replace(UNSAFE, ' ').split(SPACE_OR_PUNCTUATION),
      processTerm: (term: string) => {
        const terms = this.termOf(term);
        return terms.length === 0 ? null : terms.length === 1 ? terms[0] : terms;
      },
    };
  }

  get size(): number {
    return this.search_.documentCount;
  }

  has(id: string): boolean {
    return this.search_.has(id);
  }

  /** Adds or replaces records. */
  addAll(records: readonly MemoryRecord[]): void {
    for (const record of records) this.remove(record.id);
    this.search_.addAll(records.map(toDoc));
  }

  remove(id: string): void {
    if (this.search_.has(id)) this.search_.discard(id);
  }

  clear(): void {
    // A new index rather than removeAll(), which keeps MiniSearch's count of discarded documents.
    this.search_ = new MiniSearch<LexicalDoc>(this.miniSearchOptions());
  }

  /** The terms a query searches for: sanitised, processed like indexed text, distinct, capped. */
  queryTerms(query: string): string[] {
    const cleaned = query.slice(0, this.options.maxQueryChars).replace(UNSAFE, ' ');
    const terms = new Set<string>();
    for (const token of cleaned.split(SPACE_OR_PUNCTUATION)) {
      for (const term of this.termOf(token)) {
        if (terms.size >= this.options.maxQueryTerms) return [...terms];
        if (!term.includes(TERM_SEPARATOR)) terms.add(term);
      }
    }
    return [...terms];
  }

  /** Best `limit` ids by BM25, best first; records failing `eligible` never take a place. */
  search(query: string, limit: number, eligible?: (id: string) => boolean): { id: string; score: number }[] {
    const terms = this.queryTerms(query);
    if (terms.length === 0 || limit <= 0) return [];
    // Exact-term queries: MiniSearch's ranking without its per-match objects and full sort (bm25-topk.ts).
    const internals = this.options.prefix || this.options.fuzzy ? null : readMiniSearch(this.search_);
    if (internals) {
      const { text, tags } = this.options.fieldBoost;
      return bm25TopK(internals, terms, { text: text ?? 1, tags: tags ?? 1 }, this.options.bm25, limit, eligible);
    }
    const results = this.search_.search(terms.join(TERM_SEPARATOR), {
      tokenize: (text) => text.split(TERM_SEPARATOR),
      processTerm: (term) => term,
      combineWith: 'OR',
      prefix: this.options.prefix,
      fuzzy: this.options.fuzzy,
      boost: this.options.fieldBoost,
      bm25: this.options.bm25,
      ...(eligible ? { filter: (result) => eligible(result.id as string) } : {}),
    });
    return results.slice(0, limit).map((r) => ({ id: r.id as string, score: r.score }));
  }
}

/** The private fields a snapshot reads and restores, besides those the BM25 scorer reads. */
type SnapshotInternals = MiniSearchInternals & {
  // A SearchableMap: its class is not exported, but made with a tree it serves that tree.
  _index: Iterable<[string, TermData]> & { constructor: new (tree: TermTree<TermData>) => SnapshotInternals['_index'] };
  _idToShortId: Map<string, number>;
  _nextId: number;
  _storedFields: Map<number, unknown>;
};

function internals(search: MiniSearch<LexicalDoc>): SnapshotInternals {
  const m = readMiniSearch(search) as SnapshotInternals | null;
  // Stored fields are never used (storeFields: []), so a snapshot need not carry them.
  if (!m || !(m._idToShortId instanceof Map) || typeof m._nextId !== 'number' || !(m._storedFields instanceof Map) || m._storedFields.size > 0) {
    throw new Error('lexical snapshot: unexpected MiniSearch internals');
  }
  return m;
}

function toDoc(record: MemoryRecord): LexicalDoc {
  return { id: record.id, text: record.text, tags: record.tags.join(' ') };
}
