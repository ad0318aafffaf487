/**
 * Sync cost (issue 33): how long a new device takes to receive N memories through a local S3 server (s3rver), with
 * and without re-embedding, and the bucket bytes per memory.
 *   npx tsx bench/sync.ts [--count 10000]
 * "embedding" uses the tests' bag-of-words embedder, so it measures the sync path around embedding, not a model:
 * add N × the per-text time of `npm run bench:embedder` for the built-in model.
 */
import { statSync } from 'node:fs';
import { createEngine, type Engine } from '../src/index.js';
import { testEmbedder } from '../test/unit/helpers/embedder.js';
import { startS3 } from '../test/unit/sync/s3-server.js';

const countArg = process.argv.indexOf('--count');
const count = countArg > 0 ? Number(process.argv[countArg + 1]) : 10_000;
const key = crypto.getRandomValues(new Uint8Array(32));

const s3 = await startS3();
try {
  const device = (embedded: boolean) =>
    createEngine({ embedder: embedded ? testEmbedder() : null, sync: { transport: s3.config, key, intervalMs: 0 } });
  const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
    const start = performance.now();
    const out = await run();
    return [out, performance.now() - start];
  };
  const a: Engine = await device(false);
  for (let start = 0; start < count; start += 5000) {
    await a.import(Array.from({ length: Math.min(5000, count - start) }, (_, i) => ({ text: `note ${start + i}: the detail of item ${start + i} about gardening, tomatoes and the weather`, tags: ['bench'] })));
  }
  const [, upload] = await timed(() => a.syncNow());
  const objects = s3.files().filter((f) => f.includes('/log/') && f.endsWith('._S3rver_object'));
  const bytes = objects.reduce((sum, f) => sum + statSync(f).size, 0);
  const [, lexical] = await timed(async () => (await device(false)).syncNow());
  const [, embedded] = await timed(async () => (await device(true)).syncNow());
  console.log(JSON.stringify({ memories: count, objects: objects.length, bucketBytesPerMemory: Math.round(bytes / count), uploadMs: Math.round(upload), receiveMs: Math.round(lexical), receiveWithEmbeddingMs: Math.round(embedded) }));
} finally {
  await s3.close();
}
