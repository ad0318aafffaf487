/**
 * The long-text policy on documents: `npm run eval:long-text -- [--beir <folder>] [--static <modelPath>]`.
 * BEIR NFCorpus added in one call (as the documents part of `npm run eval`), searched by the vector leg alone and by
 * Engram's defaults, with `longText: 'chunks'` and `'truncate'`, at the model's length and at shorter ones (so that
 * more abstracts run past it). `--static` adds minishlab/potion-base-4m-int8 converted into that folder
 * (`npm run model:static`). Figures go to stdout; docs/embedder.md keeps the latest.
 */
import { resolve } from 'node:path';
import { createEmbedder, createEngine, type LocalEmbedder } from '../src/index.js';
import { gradedNdcgAt, judgedRecallAt, readBeirOrSkip, type BeirSet } from './lib/beir.js';
import { pureLeg } from './lib/rankers.js';

const NOW = Date.UTC(2026, 0, 1);

function argOf(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

async function measure(set: BeirSet, embedder: LocalEmbedder): Promise<string> {
  const inputs = set.documents.map((d) => ({ id: d.id, text: `${d.title}\n${d.text}` }));
  const long = inputs.filter((d) => embedder.countTokens(d.text) + 2 > embedder.maxTokens).length;
  const engine = await createEngine({ clock: () => NOW, embedder });
  const started = performance.now();
  await engine.add(inputs);
  const addSeconds = (performance.now() - started) / 1000;
  const scores: string[] = [];
  for (const options of [{ ...pureLeg, mode: 'vector' as const }, {}]) {
    let ndcg = 0, r100 = 0;
    for (const q of set.queries) {
      ndcg += gradedNdcgAt((await engine.search(q.text, { touch: false, ...options, k: 10 })).hits.map((h) => h.id), q.judged, 10);
      r100 += judgedRecallAt((await engine.search(q.text, { touch: false, ...options, k: 100 })).hits.map((h) => h.id), q.judged, 100);
    }
    scores.push((ndcg / set.queries.length).toFixed(4), (r100 / set.queries.length).toFixed(4));
  }
  await engine.close();
  return `| ${embedder.model} | ${embedder.maxTokens} | ${long} | \`${embedder.longText}\` | ${scores.join(' | ')} | ${addSeconds.toFixed(1)} |`;
}

const set = readBeirOrSkip(resolve(argOf('--beir') ?? '../shared/data/beir-nfcorpus'), 'test', 'eval:long-text');
if (set) {
  const staticPath = argOf('--static');
  const models = [{ model: undefined, modelPath: undefined }, ...(staticPath ? [{ model: 'minishlab/potion-base-4m-int8', modelPath: resolve(staticPath) }] : [])];
  console.log(`NFCorpus: ${set.documents.length} documents, ${set.queries.length} test queries.\n`);
  console.log('| model | maxTokens | documents longer | longText | vector nDCG@10 | vector R@100 | defaults nDCG@10 | defaults R@100 | add s |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const { model, modelPath } of models) {
    for (const maxTokens of [undefined, 256, 128]) {
      for (const longText of ['chunks', 'truncate'] as const) {
        const embedder = await createEmbedder({ ...(model ? { model, modelPath } : {}), ...(maxTokens ? { maxTokens } : {}), longText });
        console.log(await measure(set, embedder));
        await embedder.dispose();
      }
    }
  }
}
