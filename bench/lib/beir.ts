/**
 * BEIR folders (corpus.jsonl.gz, queries.jsonl, qrels/<split>.tsv) and the metrics BEIR reports: graded
 * nDCG@10 as trec_eval's ndcg_cut.10, and recall@100.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
  /** Judged documents and their grades (≥ 1); every other document is grade 0. */
  judged: Map<string, number>;
}

export interface BeirSet {
  /** In file order: the order an app importing the files would add them in. */
  documents: BeirDocument[];
  /** The split's queries, in the order of their first qrels row. */
  queries: BeirQuery[];
}

/** `query-id<TAB>corpus-id<TAB>grade` rows after a header; lines may end in CRLF. Grades ≤ 0 are dropped. */
export function parseQrels(tsv: string): Map<string, Map<string, number>> {
  const qrels = new Map<string, Map<string, number>>();
  const lines = tsv.split('\n');
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '');
    if (i === 0 || line === '') continue;
    const [query, doc, grade] = line.split('\t');
    const value = Number(grade);
    if (!query || !doc || !Number.isFinite(value)) throw new Error(`qrels line ${i + 1}: ${JSON.stringify(line)}`);
    if (value <= 0) continue;
    let judged = qrels.get(query);
    if (!judged) qrels.set(query, (judged = new Map()));
    judged.set(doc, value);
  }
  return qrels;
}

function jsonLines<T>(text: string): T[] {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as T);
}

export function readBeir(folder: string, split: 'dev' | 'test'): BeirSet {
  const documents = jsonLines<{ _id: string; title?: string; text: string }>(gunzipSync(readFileSync(join(folder, 'corpus.jsonl.gz'))).toString('utf8')).map(
    (d) => ({ id: d._id, title: d.title ?? '', text: d.text }),
  );
  const texts = new Map(jsonLines<{ _id: string; text: string }>(readFileSync(join(folder, 'queries.jsonl'), 'utf8')).map((q) => [q._id, q.text]));
  const qrels = parseQrels(readFileSync(join(folder, 'qrels', `${split}.tsv`), 'utf8'));
  const queries = [...qrels].map(([id, judged]) => {
    const text = texts.get(id);
    if (text === undefined) throw new Error(`query ${id} of qrels/${split}.tsv is not in queries.jsonl`);
    return { id, text, judged };
  });
  return { documents, queries };
}

/** The BEIR set in `folder`, or null after saying that `tool` skips it because the folder is absent. */
export function readBeirOrSkip(folder: string, split: 'dev' | 'test', tool: string): BeirSet | null {
  if (existsSync(join(folder, 'corpus.jsonl.gz'))) return readBeir(folder, split);
  console.log(`${tool}: documents skipped, no BEIR data at ${folder}`);
  return null;
}

/**
 * trec_eval's ndcg_cut.k: gain = the grade (not 2^grade − 1), discount log2(rank + 1), ideal = the judged
 * grades sorted best first, cut at k. 0 when nothing is judged.
 */
export function gradedNdcgAt(ranked: readonly string[], judged: ReadonlyMap<string, number>, k = 10): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    dcg += (judged.get(id) ?? 0) / Math.log2(i + 2);
  });
  const ideal = [...judged.values()].filter((g) => g > 0).sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

/** Share of the judged documents (grade ≥ 1) in the first k. */
export function judgedRecallAt(ranked: readonly string[], judged: ReadonlyMap<string, number>, k = 100): number {
  let relevant = 0;
  for (const grade of judged.values()) if (grade > 0) relevant++;
  if (relevant === 0) return 0;
  let found = 0;
  for (const id of new Set(ranked.slice(0, k))) if ((judged.get(id) ?? 0) > 0) found++;
  return found / relevant;
}

/** Lucene's default English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET). */
const LUCENE_STOP = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(' '),
);

/**
 * Plain BM25 as Lucene scores it (idf log(1 + (N − n + 0.5)/(n + 0.5)), k1, b; exact lengths), over lowercase
 * alphanumeric tokens less Lucene's short stop list, unstemmed: the README's sanity-check run,
 * which checks this reader and metric against a published figure. No matched-terms factor.
 */
export function luceneBm25(documents: readonly { id: string; text: string }[], k1 = 0.9, b = 0.4): (query: string, k: number) => string[] {
  const tokens = (text: string) => text.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t !== '' && !LUCENE_STOP.has(t));
  const postings = new Map<string, { doc: number; tf: number }[]>();
  const lengths = documents.map((d, doc) => {
    const terms = tokens(d.text);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, n] of tf) {
      let list = postings.get(t);
      if (!list) postings.set(t, (list = []));
      list.push({ doc, tf: n });
    }
    return terms.length;
  });
  const avg = lengths.reduce((a, n) => a + n, 0) / Math.max(1, lengths.length);
  const n = documents.length;
  return (query, k) => {
    const scores = new Map<number, number>();
    for (const term of new Set(tokens(query))) {
      const list = postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const { doc, tf } of list) {
        const norm = k1 * (1 - b + (b * lengths[doc]!) / avg);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (k1 + 1)) / (tf + norm));
      }
    }
    return [...scores].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, k).map(([doc]) => documents[doc]!.id);
  };
}
