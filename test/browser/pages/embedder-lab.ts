/**
 * Page-side helpers for test/browser/embedder*.test.ts: they open embedders by name in this page (or in a module
 * worker) and hand back plain data across `page.evaluate`.
 */
import { createEmbedder, type EmbedderOptions, type LocalEmbedder } from '../../../src/embedder/index.js';

export type LabOptions = Omit<EmbedderOptions, 'onProgress'>;

export interface Opened {
  id: string;
  dim: number;
  device: string;
  choice: LocalEmbedder['deviceChoice'];
  loadMs: number;
  /** Distinct progress statuses in order of first appearance. */
  statuses: string[];
  /** Files transformers.js reported loading. */
  files: string[];
}

const embedders = new Map<string, LocalEmbedder>();

function describe(embedder: LocalEmbedder, statuses: string[], files: string[]): Opened {
  return { id: embedder.id, dim: embedder.dim, device: embedder.device, choice: embedder.deviceChoice, loadMs: embedder.loadMs, statuses, files };
}

export async function open(name: string, options: LabOptions = {}): Promise<Opened> {
  const statuses: string[] = [];
  const files = new Set<string>();
  const embedder = await createEmbedder({
    ...options,
    onProgress: (progress) => {
      if (!statuses.includes(progress.status)) statuses.push(progress.status);
      if ('file' in progress) files.add(progress.file);
    },
  });
  embedders.set(name, embedder);
  return describe(embedder, statuses, [...files]);
}

function get(name: string): LocalEmbedder {
  const embedder = embedders.get(name);
  if (!embedder) throw new Error(`no embedder named ${name}`);
  return embedder;
}

export async function embed(name: string, texts: string[]): Promise<{ vectors: number[][]; info: Opened }> {
  const embedder = get(name);
  const vectors = await embedder.embed(texts);
  return { vectors: vectors.map((v) => Array.from(v)), info: describe(embedder, [], []) };
}

export function countTokens(name: string, text: string): number {
  return get(name).countTokens(text);
}

export async function dispose(name: string): Promise<void> {
  await get(name).dispose();
  embedders.delete(name);
}

/** Loading must fail: returns the error's code and message. */
export async function openError(options: LabOptions): Promise<{ code?: string; message: string }> {
  try {
    const embedder = await createEmbedder(options);
    await embedder.dispose();
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message };
  }
  throw new Error('createEmbedder succeeded but was expected to fail');
}

/** The same in a module worker: what the Engram worker does. */
export function inWorker(options: LabOptions, texts: string[]): Promise<{ info: Opened; vectors: number[][] }> {
  const worker = new Worker(new URL('./embedder-lab-worker.ts', import.meta.url), { type: 'module' });
  return new Promise((resolve, reject) => {
    worker.onmessage = (event: MessageEvent<{ ok: boolean; result?: { info: Opened; vectors: number[][] }; error?: string }>) => {
      worker.terminate();
      if (event.data.ok) resolve(event.data.result!);
      else reject(new Error(event.data.error));
    };
    worker.onerror = (event) => {
      worker.terminate();
      reject(new Error(event.message));
    };
    worker.postMessage({ options, texts });
  });
}
