/**
 * The documents section of `npm run eval`: a BEIR corpus added as an app importing files would (one `add` call,
 * title + "\n" + text, no dates, no threads), every query of the split asked of Engram variants and plain BM25s.
 */
import MiniSearch from 'minisearch';
import { ENGLISH_STOP_WORDS, stemEnglish } from '../../src/internals.js';
import { createEngine, type Embedder, type Engine, type EngineOptions, type MemoryInput, type SearchOptions } from '../../src/index.js';
import { gradedNdcgAt, judgedRecallAt, luceneBm25, type BeirSet } from './beir.js';
import { prng } from '../../scripts/models/tiny-bert.js';
import { pureLeg } from './rankers.js';

/** Queries each ranker answers untimed first, so JIT compilation is not billed to it. */
const WARMUP = 20;
/** One fixed "now": every document gets the same createdAt, as in one import. */
const NOW = Date.UTC(2026, 0, 1);
const YEAR_MS = 365 * 86_400_000;
/** The engine's default longest step for support over time (neighbours.timeGapMs), to say how many dated documents it could reach. */
const HALF_HOUR_MS = 30 * 60_000;

/**
 * A createdAt for each document (seeded, so the same on every run), uniform over the year before NOW and independent of its content (a user's notes
 * and files have dates of their own): about one every 2.4 hours, so some fall minutes apart by chance.
 */
export function datesOverAYear(count: number, seed = 43): number[] {
  const next = prng(seed);
  return Array.from({ length: count }, () => NOW - Math.floor(next() * YEAR_MS));
}

export interface DocumentsRow {
  name: string;
  ndcg10: number;
  r10: number;
  r100: number;
  /** Top-10 hits that came from neighbour support alone (neither leg returned them); null for non-Engram rows. */
  neighbourOnly: number | null;
  /** Of those, hits judged relevant to the query. */
  neighbourOnlyRelevant: number | null;
  /** Documents superseded on add in the engine the row searched; null where nothing supersedes. */
  superseded: number | null;
  /** Of those, documents judged relevant to some query of the split. */
  supersededJudged: number | null;
  meanQueryMs: number;
}

export interface DocumentsReport {
  documents: number;
  /** Documents of the dated import whose nearest other document in time is within 30 minutes. */
  datedWithin30Min: number;
  queries: number;
  /** Seconds of the one `add` call per engine (embedding included). */
  addSeconds: Record<string, number>;
  rows: DocumentsRow[];
}

/** Vectors remembered by text while `remember` is on, so a second engine over the same texts does not embed them again. */
class RememberingEmbedder implements Embedder {
  remember = true;
  private readonly vectors = new Map<string, Float32Array>();
  readonly id: string;
  readonly vectorSpace: string | undefined;
  readonly dim: number;
  readonly countTokens: ((text: string) => number) | undefined;

  constructor(private readonly inner: Embedder) {
    this.id = inner.id;
    this.vectorSpace = inner.vectorSpace;
    this.dim = inner.dim;
    this.countTokens = inner.countTokens?.bind(inner);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (!this.remember) return this.inner.embed(texts);
    const missing = [...new Set(texts.filter((t) => !this.vectors.has(t)))];
    if (missing.length > 0) (await this.inner.embed(missing)).forEach((v, i) => this.vectors.set(missing[i]!, v));
    return texts.map((t) => this.vectors.get(t)!);
  }
}

const DATED = 'Engram (defaults), dated over a year';

type Ask = (query: string, k: number) => Promise<{ ids: string[]; neighbourOnly?: string[] }>;

