/**
 * Recency: how much of a memory's relevance survives its age.
 *   exponential: R = exp(−age / τ)
 *   hyperbolic:  R = 1 / (1 + days / halfLifeDays)      (R = 0.5 at one half-life)
 *   stability:   R from the memory's stability and last retrieval (retention.ts), whatever `decayFrom` says
 *   false:       R = 1
 * The factor applied is R^α (`decayAlpha`): α = 1 is the raw curve, smaller α damps it (α = 0.3 turns a
 * 0.25 retention into 0.66), so old but relevant facts stay reachable.
 * With `decayScope: 'sequences'` an age-based curve applies only to a memory in a sequence (a thread, a sitting):
 * for imported files, whose dates say nothing of whether a query that names no time wants them (docs/quality.md).
 */
import type { DecayOptions } from './options.js';
import { stabilityRetention } from './retention.js';
import type { MemoryRecord } from '../types.js';
import { DAY_MS } from '../util/time.js';


/** Raw retention R of an age-based curve for an age in ms (negative ages, i.e. future dates, and unreadable ones count as 0). */
export function retention(ageMs: number, decay: Exclude<DecayOptions, { kind: 'stability' }> | false): number {
  if (decay === false) return 1;
  const age = Number.isFinite(ageMs) ? Math.max(0, ageMs) : 0;
  if (decay.kind === 'exponential') return Math.exp(-age / decay.tauMs);
  return 1 / (1 + age / DAY_MS / decay.halfLifeDays);
}

/** The damped factor R^α. */
export function dampen(retentionValue: number, alpha: number): number {
  return Math.pow(retentionValue, alpha);
}

interface RecencyOptions {
  decay: DecayOptions | false;
  decayFrom: 'created' | 'accessed';
  decayAlpha: number;
  decayScope: 'sequences' | 'all';
}

/**
 * The time decay counts from creation, or from the last access (falling back to creation). `inSequence`: whether the
 * memory is in a thread or a sitting (ThreadIndex.inSequence), read only under `decayScope: 'sequences'`.
 */
export function recency(record: MemoryRecord, now: number, options: RecencyOptions, inSequence: boolean): number {
  if (options.decay !== false && options.decay.kind === 'stability') return dampen(stabilityRetention(record, now, options.decay), options.decayAlpha);
  if (options.decayScope === 'sequences' && !inSequence) return 1;
  const from = options.decayFrom === 'accessed' ? (record.lastAccessedAt ?? record.createdAt) : record.createdAt;
  return dampen(retention(now - from, options.decay), options.decayAlpha);
}
