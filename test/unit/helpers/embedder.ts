/**
 * A deterministic test embedder: a hashed bag of words (FNV-1a of each lowercase word → one of `dim`
 * buckets, signed), L2-normalised. Texts sharing words get a high cosine; identical bags of words get 1.
 * Test-only: it carries no meaning beyond word overlap.
 */
import type { Embedder } from '../../../src/index.js';

export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function bagOfWordsVector(text: string, dim: number): Float32Array {
  const vector = new Float32Array(dim);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const h = fnv1a(word);
    vector[h % dim] = (vector[h % dim] as number) + ((h >>> 16) & 1 ? 1 : -1);
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  return norm > 0 ? vector.map((x) => x / norm) : vector;
}

export interface TestEmbedder extends Embedder {
  /** Texts seen by embed, per call. */
  calls: string[][];
}

export function testEmbedder(options: { dim?: number; id?: string; countTokens?: (text: string) => number } = {}): TestEmbedder {
  const dim = options.dim ?? 256;
  const calls: string[][] = [];
  const embedder: TestEmbedder = {
    id: options.id ?? `test-bow-${dim}`,
    dim,
    calls,
    async embed(texts) {
      calls.push(texts.slice());
      return texts.map((t) => bagOfWordsVector(t, dim));
    },
  };
  if (options.countTokens) embedder.countTokens = options.countTokens;
  return embedder;
}

/** An embedder that maps exact texts to given vectors (others: a bag of words), for hand-built geometry. */
export function fixedEmbedder(table: Record<string, number[]>, dim: number, id = 'fixed'): Embedder {
  return {
    id,
    dim,
    async embed(texts) {
      return texts.map((t) => (table[t] ? Float32Array.from(table[t]) : bagOfWordsVector(t, dim)));
    },
  };
}
