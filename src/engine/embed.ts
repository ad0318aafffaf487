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

/**
 * Embeds in batches of `batchSize`, reporting progress after each batch and yielding a task between batches; an
 * aborted `abort.signal` stops it before the next batch with that method's ABORTED error.
 */
export async function embedInBatches(
  embedder: Embedder,
  texts: readonly string[],
  batchSize: number,
  onProgress?: (progress: Progress) => void,
  abort?: CallAbort,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    if (start > 0) await nextTask();
    // Checked before each batch: a batch already sent to the model runs to its end, the next one never starts.
    throwIfAborted(abort?.signal, abort?.method ?? 'embed');
    out.push(...(await embedTexts(embedder, texts.slice(start, start + batchSize))));
    onProgress?.({ done: out.length, total: texts.length });
  }
  return out;
}
