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
import { EngramError, ErrorCode } from '../errors.js';
import { bm25TopKPruned } from './bm25-pruned.js';
import { bm25Bound, type Bm25Params, type WeightedTerm } from './bm25-topk.js';
import { miniSearchIndex, type MiniSearchIndex } from './minisearch-adapter.js';
import type { DecodedSnapshot, LexicalState } from './snapshot.js';
import type { MemoryRecord } from '../types.js';
import { statementHash, statementKey } from './statement.js';
import { StatementHashes } from './statement-hashes.js';
import { stemEnglish } from './stem.js';
import { ENGLISH_STOP_WORDS } from './stopwords.js';

export interface LexicalOptions {
  /** Terms dropped at index and query time. Default: `ENGLISH_STOP_WORDS`; `false` keeps every term. */
  stopWords?: Iterable<string> | false;
  /**
   * Reduces each lowercased term that survived the stop words to its stem, at index and query time alike, so
   * "painted" finds "painting". Default: `stemEnglish` (Porter2); `false` indexes words as written. Its effect
   * on recall is in docs/quality.md.
   */
  stem?: ((term: string) => string) | false;
  /**
   * Applied to each term after stemming. Return a string, several strings, or a falsy value to drop the
   * term. Must be pure, like `stem`: results are memoised per token. Default: identity.
   */
  processTerm?: (term: string) => string | string[] | null | undefined | false;
  /** Field weights. Default `{ text: 1, tags: 1 }`. */
  fieldBoost?: { text?: number; tags?: number };
  /**
   * BM25+ parameters. Default `{ k: 1.2, b: 'auto', d: 0.5 }`: `'auto'` is MiniSearch's 0.7 while memories are of
   * like length (chat turns, notes, abstracts) and rises to 1 as their lengths spread (`lengthNormalisation`).
   */
  bm25?: { k: number; b: number | 'auto'; d: number };
  /**
   * Multiply a memory's BM25 by the number of query terms it matched, as MiniSearch does. `'auto'` (the default):
   * while the mean memory is shorter than `LONG_MEMORY_TERMS` terms (chat turns, notes), not on a collection of
   * long documents, where it costs them relevance (docs/quality.md).
   */
  matchedTermsFactor?: boolean | 'auto';
  /** Prefix matching of query terms. Default false. */
  prefix?: boolean;
  /** MiniSearch fuzziness (fraction of term length) or false. Default false. */
  fuzzy?: number | false;
  /** Distinct query terms kept, in order of appearance. Default 64. */
  maxQueryTerms?: number;
  /** Query characters read. Default 10,000. */
  maxQueryChars?: number;
}

/**
 * Mean indexed terms per memory (stop words out) from which a collection counts as long documents: the matched-terms
 * factor is off there and searches default to feedback and scaled fusion (engine.ts). Chat turns average 13–16
 * terms, PubMed abstracts 167: any cut between them scores the same on both (docs/quality.md).
 */
export const LONG_MEMORY_TERMS = 64;

/**
 * BM25's `b` for `'auto'` from the spread of the memories' text lengths (coefficient of variation, `cv`): 0.7 up to
 * a cv of 0.6, then rising to 1 (full length normalisation) at 0.8, in steps of 0.05 so that a write rarely moves
 * it. Where one-line messages sit beside pages (an assistant's chat: cv 0.6–0.9 on BEAM), a long text otherwise wins
 * on the number of words it happens to hold; chat turns (cv ≈ 0.5) and abstracts (0.3) keep 0.7 (docs/quality.md,
 * after He and Ounis's tuning of length normalisation by the collection's length distribution).
 */
export function lengthNormalisation(cv: number): number {
  if (!(cv > LENGTH_SPREAD_FROM)) return DEFAULT_B;
  return Math.min(1, Math.round((DEFAULT_B + ((1 - DEFAULT_B) * (cv - LENGTH_SPREAD_FROM)) / (LENGTH_SPREAD_TO - LENGTH_SPREAD_FROM)) * 20) / 20);
}
const DEFAULT_B = 0.7;
const LENGTH_SPREAD_FROM = 0.6;
const LENGTH_SPREAD_TO = 0.8;