async function score(name: string, set: BeirSet, ask: Ask, extra: Pick<DocumentsRow, 'superseded' | 'supersededJudged'> & { engram: boolean }): Promise<DocumentsRow> {
  for (const q of set.queries.slice(0, WARMUP)) await ask(q.text, 10);
  let ndcg = 0, r10 = 0, r100 = 0, ms = 0, neighbourOnly = 0, neighbourOnlyRelevant = 0;
  for (const q of set.queries) {
    const started = performance.now();
    const top = await ask(q.text, 10);
    ms += performance.now() - started;
    ndcg += gradedNdcgAt(top.ids, q.judged, 10);
    r10 += judgedRecallAt(top.ids, q.judged, 10);
    for (const id of top.neighbourOnly ?? []) {
      neighbourOnly++;
      if (q.judged.has(id)) neighbourOnlyRelevant++;
    }
    // A search for 100 may order its first 10 differently (MMR looks at more candidates): R@100 has its own.
    r100 += judgedRecallAt((await ask(q.text, 100)).ids, q.judged, 100);
  }
  const n = Math.max(1, set.queries.length);
  const row: DocumentsRow = {
    name,
    ndcg10: ndcg / n,
    r10: r10 / n,
    r100: r100 / n,
    neighbourOnly: extra.engram ? neighbourOnly : null,
    neighbourOnlyRelevant: extra.engram ? neighbourOnlyRelevant : null,
    superseded: extra.superseded,
    supersededJudged: extra.supersededJudged,
    meanQueryMs: ms / n,
  };
  console.error(`  ${name}: nDCG@10 ${row.ndcg10.toFixed(4)} R@100 ${row.r100.toFixed(4)} (${row.meanQueryMs.toFixed(2)} ms/query)`);
  return row;
}

function engineAsk(engine: Engine, options: Partial<SearchOptions>): Ask {
  return async (query, k) => {
    const hits = (await engine.search(query, { touch: false, ...options, k })).hits;
    return {
      ids: hits.map((h) => h.id),
      neighbourOnly: hits.filter((h) => h.explain.bm25Rank === null && h.explain.vecRank === null && h.explain.neighbour).map((h) => h.id),
    };
  };
}

// The engine's lexical leg splits and processes terms like this (lexical-index.ts); repeated here to score
// the same terms without its matched-terms factor.
const SPACE_OR_PUNCTUATION = /[\n\r\p{Z}\p{P}]+/u;
const UNSAFE = /[\p{Cc}\p{Cs}\p{Cn}]/gu;
const engineTokens = (text: string) => text.replace(UNSAFE, ' ').split(SPACE_OR_PUNCTUATION);
function engineTerm(raw: string): string | null {
  const lower = raw.toLowerCase();
  return !lower || ENGLISH_STOP_WORDS.has(lower) ? null : stemEnglish(lower) || null;
}

/**
 * MiniSearch over the engine's terms and BM25+ parameters (k 1.2, b 0.7, d 0.5). `matchedTerms` false divides
 * MiniSearch's score by the number of query terms matched, the factor it multiplies in: plain BM25+.
 */
function engineTermsBm25(set: BeirSet, matchedTerms: boolean): Ask {
  const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], tokenize: engineTokens, processTerm: engineTerm });
  index.addAll(set.documents.map((d) => ({ id: d.id, text: `${d.title}\n${d.text}` })));
  return async (query, k) => {
    const terms = [...new Set(engineTokens(query).map(engineTerm).filter((t): t is string => t !== null))].slice(0, 64);
    if (terms.length === 0) return { ids: [] };
    const results = index.search(terms.join('\u0000'), { tokenize: (t) => t.split('\u0000'), processTerm: (t) => t, combineWith: 'OR', bm25: { k: 1.2, b: 0.7, d: 0.5 } });
    const scored = results.map((r) => ({ id: String(r.id), score: matchedTerms ? r.score : r.score / Math.max(1, r.terms.length) }));
    return { ids: scored.sort((a, b) => b.score - a.score).slice(0, k).map((r) => r.id) };
  };
}

