/**
 * Offline query synthesis (`synthesis: 'offline'`, no language model): pseudo-relevance feedback, RM3-like
 * (Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004). The caller's query runs first; its best `feedbackDocs` hits
 * vote for the terms they hold that the query does not:
 *   weight(t) = Σ_d p(d) · tf(t, d) / |d| · idf(t),  p(d) = score(d) / Σ score,
 * and the best `feedbackTerms` make `maxQueries` extra queries, the query's content words plus `termsPerQuery` of
 * them each. The store supplies the words, so an expansion always matches something; a question's missing
 * vocabulary ("which instrument…" / "…my violin") often sits next to the words it shares with its answer.
 *
 * The built-in model's word-vector neighbours were measured too (docs/quality.md): rank-neutral here, at the cost
 * of embedding the store's vocabulary, so they are not shipped.
 */

export interface FeedbackSource {
  /** The term one word becomes in the lexical index ('' for a stop word): `LexicalIndex.termOfWord`. */
  term(word: string): string;
  /** idf per processed term: `LexicalIndex.termIdf`. */
  idf(terms: readonly string[]): ReadonlyMap<string, number>;
}

interface FeedbackDoc {
  text: string;
  /** The first pass's score (any positive scale). */
  score: number;
}

interface FeedbackOptions {
  /** Hits read. */
  feedbackDocs: number;
  /** Expansion terms kept. */
  feedbackTerms: number;
  /** Expansion terms per extra query. */
  termsPerQuery: number;
  /** Most extra queries. */
  maxQueries: number;
}

const FEEDBACK_DEFAULTS: Readonly<FeedbackOptions> = Object.freeze({ feedbackDocs: 5, feedbackTerms: 6, termsPerQuery: 2, maxQueries: 3 });

// Letters only, as the lexical index splits at punctuation and digits ("it's" → "it", "s").
const WORD = /\p{L}+/gu;

function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/** Distinct words of the query that the index keeps (one per term), in order. */
export function contentWords(query: string, source: Pick<FeedbackSource, 'term'>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const word of words(query)) {
    const term = source.term(word);
    if (!term || seen.has(term) || word.length < 3) continue;
    seen.add(term);
    out.push(word);
  }
  return out;
}

/** The expansion terms, best first, each as the first word that produced it (ties by term). */
export function feedbackTerms(query: string, docs: readonly FeedbackDoc[], source: FeedbackSource, options: FeedbackOptions = FEEDBACK_DEFAULTS): string[] {
  const voters = docs.slice(0, options.feedbackDocs).filter((d) => d.score > 0);
  const total = voters.reduce((sum, d) => sum + d.score, 0);
  if (voters.length === 0) return [];
  const queryTerms = new Set(contentWords(query, source).map((w) => source.term(w)));
  const surface = new Map<string, string>();
  const perDoc = voters.map((doc) => {
    const tf = new Map<string, number>();
    let length = 0;
    for (const word of words(doc.text)) {
      const term = word.length < 3 ? '' : source.term(word);
      if (!term) continue;
      length++;
      if (queryTerms.has(term)) continue;
      tf.set(term, (tf.get(term) ?? 0) + 1);
      if (!surface.has(term)) surface.set(term, word);
    }
    return { share: doc.score / total, tf, length };
  });
  const idf = source.idf([...surface.keys()]);
  const weight = new Map<string, number>();
  for (const { share, tf, length } of perDoc) {
    for (const [term, count] of tf) weight.set(term, (weight.get(term) ?? 0) + share * (count / length) * (idf.get(term) ?? 0));
  }
  return [...weight.entries()]
    .filter(([, w]) => w > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, options.feedbackTerms)
    .map(([term]) => surface.get(term) as string);
}

/** The extra queries: the query's content words plus `termsPerQuery` expansion terms each. */
export function feedbackQueries(query: string, docs: readonly FeedbackDoc[], source: FeedbackSource, options: FeedbackOptions = FEEDBACK_DEFAULTS): string[] {
  const terms = feedbackTerms(query, docs, source, options);
  const content = contentWords(query, source);
  const out: string[] = [];
  for (let i = 0; i < terms.length && out.length < options.maxQueries; i += options.termsPerQuery) {
    out.push([...content, ...terms.slice(i, i + options.termsPerQuery)].join(' '));
  }
  return out;
}
