/** What both bench pages (page.ts, learning-page.ts) wait on and measure in the browser. */
import type { Memory } from '../../src/index.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Until the model is attached and every memory has its vector. */
export async function untilHybrid(memory: Memory, timeoutMs = 600_000): Promise<string> {
  const start = performance.now();
  for (;;) {
    const status = await memory.status();
    if (status.error) throw new Error(`bench: ${status.error.code}: ${status.error.message}`);
    if (status.embedder && !status.indexing) return status.embedder;
    if (performance.now() - start > timeoutMs) throw new Error(`bench: model not ready: ${JSON.stringify(status)}`);
    await sleep(10);
  }
}

/** The database file and its write-ahead log, as OPFS holds them. */
export async function bytesOnDisk(name: string): Promise<number> {
  const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('engram');
  let total = 0;
  for (const suffix of ['', '-wal', '-journal']) {
    total += await dir.getFileHandle(`${name}.sqlite3${suffix}`).then((h) => h.getFile()).then((f) => f.size, () => 0);
  }
  return total;
}