export async function evaluateDocuments(set: BeirSet, inner: Embedder): Promise<DocumentsReport> {
  const inputs = set.documents.map((d) => ({ id: d.id, text: `${d.title}\n${d.text}` }));
  const judgedAnywhere = new Set(set.queries.flatMap((q) => [...q.judged.keys()]));
  const embedder = new RememberingEmbedder(inner);
  const addSeconds: Record<string, number> = {};
  const engines: Engine[] = [];
  const build = async (label: string, options: Partial<EngineOptions>, memories: MemoryInput[] = inputs) => {
    const engine = await createEngine({ clock: () => NOW, ...options });
    const started = performance.now();
    await engine.add(memories);
    addSeconds[label] = (performance.now() - started) / 1000;
    engines.push(engine);
    const superseded = (await engine.export()).filter((r) => r.supersededBy !== undefined).map((r) => r.id);
    return { engine, superseded: superseded.length, supersededJudged: superseded.filter((id) => judgedAnywhere.has(id)).length };
  };

  const defaults = await build('defaults', { embedder });
  const dates = datesOverAYear(inputs.length);
  const dated = await build('dated over a year', { embedder }, inputs.map((d, i) => ({ ...d, createdAt: dates[i]! })));
  const noSupersede = await build('supersede off', { embedder, supersedeThreshold: false });
  const withFactor = await build('matched-terms factor on', { embedder, lexical: { matchedTermsFactor: true } });
  embedder.remember = false;
  const lexicalEngine = await build('lexical only (Porter2)', { embedder: null, lexical: { matchedTermsFactor: true } });
  const unstemmed = await build('lexical only (no stemming)', { embedder: null, lexical: { stem: false, matchedTermsFactor: true } });
  console.error(`  documents added: ${Object.entries(addSeconds).map(([k, s]) => `${k} ${s.toFixed(1)} s`).join(', ')}`);

  const engram = (e: typeof defaults) => ({ engram: true, superseded: e.superseded, supersededJudged: e.supersededJudged });
  const plain = { engram: false, superseded: null, supersededJudged: null };
  const rows: DocumentsRow[] = [];
  const add = async (name: string, ask: Ask, extra: Parameters<typeof score>[3]) => rows.push(await score(name, set, ask, extra));
  await add('Engram (defaults)', engineAsk(defaults.engine, {}), engram(defaults));
  await add(DATED, engineAsk(dated.engine, {}), engram(dated));
  await add('Engram, dated over a year, neighbours: false', engineAsk(dated.engine, { neighbours: false }), engram(dated));
  await add("Engram, dated over a year, decayScope: 'all' (the default before: decay on every memory)", engineAsk(dated.engine, { decayScope: 'all' }), engram(dated));
  await add("Engram, mode: 'lexical'", engineAsk(defaults.engine, { mode: 'lexical' }), engram(defaults));
  await add('Engram, neighbours: false', engineAsk(defaults.engine, { neighbours: false }), engram(defaults));
  await add('Engram, feedback: false', engineAsk(defaults.engine, { feedback: false }), engram(defaults));
  await add("Engram, fusion: 'convex'", engineAsk(defaults.engine, { fusion: 'convex' }), engram(defaults));
  await add('Engram, weights 0.8 / 0.2', engineAsk(defaults.engine, { weights: { lexical: 0.8, vector: 0.2 } }), engram(defaults));
  await add('Engram, lexical.matchedTermsFactor: true', engineAsk(withFactor.engine, {}), engram(withFactor));
  const shortDefaults = { feedback: false, fusion: 'convex', weights: { lexical: 0.8, vector: 0.2 } } as const;
  await add('Engram, the chat-length defaults (factor on, no feedback, convex, 0.8 / 0.2)', engineAsk(withFactor.engine, shortDefaults), engram(withFactor));
  await add('Engram, supersede off (supersedeThreshold: false)', engineAsk(noSupersede.engine, {}), engram(noSupersede));
  await add('Engram, supersede off and neighbours: false', engineAsk(noSupersede.engine, { neighbours: false }), engram(noSupersede));
  await add('Vector leg alone (built-in model)', engineAsk(noSupersede.engine, { ...pureLeg, mode: 'vector' }), plain);
  await add('BM25, engine lexical settings (+ Porter2; × matched terms)', engineAsk(lexicalEngine.engine, pureLeg), plain);
  await add('BM25 + English stop words (engine, no stemming; × matched terms)', engineAsk(unstemmed.engine, pureLeg), plain);
  const mini = new MiniSearch<{ id: string; text: string }>({ fields: ['text'] });
  mini.addAll(inputs);
  await add('MiniSearch BM25 (defaults; × matched terms)', async (q, k) => ({ ids: mini.search(q).slice(0, k).map((r) => String(r.id)) }), plain);
  await add('Plain BM25+: engine terms and parameters, no × matched terms', engineTermsBm25(set, false), plain);
  await add('(check) the same MiniSearch index with × matched terms', engineTermsBm25(set, true), plain);
  const lucene = luceneBm25(inputs);
  await add('Plain BM25, Lucene k1 0.9 b 0.4, short stop list, no stemming (README check: 0.3059 / 0.2359)', async (q, k) => ({ ids: lucene(q, k) }), plain);

  for (const engine of engines) await engine.close();
  const sorted = [...dates].sort((a, b) => a - b);
  const close = (i: number) => (i > 0 && sorted[i]! - sorted[i - 1]! <= HALF_HOUR_MS) || (i + 1 < sorted.length && sorted[i + 1]! - sorted[i]! <= HALF_HOUR_MS);
  const datedWithin30Min = sorted.filter((_, i) => close(i)).length;
  return { documents: set.documents.length, datedWithin30Min, queries: set.queries.length, addSeconds, rows };
}