const SPACE_OR_PUNCTUATION = /[\n\r\p{Z}\p{P}]+/u;
// Control characters, lone surrogates and unassigned code points carry no searchable meaning.
const UNSAFE = /[\p{Cc}\p{Cs}\p{Cn}]/gu;
// Format characters (zero-width space and joiners, soft hyphen, bidi marks) are invisible inside a word: dropped, so
// "pass\u200Bword" is the word "password" a reader sees.
const INVISIBLE = /\p{Cf}/gu;
const NOT_ASCII = /[^\x00-\x7f]/;
// Query terms are joined with a separator that sanitised text can never contain.
const TERM_SEPARATOR = '\u0000';

/** Text into the words the term processor sees: how indexed text, queries and `textTerms` are all split. */
function tokenize(text: string): string[] {
  const safe = text.replace(UNSAFE, ' ');
  if (!NOT_ASCII.test(safe)) return safe.split(SPACE_OR_PUNCTUATION);
  const normal = normalized(safe);
  const tokens = normal.split(SPACE_OR_PUNCTUATION);
  // Only text holding a script written without spaces pays for segmentation (a cheap range test first).
  return MAYBE_UNSPACED.test(normal) && UNSPACED.test(normal) ? tokens.flatMap(segmentToken) : tokens;
}

// Scripts written without spaces between words: Chinese, Japanese (with the kana length and voicing marks), Thai,
// Lao, Khmer, Burmese. MAYBE_UNSPACED holds their blocks' UTF-16 units, a superset that is fast to test.
const UNSPACED_CLASS = String.raw`[\p{sc=Han}\p{sc=Hira}\p{sc=Kana}\u3099-\u309C\u30FC\p{sc=Thai}\p{sc=Laoo}\p{sc=Khmr}\p{sc=Mymr}]`;
const UNSPACED = new RegExp(UNSPACED_CLASS, 'u');
const UNSPACED_RUN = new RegExp(`${UNSPACED_CLASS}+`, 'gu');
const MAYBE_UNSPACED = /[\u0E00-\u0EFF\u1000-\u109F\u1780-\u17FF\u19E0-\u19FF\u2E80-\u9FFF\uA9E0-\uA9FF\uAA60-\uAA7F\uF900-\uFAFF\uFF00-\uFFEF\uD805\uD81B\uD82B\uD82C\uD840-\uD8BF]/;

type Segment = (run: string) => string[];

/**
 * Words of a run of those scripts: Intl.Segmenter's (ICU's dictionaries; the same in every locale), or without it
 * one term per character, which still finds a word by its characters.
 */
function wordSegmenter(): Segment {
  const Segmenter = (globalThis.Intl as { Segmenter?: typeof Intl.Segmenter } | undefined)?.Segmenter;
  if (typeof Segmenter !== 'function') return (run) => Array.from(run);
  const segmenter = new Segmenter('und', { granularity: 'word' });
  return (run) => {
    const words: string[] = [];
    for (const { segment } of segmenter.segment(run)) words.push(segment);
    return words;
  };
}

const segment: Segment = wordSegmenter();

/**
 * How this runtime splits a probe of each segmented script: part of the index settings, so a snapshot made where
 * segmentation differs (another ICU, no Intl.Segmenter) is rebuilt rather than searched with other terms.
 */
export const SEGMENTATION_KEY = ['東京の天気は晴れです', '我喜欢吃苹果', 'วันนี้อากาศดีมาก'].map((probe) => segment(probe).join(' ')).join('|');

