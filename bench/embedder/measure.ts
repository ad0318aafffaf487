/**
 * The embedder benchmark's measurement, shared by the Node driver and the browser page: the same corpus, the same
 * loop, the same numbers. Runs in Node and in a page (no Node or DOM APIs).
 */
import { createEmbedder, type EmbedderOptions } from '../../src/embedder/index.js';

export const BATCH_SIZES = [1, 8, 64] as const;

export interface ModelCase {
  label: string;
  options: EmbedderOptions;
}

/** The built-in model (q8, as shipped) and the tiny random BERT (2 layers, hidden 32: the transformer code path). */
export const MODEL_CASES: ModelCase[] = [
  { label: 'built-in engram/glove-100d q8', options: {} },
  { label: 'tiny random BERT fp32', options: { model: 'engram/tiny-random-bert', dtype: 'fp32' } },
];

export interface Throughput {
  batchSize: number;
  sentences: number;
  sentencesPerSecond: number;
}

export interface CaseResult {
  model: string;
  device: string;
  id: string;
  /** First createEmbedder of this model in this process/page (the first one also pays for importing transformers.js). */
  loadMs: number;
  /** A second createEmbedder of the same model: what a reload costs once the runtime is warm. */
  warmLoadMs: number;
  throughput: Throughput[];
}

/** Texts per `embed` call, at most: like `engine.add` of many memories, so the embedder sorts them into even batches. */
const CALL_SIZE = 256;

/**
 * Embeds the corpus in calls of up to CALL_SIZE texts (the embedder splits each into `batchSize` runs) until the
 * corpus is done or the time budget is spent; sentences/s counts what actually ran. The warm-up run also sizes the
 * calls, so a slow device (SwiftShader WebGPU: seconds per run) still fits several calls in the budget.
 */
async function throughput(embed: (texts: string[]) => Promise<unknown>, corpus: string[], batchSize: number, budgetMs: number): Promise<Throughput> {
  let started = performance.now();
  await embed(corpus.slice(0, batchSize));
  const msPerText = (performance.now() - started) / batchSize;
  const callSize = Math.max(batchSize, Math.min(CALL_SIZE, Math.floor(budgetMs / 4 / msPerText / batchSize) * batchSize));
  started = performance.now();
  let done = 0;
  while (done < corpus.length && performance.now() - started < budgetMs) {
    const call = corpus.slice(done, done + callSize);
    await embed(call);
    done += call.length;
  }
  const seconds = (performance.now() - started) / 1000;
  return { batchSize, sentences: done, sentencesPerSecond: done / seconds };
}

export async function measureCase(model: ModelCase, device: EmbedderOptions['device'], corpus: string[], budgetMs: number): Promise<CaseResult> {
  let started = performance.now();
  const first = await createEmbedder({ ...model.options, device });
  const loadMs = performance.now() - started;
  started = performance.now();
  const second = await createEmbedder({ ...model.options, device });
  const warmLoadMs = performance.now() - started;
  await second.dispose();
  const results: Throughput[] = [];
  for (const batchSize of BATCH_SIZES) {
    const sized = await createEmbedder({ ...model.options, device, batchSize });
    results.push(await throughput((texts) => sized.embed(texts), corpus, batchSize, budgetMs));
    await sized.dispose();
  }
  const result = { model: model.label, device: first.device, id: first.id, loadMs, warmLoadMs, throughput: results };
  await first.dispose();
  return result;
}
