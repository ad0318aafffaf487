/** A selected candidate as the `Hit` a caller sees, with `explain` holding every factor of its score. */
import type { ScoredCandidate } from './adjust.js';
import type { Hit } from '../types.js';

export function toHit(s: ScoredCandidate): Hit {
  const { candidate, record } = s;
  const explain: Hit['explain'] = {
    bm25Rank: candidate.rank.lexical,
    vecRank: candidate.rank.vector,
    bm25: candidate.legScore.lexical,
    cosine: candidate.legScore.vector,
    fused: candidate.fused,
    recency: s.recency,
    boost: s.boost,
  };
  if (candidate.rrf !== undefined) explain.rrf = candidate.rrf;
  if (record.supersededBy !== undefined) explain.superseded = true;
  if (s.mmr !== undefined) explain.mmr = s.mmr;
  if (s.covers) explain.covers = { ...s.covers };
  if (s.dated) explain.dated = true;
  if (candidate.neighbour) explain.neighbour = { ...candidate.neighbour };
  if (candidate.feedback) explain.feedback = { ...candidate.feedback };
  if (candidate.lists) explain.lists = { ...candidate.lists, ranks: [...candidate.lists.ranks] };
  if (record.quality !== undefined) explain.quality = { value: record.quality, added: s.quality };
  if (s.rerank) explain.rerank = { ...s.rerank };
  if (s.newerVersion !== undefined) explain.newerVersion = s.newerVersion;
  if (s.source) explain.source = { ...s.source };
  if (candidate.associative) explain.associative = { ...candidate.associative };
  return { id: record.id, text: record.text, score: s.score, memory: record, explain };
}