const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
const orDash = (x: number | null, y: number | null) => (x === null ? '—' : y === null ? String(x) : `${x} (${y} judged)`);

/** NFCorpus's published BM25 nDCG@10 (BEIR, Anserini multifield; the data set's README). */
const PUBLISHED_BM25 = 0.325;

/** Issue 28's documents targets, each met or missed. */
export function documentsTargets(report: DocumentsReport): string {
  const row = (name: string) => report.rows.find((r) => r.name === name)!;
  const defaults = report.rows[0]!;
  const lexicalLeg = row("Engram, mode: 'lexical'");
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  const share = (r: DocumentsRow) => (r.neighbourOnly ?? 0) / (10 * report.queries);
  return [
    `- nDCG@10 ≥ ${PUBLISHED_BM25} (published BM25): ${f3(defaults.ndcg10)}, ${verdict(defaults.ndcg10 >= PUBLISHED_BM25)}`,
    `- no less than Engram's own lexical leg (mode: 'lexical', ${f3(lexicalLeg.ndcg10)}): ${verdict(defaults.ndcg10 >= lexicalLeg.ndcg10)}`,
    `- top-10 hits from neighbour support alone under 1%: ${(100 * share(defaults)).toFixed(2)}%, ${verdict(share(defaults) < 0.01)}`,
  ].join('\n');
}

/** Issue 43's dated-documents targets: the same import dated over a year against it undated. */
export function datedDocumentsTargets(report: DocumentsReport): string {
  const undated = report.rows[0]!;
  const dated = report.rows.find((r) => r.name === DATED)!;
  const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
  const share = (dated.neighbourOnly ?? 0) / (10 * report.queries);
  const gap = dated.ndcg10 - undated.ndcg10;
  return [
    `- top-10 hits from neighbour support alone under 1%: ${(100 * share).toFixed(2)}% (${dated.neighbourOnly} of ${10 * report.queries}, ${dated.neighbourOnlyRelevant} judged relevant), ${verdict(share < 0.01)}`,
    `- nDCG@10 within 0.005 of the undated import: ${f3(dated.ndcg10)} against ${f3(undated.ndcg10)} (${signed(gap)}), ${verdict(Math.abs(gap) <= 0.005)}`,
  ].join('\n');
}

export function documentsTable(report: DocumentsReport): string {
  const base = report.rows[0]!;
  return [
    '| ranker | nDCG@10 | Δ nDCG@10 | R@10 | R@100 | Δ R@100 | top-10 hits from neighbour support alone (judged relevant) | superseded on add (judged in the split) | mean query ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...report.rows.map(
      (r, i) =>
        `| ${r.name} | ${f3(r.ndcg10)} | ${i === 0 ? '' : signed(r.ndcg10 - base.ndcg10)} | ${f3(r.r10)} | ${f3(r.r100)} | ${i === 0 ? '' : signed(r.r100 - base.r100)} | ${orDash(r.neighbourOnly, r.neighbourOnlyRelevant)} | ${orDash(r.superseded, r.supersededJudged)} | ${r.meanQueryMs.toFixed(2)} |`,
    ),
  ].join('\n');
}
