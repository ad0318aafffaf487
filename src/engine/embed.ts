/** Calling an embedder safely: every failure becomes a coded error, every vector comes back unit-length. */
import { EngramError, ErrorCode, toEngramError } from '../errors.js';
import type { Embedder, Progress } from '../types.js';
import { throwIfAborted, type CallAbort } from '../util/abort.js';
import { nextTask } from '../util/schedule.js';
import { normalize } from '../vector/similarity.js';

/** What a text is embedded as: memories are documents, searches queries. */
export type EmbedRole = 'query' | 'document';

/** Embeds `texts` and returns L2-normalised vectors, checking the count, the length and finiteness. */
export async function embedTexts(embedder: Embedder, texts: readonly string[], role: EmbedRole = 'document'): Promise<Float32Array[]> {
  if (texts.length === 0) return [];
  let vectors: unknown;
  try {
    vectors = await embedder.embed(texts.slice(), role);
  } catch (error) {
    throw toEngramError(error, ErrorCode.EMBEDDER_FAILED, `embedder ${embedder.id} failed`);
  }
  if (!Array.isArray(vectors) || vectors.length !== texts.length) {
    throw new EngramError(
      ErrorCode.EMBEDDER_FAILED,
      `embedder ${embedder.id} returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} texts`,
    );
  }
  return vectors.map((vector: unknown, i) => {
    if (!(vector instanceof Float32Array) && !Array.isArray(vector)) {
      throw new EngramError(ErrorCode.EMBEDDER_FAILED, `embedder ${embedder.id} returned a non-vector at position ${i}`);
    }
    if (vector.length !== embedder.dim) {
      throw new EngramError(
        ErrorCode.DIMENSION_MISMATCH,
        `embedder ${embedder.id} declares dim ${embedder.dim} but returned a vector of length ${vector.length}`,
        { details: { expected: embedder.dim, actual: vector.length } },
      );
    }
    for (let j = 0; j < vector.length; j++) {
      if (!Number.isFinite(vector[j])) {
        throw new EngramError(ErrorCode.EMBEDDER_FAILED, `embedder ${embedder.id} returned a non-finite value in vector ${i}`);
      }
    }
    return normalize(vector as ArrayLike<number>);
  });
}

/** How long one embed call should take: progress, an abort and other calls get a turn at least about this often. */
export const EMBED_BATCH_TARGET_MS = 500;

/**
 * Sizes embed calls by how long the last one took: the first is small (a slow model on a slow device still reports
 * within a fraction of a second), each next one at most doubles and holds about EMBED_BATCH_TARGET_MS of work, never
 * more than `max` texts. A follower's write timeout counts from the last progress, so a fixed batch of 128 texts that
 * takes longer than the timeout on a loaded machine would cut off an add that is moving.
 */
export class BatchSizer {
  /** The size of the next batch. */
  size: number;

  constructor(
    private readonly max: number,
    private readonly now: () => number = () => performance.now(),
    first = 8,
  ) {
    this.size = Math.max(1, Math.min(max, first));
  }

  /** Runs the embedding of `count` texts, and sizes the next batch by how long it took. */
  async time<T>(count: number, run: () => Promise<T>): Promise<T> {
    const started = this.now();
    const result = await run();
    if (count > 0) {
      const perText = Math.max(this.now() - started, 0) / count;
      const fits = perText > 0 ? Math.floor(EMBED_BATCH_TARGET_MS / perText) : Infinity;
      this.size = Math.max(1, Math.min(this.max, 2 * count, fits));
    }
    return result;
  }
}

/**
 * Embeds in batches of at most `batchSize` (sized by BatchSizer), reporting progress after each batch and yielding a
 * task between batches; an aborted `abort.signal` stops it before the next batch with that method's ABORTED error.
 */
export async function embedInBatches(
  embedder: Embedder,
  texts: readonly string[],
  batchSize: number | BatchSizer,
  onProgress?: (progress: Progress) => void,
  abort?: CallAbort,
): Promise<Float32Array[]> {
  const sizer = typeof batchSize === 'number' ? new BatchSizer(batchSize) : batchSize;
  const out: Float32Array[] = [];
  while (out.length < texts.length) {
    if (out.length > 0) await nextTask();
    // Checked before each batch: a batch already sent to the model runs to its end, the next one never starts.
    throwIfAborted(abort?.signal, abort?.method ?? 'embed');
    const batch = texts.slice(out.length, out.length + sizer.size);
    out.push(...(await sizer.time(batch.length, () => embedTexts(embedder, batch))));
    onProgress?.({ done: out.length, total: texts.length });
  }
  return out;
}
