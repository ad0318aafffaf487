/**
 * The `adjust` stage: each eligible candidate's final score, best first, then `minScore` (skipped when `raw`):
 *   score = (fused + qualityWeight × quality) × penalty × recency × boost,
 * quality being the memory's own (0–1, none: 0). Quality adds to the relevance rather than multiplying the
 * score, so a good memory gains the same whatever its match, and a memory that did not match is never a candidate.
 */
import { boost } from './boost.js';
import { writtenWithin } from './dates.js';
import { recency } from './decay.js';
import type { Eligible } from './filter.js';
import type { FusedCandidate } from './fuse.js';
import type { SearchOptions } from './options.js';
import type { DateMention, MemoryRecord } from '../types.js';

/** A candidate with every factor of its score, as the later stages and `explain` need them. */
export interface ScoredCandidate {
  candidate: FusedCandidate;
  record: MemoryRecord;
  penalty: number;
  recency: number;
  boost: number;
  score: number;
  /** `qualityWeight × quality`, included in `score`. */
  quality: number;
  /** Written on a date the query names: `boost` includes `dateBoost`. */
  dated?: boolean;
  /** Set by the diversify stage: the MMR value when picked. */
  mmr?: number;
  /** Set by the diversify stage with `assembly: 'cover'` or `'hedge'`: placed for its thread, which the lexical leg reached. */
  covers?: { thread: string; lexicalRank: number };
  /** Set by the currency stage: the later version of the same fact, placed just above this one. */
  newerVersion?: string;
  /** Set by the rerank stage. */
  rerank?: { by: 'llm' | 'hook' | 'rules'; from: number; to: number };
  /** Set after adjust (superseded-sources.ts): `of`, superseded by `by`, derives from it; placed just below `by`. */
  source?: { of: string; by: string };
}

/** `inSequence`: whether a memory is in a thread or a sitting (ThreadIndex.inSequence), for `decayScope`. */
export function adjust(eligible: readonly Eligible[], options: SearchOptions, now: number, inSequence: (id: string) => boolean, dates?: readonly DateMention[]): ScoredCandidate[] {
  const scored: ScoredCandidate[] = eligible.map(({ candidate, record, penalty }) => {
    const r = recency(record, now, options, options.decayScope === 'all' || inSequence(record.id));
    const isDated = dates !== undefined && options.dateBoost !== 1 && writtenWithin(record.createdAt, dates);
    const b = boost(record, options, isDated);
    const quality = record.quality === undefined ? 0 : options.qualityWeight * record.quality;
    // Spelled out rather than spread: one object per candidate on every search.
    const s: ScoredCandidate = { candidate, record, penalty, recency: r, boost: b, quality, score: (candidate.fused + quality) * penalty * r * b };
    if (isDated) s.dated = true;
    return s;
  });
  scored.sort((a, b) => b.score - a.score);
  return options.raw ? scored : scored.filter((s) => s.score >= options.minScore);
}
