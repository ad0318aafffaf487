/** Node side: the built-in model and its vectors for the corpus, cached per model build. */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalise, type Corpus } from './data.js';
import { cacheDir } from './node-data.js';
import { gloveRecipe, modelDir } from '../../scripts/models/index.js';
import type { Embedder } from '../../src/index.js';


export type ModelOrReason = { embedder: Embedder; loadMs: number; hash: string } | { reason: string };

/** The built-in model through the library's own `createEmbedder`, or why it is not available yet. */
export async function loadBuiltInModel(): Promise<ModelOrReason> {
  // bench/perf/run.ts runs `npm run ensure-model` first.
  const dir = modelDir(gloveRecipe().id);
  if (!existsSync(dir)) return { reason: `no built-in model at ${dir} (npm run model)` };
  // The embedder module itself: src/index.ts re-exports it once the embedder issue has landed.
  const { createEmbedder } = await import('../../src/embedder/index.js');
  const start = performance.now();
  const embedder = await createEmbedder();
  return { embedder, loadMs: performance.now() - start, hash: hashDir(dir) };
}

function hashDir(dir: string): string {
  const hash = createHash('sha1');
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(name).update(readFileSync(path));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 12);
}

/** The model's vectors for the corpus texts (n × dim), cached per model hash; also reports texts/s when computed. */
export async function modelVectors(model: { embedder: Embedder; hash: string }, corpus: Corpus, seedStem: string): Promise<{ vectors: Float32Array; textsPerSecond: number | null }> {
  const { embedder } = model;
  const file = join(cacheDir, `${seedStem}-${embedder.id.replace(/[^\w.@-]+/g, '_')}-${model.hash}.f32`);
  if (existsSync(file)) {
    const bytes = readFileSync(file);
    if (bytes.byteLength === corpus.n * embedder.dim * 4) {
      return { vectors: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)), textsPerSecond: null };
    }
  }
  const vectors = new Float32Array(corpus.n * embedder.dim);
  const batch = 64;
  const start = performance.now();
  for (let i = 0; i < corpus.n; i += batch) {
    const out = await embedder.embed(corpus.texts.slice(i, i + batch));
    out.forEach((v, j) => vectors.set(normalise(Float32Array.from(v)), (i + j) * embedder.dim));
  }
  const textsPerSecond = corpus.n / ((performance.now() - start) / 1000);
  // A fresh clone has no cache folder yet.
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(file, vectors);
  return { vectors, textsPerSecond };
}
