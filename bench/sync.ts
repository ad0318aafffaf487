/**
 * Sync cost (issue 33): how long a new device takes to receive N memories through a local S3 server (s3rver) —
 * from the log and from a snapshot, without embedding and with the built-in model (`createEmbedder()`, the
 * GloVe-SIF model in models/), and that model's embedding time alone — and the bucket bytes per memory.
 *   npx tsx bench/sync.ts [--count 10000]   (or `npm run bench -- --sections sync`)
 */
import { statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createEmbedder } from '../src/embedder/index.js';
import { createEngine, type Embedder, type Engine } from '../src/index.js';
import { memoryStore } from '../src/store/memory-store.js';
import type { Store } from '../src/store/store.js';
import { startS3 } from '../test/unit/sync/s3-server.js';

const countArg = process.argv.indexOf('--count');
const count = countArg > 0 ? Number(process.argv[countArg + 1]) : 10_000;
const key = crypto.getRandomValues(new Uint8Array(32));
const text = (i: number) => `note ${i}: the detail of item ${i} about gardening, tomatoes and the weather`;
const timed = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
  const start = performance.now();
  const out = await run();
  return [out, Math.round(performance.now() - start)];
};

const loadStart = loadavg()[0]!;
const s3 = await startS3();
try {
  const model = await createEmbedder();
  const sync = (snapshotEvery: number) => ({ transport: s3.config, key, intervalMs: 0, snapshotEvery, retainMs: Number.MAX_SAFE_INTEGER });
  const device = (embedder: Embedder | null, store?: Store) => createEngine({ embedder, ...(store ? { store } : {}), sync: sync(0) });
  /** A new device's first round: every memory received (and embedded when it has a model). */
  const receive = async (embedder: Embedder | null) => {
    const engine: Engine = await device(embedder);
    const [, ms] = await timed(() => engine.syncNow());
    if ((await engine.count()) !== count) throw new Error(`received ${await engine.count()} of ${count}`);
    await engine.close();
    return ms;
  };
  const bytesUnder = (part: string) => s3.files().filter((f) => f.includes(`/${part}/`) && f.endsWith('._S3rver_object')).reduce((sum, f) => sum + statSync(f).size, 0);

  const store = memoryStore();
  const a = await device(null, store);
  for (let start = 0; start < count; start += 5000) {
    await a.import(Array.from({ length: Math.min(5000, count - start) }, (_, i) => ({ text: text(start + i), tags: ['bench'] })));
  }
  const [, uploadMs] = await timed(() => a.syncNow());
  const logBytes = bytesUnder('log');
  const fromLog = { receiveMs: await receive(null), receiveWithModelMs: await receive(model) };
  // The same device (its store keeps its sync state) with snapshots on: its next round writes one.
  const writer = await createEngine({ embedder: null, store: Object.assign(Object.create(store) as Store, { close: async () => undefined }), sync: sync(1) });
  const [, snapshotWriteMs] = await timed(() => writer.syncNow());
  const snapshotBytes = bytesUnder('snap');
  if (snapshotBytes === 0) throw new Error('no snapshot was written');
  const fromSnapshot = { receiveMs: await receive(null), receiveWithModelMs: await receive(model) };
  const [, embedOnlyMs] = await timed(async () => {
    for (let start = 0; start < count; start += 256) await model.embed(Array.from({ length: Math.min(256, count - start) }, (_, i) => text(start + i)), 'document');
  });
  console.log(
    JSON.stringify({
      memories: count,
      model: model.id,
      uploadMs,
      logBytesPerMemory: Math.round(logBytes / count),
      snapshotBytesPerMemory: Math.round(snapshotBytes / count),
      snapshotWriteMs,
      fromLog,
      fromSnapshot,
      embedOnlyMs,
      load: { start: loadStart, end: loadavg()[0] },
    }),
  );
} finally {
  await s3.close();
}
