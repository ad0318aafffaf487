/**
 * The `adjust` stage: each eligible candidate's final score, `fused × penalty × recency × boost`, best first,
 * then `minScore` (skipped when `raw`).
 */
import { boost } from './boost.js';
import { recency } from './decay.js';
import type { Eligible } from './filter.js';
import type { FusedCandidate } from './fuse.js';
import type { SearchOptions } from './options.js';
import type { MemoryRecord } from '../types.js';

/** A candidate with every factor of its score, as the later stages and `explain` need them. */
export interface Scored {
  candidate: FusedCandidate;
  record: MemoryRecord;
  penalty: number;
  recency: number;
  boost: number;
  score: number;
  /** Set by the diversify stage: the MMR value when picked. */
  mmr?: number;
}

export function adjust(eligible: readonly Eligible[], options: SearchOptions, now: number): Scored[] {
  const scored: Scored[] = eligible.map(({ candidate, record, penalty }) => {
    const r = recency(record, now, options);
    const b = boost(record, options);
    // Spelled out rather than spread: one object per candidate on every search.
    return { candidate, record, penalty, recency: r, boost: b, score: candidate.fused * penalty * r * b };
  });
  scored.sort((a, b) => b.score - a.score);
  return options.raw ? scored : scored.filter((s) => s.score >= options.minScore);
}
