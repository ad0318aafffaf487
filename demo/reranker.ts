/**
 * The demo's own re-ranker, given to `createMemory({ reranker })` and used by searches with `rerank: { by: 'hook' }`:
 * candidates that contain more of the query's words come first; ties keep the engine's order (its score). It is a
 * plain example of the hook, simple enough to check by eye: an app would put its own judgement here.
 */
import type { RerankCandidate } from '../src/index.js';

/** The query's distinct words of three letters or more, lowercased. */
export function queryWords(query: string): string[] {
  return [...new Set(query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word.length >= 3))];
}

export function queryWordsFirst(query: string, candidates: RerankCandidate[]): string[] {
  const words = queryWords(query);
  const found = (text: string) => {
    const own = new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u));
    return words.filter((word) => own.has(word)).length;
  };
  return candidates
    .map((candidate, index) => ({ id: candidate.id, index, found: found(candidate.text) }))
    .sort((a, b) => b.found - a.found || a.index - b.index)
    .map((candidate) => candidate.id);
}