/** One token (no space or punctuation left in it) with its runs of unspaced scripts split into words. */
function segmentToken(token: string): string[] {
  if (!UNSPACED.test(token)) return [token];
  const out: string[] = [];
  let last = 0;
  for (const run of token.matchAll(UNSPACED_RUN)) {
    const at = run.index as number;
    if (at > last) out.push(token.slice(last, at));
    for (const word of segment(run[0])) out.push(word);
    last = at + run[0].length;
  }
  if (last < token.length) out.push(token.slice(last));
  return out;
}

/**
 * NFKC after dropping invisible format characters: a decomposed accent, a full-width letter or a ligature is the
 * same word as its plain form, at index and query time alike.
 */
export function normalizeText(text: string): string {
  const safe = text.replace(UNSAFE, ' ');
  return NOT_ASCII.test(safe) ? normalized(safe) : safe;
}

function normalized(safe: string): string {
  return safe.replace(INVISIBLE, '').normalize('NFKC');
}

interface LexicalDoc {
  id: string;
  text: string;
  tags: string;
}

/** What `LexicalIndex.termCounts` returns. */
export interface TermCounts {
  /** The distinct terms, in order of first appearance. */
  readonly terms: readonly string[];
  /** Each one's count, in the same order. */
  readonly counts: Uint32Array;
  /** Terms in all, repeats counted. */
  readonly length: number;
}

/** Budget of the `termCounts` memo in bytes, estimated as 2 per character of the texts and 12 per distinct term. */
const TERM_COUNTS_MEMO = 16 * 2 ** 20;

/** Query characters either leg reads, unless `LexicalOptions.maxQueryChars` says otherwise. */
export const DEFAULT_MAX_QUERY_CHARS = 10_000;

/**
 * The first `max` UTF-16 code units of `query`, one fewer when the cut would split a surrogate pair: what either
 * leg reads of a query (this index before tokenising, the vector leg before embedding).
 */
