/**
 * Candidate defaults on the three kinds of data at once: `npx tsx bench/sweep.ts '<variants>'`, variants a JSON array of
 * `{ name, engine?, search? }` (engine and search options over the defaults); `SETS=chat,notes,docs` picks the data;
 * `SPLIT=dev` the BEIR dev queries (tune there, report test); `DIGITS=n` more decimals; `MODEL=owner/name` and `MODEL_PATH=<folder>` another model (e.g. a variant of the built-in built with --models).
 * Prints per variant: chat (LoCoMo dev, threads) and notes (no threads, a minute between turns) R@10, nDCG@10 and
 * session R@10 (chat per category: R@10 / session R@10), documents (BEIR NFCorpus, one batch) nDCG@10, R@100 and the
 * top-10 hits no leg returned. For exploring; `npm run eval` is the record.
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEmbedder, createEngine, type Engine, type EngineOptions, type SearchOptions } from '../src/index.js';
import { readBeir, gradedNdcgAt, judgedRecallAt } from './lib/beir.js';
import { engineRanker, closeEngines } from './lib/rankers.js';
import { evaluateRanker, loadConversations, DEV_SPLIT, CATEGORY_NAMES } from './lib/run.js';

interface V { name: string; engine?: Partial<EngineOptions>; search?: Partial<SearchOptions>; only?: string[] }
const variants: V[] = JSON.parse(process.argv[2] ?? '[]');
const which = new Set((process.env.SETS ?? 'chat,notes,docs').split(','));
const conversations = loadConversations(DEV_SPLIT);
const embedder = await createEmbedder({ model: process.env.MODEL, modelPath: process.env.MODEL_PATH });
const beir = which.has('docs') ? readBeir(resolve(dirname(fileURLToPath(import.meta.url)), '../../shared/data/beir-nfcorpus'), process.env.SPLIT === 'dev' ? 'dev' : 'test') : null;
const inputs = beir?.documents.map((d) => ({ id: d.id, text: `${d.title}\n${d.text}` })) ?? [];
const docEngines = new Map<string, Promise<Engine>>();
const docEngine = (engine: Partial<EngineOptions>) => {
  const key = JSON.stringify(engine);
  if (!docEngines.has(key)) docEngines.set(key, (async () => { const e = await createEngine({ clock: () => Date.UTC(2026, 0, 1), embedder, ...engine }); await e.add(inputs); return e; })());
  return docEngines.get(key)!;
};
const f = (x: number) => x.toFixed(process.env.DIGITS ? Number(process.env.DIGITS) : 3);
const cats = Object.values(CATEGORY_NAMES);
const catStr = (r: Awaited<ReturnType<typeof evaluateRanker>>) => cats.map((c) => `${c.slice(0, 5)} ${f(r.byCategory[c]!.r10)}/${f(r.byCategory[c]!.s10)}`).join(' ');
for (const v of variants) {
  const search = { touch: false, ...v.search } as Partial<SearchOptions>;
  // `engine: { embedder: null }` means lexical only; the rankers take that as `noEmbedder`.
  const noEmbedder = v.engine?.embedder === null;
  const out: string[] = [v.name.padEnd(40)];
  if (which.has('chat')) {
    const r = await evaluateRanker(engineRanker(v.name, { engine: v.engine, search, noEmbedder }), conversations, embedder);
    out.push(`chat R10 ${f(r.overall.r10)} nDCG ${f(r.overall.ndcg10)} S10 ${f(r.overall.s10)} [${catStr(r)}]`);
  }
  if (which.has('notes')) {
    const r = await evaluateRanker(engineRanker(v.name, { engine: v.engine, search, noEmbedder, noThreads: true, spacedDates: true }), conversations, embedder);
    out.push(`notes R10 ${f(r.overall.r10)} nDCG ${f(r.overall.ndcg10)} S10 ${f(r.overall.s10)}`);
  }
  if (beir) {
    const e = await docEngine(v.engine ?? {});
    let nd = 0, r100 = 0, nOnly = 0, ms = 0;
    for (const q of beir.queries) {
      const t = performance.now();
      const hits = (await e.search(q.text, { ...search, k: 10 })).hits;
      ms += performance.now() - t;
      nd += gradedNdcgAt(hits.map((h) => h.id), q.judged, 10);
      nOnly += hits.filter((h) => h.explain.bm25Rank === null && h.explain.vecRank === null).length;
      r100 += judgedRecallAt((await e.search(q.text, { ...search, k: 100 })).hits.map((h) => h.id), q.judged, 100);
    }
    const n = beir.queries.length;
    out.push(`docs nDCG ${f(nd / n)} R100 ${f(r100 / n)} nbrOnly ${nOnly} ${(ms / n).toFixed(1)}ms`);
  }
  console.log(out.join(' | '));
}
await closeEngines();