export function cutQuery(query: string, max: number): string {
  if (query.length <= max) return query;
  const code = query.charCodeAt(max - 1);
  return query.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

export class LexicalIndex {
  private search_: MiniSearch<LexicalDoc>;
  /** `search_`'s index read in place, or null when MiniSearch's internals are not the ones the adapter reads. */
  private index_: MiniSearchIndex | null;
  private readonly termOf: (term: string) => string[];
  private readonly options: Required<Omit<LexicalOptions, 'stopWords' | 'stem' | 'processTerm' | 'fieldBoost' | 'bm25' | 'matchedTermsFactor'>> & {
    fieldBoost: { text: number; tags: number };
    bm25: Omit<Bm25Params, 'matchedTerms' | 'b'> & { b: number | 'auto' };
  };
  /** Exact integer sums of the live memories' text lengths, for `'auto'` b; null until first needed. */
  private lengths: { n: number; sum: number; squares: number } | null = null;
  private readonly factor: boolean | 'auto';
  /** Identifies the index-time settings: a snapshot made under other settings must not be loaded. */
  readonly settingsKey: string;
  /** What each indexed document says, for `holdersOfRarestTerm`. */
  private statements = new StatementHashes();

  constructor(options: LexicalOptions = {}) {
    const stopWords = options.stopWords === false ? new Set<string>() : new Set(options.stopWords ?? ENGLISH_STOP_WORDS);
    const custom = options.processTerm;
    const stem = options.stem === undefined ? stemEnglish : options.stem;
    // Memoised per raw token (callers never mutate the arrays): stemming is a large part of the cost of indexing.
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
      bm25: { ...(options.bm25 ?? { k: 1.2, b: 'auto', d: 0.5 }) },
      prefix: options.prefix ?? false,
      fuzzy: options.fuzzy ?? false,
      maxQueryTerms: options.maxQueryTerms ?? 64,
      maxQueryChars: options.maxQueryChars ?? DEFAULT_MAX_QUERY_CHARS,
    };
    this.factor = options.matchedTermsFactor ?? 'auto';
    const stemKey = stem === stemEnglish ? 'porter2' : stem ? String(stem) : null;
    // v 2: text is NFKC-normalised (normalizeText); v 3: unspaced scripts are segmented. An older index is rebuilt.
    this.settingsKey = JSON.stringify({ v: 3, stop: [...stopWords].sort(), stem: stemKey, term: custom ? String(custom) : null, seg: SEGMENTATION_KEY });
    this.search_ = new MiniSearch<LexicalDoc>(this.miniSearchOptions());
    this.index_ = miniSearchIndex(this.search_);
  }

  /** The index's state, for a snapshot (snapshot.ts). Throws when MiniSearch's internals are not the expected ones. */
  state(): LexicalState {
    return adapted(this.index_).state();
  }

  /**
   * Replaces the index with a state read from a snapshot made under the same settings (it takes the maps over).
   * `sameDocuments`: the snapshot is of this index as it stands (the same texts under the same short ids).
   */
  restore(state: DecodedSnapshot['state'], sameDocuments = false): void {
    const search = new MiniSearch<LexicalDoc>(this.miniSearchOptions());
    const index = adapted(miniSearchIndex(search));
    index.replaceState(state);
    this.search_ = search;
    this.index_ = index;
    this.lengths = null;
    if (!sameDocuments) this.statements = new StatementHashes(state.documentIds.size);
  }

  private miniSearchOptions() {
    return {
      fields: ['text', 'tags'],
      storeFields: [],
      tokenize,
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
    for (const record of records) this.countLength(record.id, 1);
    const index = this.index_;
    if (!index) return;
    for (const record of records) {
      const shortId = index.shortIdOf(record.id);
      if (shortId !== undefined) this.statements.note(shortId, statementHash(statementKey(record.text)), true);
    }
  }

  /** Notes the statement key of the text indexed for `id`, read from its record (ignored for an id not indexed). */
  learnStatement(id: string, key: string): void {
    const shortId = this.index_?.shortIdOf(id);
    if (shortId !== undefined) this.statements.note(shortId, statementHash(key), false);
  }

  remove(id: string): void {
    if (!this.search_.has(id)) return;
    this.countLength(id, -1);
    const shortId = this.index_?.shortIdOf(id);
    if (shortId !== undefined) this.statements.forget(shortId);
    this.search_.discard(id);
  }

  clear(): void {
    // A new index rather than removeAll(), which keeps MiniSearch's count of discarded documents.
    this.search_ = new MiniSearch<LexicalDoc>(this.miniSearchOptions());
    this.index_ = miniSearchIndex(this.search_);
    this.statements = new StatementHashes();
    this.lengths = null;
  }

  /** Keeps the length sums current, once they have been counted. */
  private countLength(id: string, sign: 1 | -1): void {
    const sums = this.lengths;
    const length = sums && this.index_?.fieldLengthOf(id, this.index_.fieldIds.text as number);
    if (!sums || length === undefined || length === null) return;
    sums.n += sign;
    sums.sum += sign * length;
    sums.squares += sign * length * length;
  }

  /** The coefficient of variation of the memories' text lengths (0 when empty or unreadable). */
  lengthSpread(): number {
    const index = this.index_;
    if (!index) return 0;
    if (!this.lengths) {
      const sums = { n: 0, sum: 0, squares: 0 };
      for (const length of index.lengthsIn(index.fieldIds.text as number)) {
        sums.n++;
        sums.sum += length;
        sums.squares += length * length;
      }
      this.lengths = sums;
    }
    const { n, sum, squares } = this.lengths;
    if (n < 2 || sum <= 0) return 0;
    const mean = sum / n;
    return Math.sqrt(Math.max(0, squares / n - mean * mean)) / mean;
  }

  /** The terms a query searches for: sanitised, processed like indexed text, distinct, capped. */
  queryTerms(query: string): string[] {
    const terms = new Set<string>();
    for (const token of tokenize(cutQuery(query, this.options.maxQueryChars))) {
      for (const term of this.termOf(token)) {
        if (terms.size >= this.options.maxQueryTerms) return [...terms];
        if (!term.includes(TERM_SEPARATOR)) terms.add(term);
      }
    }
    return [...terms];
  }

  /**
   * The BM25 a memory could earn for `query` (see `bm25Bound`): `reference` = matching each of the query's indexed
   * terms once at average field length, `ceiling` = the formula's limit; `idf` per indexed query term. Null when
   * the index is searched through MiniSearch's `search()` (prefix or fuzzy matching, or unknown internals).
   */
  scoreBound(query: string): { reference: number; ceiling: number; idf: Map<string, number> } | null {
    return this.boundOf(this.queryTerms(query));
  }

  private boundOf(terms: readonly string[]): ReturnType<typeof bm25Bound> | null {
    const index = this.exactIndex();
    return index ? bm25Bound(index, terms, this.fieldBoosts(), this.bm25()) : null;
  }

  /** Mean indexed terms per memory's text (0 when empty, or when MiniSearch's internals are not the expected ones). */
  meanTerms(): number {
    const index = this.index_;
    return index ? ((index.averageFieldLengths[index.fieldIds.text as number] as number | undefined) ?? 0) : 0;
  }

  /** The collection is long documents (`LONG_MEMORY_TERMS`). */
  longMemories(): boolean {
    return this.meanTerms() >= LONG_MEMORY_TERMS;
  }

  /** The BM25 parameters of a search now: `'auto'` decides the matched-terms factor from the collection as it stands. */
  private bm25(): Bm25Params {
    const { b } = this.options.bm25;
    return { ...this.options.bm25, b: b === 'auto' ? lengthNormalisation(this.lengthSpread()) : b, matchedTerms: this.factor === 'auto' ? !this.longMemories() : this.factor };
  }

  /** MiniSearch's index for exact-term scoring, or null when prefix or fuzzy matching needs its `search()`. */
  private exactIndex(): MiniSearchIndex | null {
    return this.options.prefix || this.options.fuzzy ? null : this.index_;
  }

  private fieldBoosts(): Record<'text' | 'tags', number> {
    const { text, tags } = this.options.fieldBoost;
    return { text: text ?? 1, tags: tags ?? 1 };
  }

  /** Every term of `text` in order, repeats kept, processed exactly like indexed text (for proximity and coverage). */
  textTerms(text: string): string[] {
    const out: string[] = [];
    for (const token of tokenize(text)) for (const term of this.termOf(token)) out.push(term);
    return out;
  }

  /**
   * `textTerms(text)` counted: each distinct term (in order of first appearance) with its count, and their total.
   * Memoised per text (shared: callers must not change it): searches read the same long memories again and again
   * (feedback's voters, currency's head), and tokenising them was most of a search over long texts.
   */
  termCounts(text: string): TermCounts {
    return this.countsOf(text);
  }

  private readonly countsOf = memoizeByText(
    (text: string): TermCounts => {
      const counts = new Map<string, number>();
      let length = 0;
      for (const token of tokenize(text)) {
        for (const term of this.termOf(token)) {
          counts.set(term, (counts.get(term) ?? 0) + 1);
          length++;
        }
      }
      return { terms: [...counts.keys()], counts: Uint32Array.from(counts.values()), length };
    },
    TERM_COUNTS_MEMO,
    (text, value) => 2 * text.length + 12 * value.terms.length,
  );

  /**
   * Up to `cap` ids of memories whose text holds every indexed term of `text`'s rarest one, oldest first: the only
   * memories that can say what `text` says (statement.ts), found without a pass over the store. Empty when a term of
   * `text` is in no memory, when `text` has no indexed term, or on unknown MiniSearch internals. With `statements`
   * (`statementHash`es), the holders among those `cap` known to say none of them are left out.
   */
  holdersOfRarestTerm(text: string, cap: number, statements?: ReadonlySet<number>): string[] {
    const index = this.index_;
    const fieldId = index?.fieldIds.text;
    if (!index || fieldId === undefined) return [];
    // Every holder left out below: no need to find them.
    if (statements && this.statements.noneSays(statements)) return [];
    let rarest: ReadonlyMap<number, number> | undefined;
    for (const term of new Set(this.textTerms(text))) {
      const postings = index.termPostings(term)?.get(fieldId);
      if (!postings || postings.size === 0) return [];
      if (!rarest || postings.size < rarest.size) rarest = postings;
    }
    const out: string[] = [];
    if (!rarest || cap <= 0) return out;
    const known = this.statements;
    // Without discarded documents every posting is a live holder, counted without a look-up.
    const dirty = index.dirtCount > 0;
    let holders = 0;
    for (const shortId of rarest.keys()) {
      const hash = statements ? known.hashOf(shortId) : 0;
      if (hash !== 0 && !dirty && !(statements as ReadonlySet<number>).has(hash)) {
        if (++holders >= cap) break;
        continue;
      }
      const id = index.documentIds.get(shortId);
      if (id === undefined) continue;
      if (hash === 0 || (statements as ReadonlySet<number>).has(hash)) out.push(id);
      if (++holders >= cap) break;
    }
    return out;
  }

  /** The term one word becomes here ('' for a stop word or a word the term processor drops). */
  termOfWord(word: string): string {
    return this.termOf(word)[0] ?? '';
  }

  /** idf of each processed term that a live memory holds (the largest over the fields); empty with prefix or fuzzy matching. */
  termIdf(terms: readonly string[]): Map<string, number> {
    return this.boundOf(terms)?.idf ?? new Map();
  }

  /**
   * Best `limit` ids for processed terms each with a weight and whether it counts toward the matched-terms factor
   * (`WeightedTerm`), or null when the index is searched through MiniSearch's `search()` (prefix or fuzzy matching).
   */
  searchWeighted(terms: readonly WeightedTerm[], limit: number, eligible?: (id: string) => boolean): { id: string; score: number }[] | null {
    const index = this.exactIndex();
    if (!index) return null;
    if (terms.length === 0 || limit <= 0) return [];
    return bm25TopKPruned(index, terms, this.fieldBoosts(), this.bm25(), limit, eligible);
  }

  /** Best `limit` ids by BM25, best first; records failing `eligible` never take a place. */
  search(query: string, limit: number, eligible?: (id: string) => boolean): { id: string; score: number }[] {
    const terms = this.queryTerms(query);
    if (terms.length === 0 || limit <= 0) return [];
    // Exact-term queries: MiniSearch's ranking without its per-match objects and full sort (bm25-topk.ts), pruned
    // so that common terms do not cost a read of all their postings (bm25-pruned.ts, same answer).
    const index = this.exactIndex();
    if (index) return bm25TopKPruned(index, terms, this.fieldBoosts(), this.bm25(), limit, eligible);
    const results = this.search_.search(terms.join(TERM_SEPARATOR), {
      tokenize: (text) => text.split(TERM_SEPARATOR),
      processTerm: (term) => term,
      combineWith: 'OR',
      prefix: this.options.prefix,
      fuzzy: this.options.fuzzy,
      boost: this.options.fieldBoost,
      bm25: this.bm25(),
      ...(eligible ? { filter: (result) => eligible(result.id as string) } : {}),
    });
    // MiniSearch multiplies by the query terms matched; without the factor, divide it out and sort again.
    if (this.bm25().matchedTerms) return results.slice(0, limit).map((r) => ({ id: r.id as string, score: r.score }));
    const plain = results.map((r) => ({ id: r.id as string, score: r.score / Math.max(1, r.queryTerms.length) }));
    return plain.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}

function adapted(index: MiniSearchIndex | null): MiniSearchIndex {
  if (!index) throw new EngramError(ErrorCode.SNAPSHOT_INVALID, 'lexical snapshot: unexpected MiniSearch internals');
  return index;
}

function toDoc(record: MemoryRecord): LexicalDoc {
  return { id: record.id, text: record.text, tags: record.tags.join(' ') };
}
