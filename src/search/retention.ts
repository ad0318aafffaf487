/**
 * Retention with stability (the cognitive-memory seed's model): how much of a memory survives since it was last
 * retrieved, given how stable use has made it.
 *   R = max(floor, exp(−days since last access / (S · B · β)))
 * S is the memory's stability (0–1, `INITIAL_STABILITY` until first reinforced), B = min(3, 1 + 2 × importance)
 * with importance = priority − 1, β = `betaDays`; the floor is `coreFloor` for a core memory, `floor` otherwise.
 * A memory is cold once R has sat at the floor for `COLD_AFTER_DAYS`; retrieving it resets the clock (hot again).
 */
import { DAY_MS } from '../util/time.js';
import type { MemoryRecord } from '../types.js';

/** Stability of a memory never reinforced (the seed's S₀). */
export const INITIAL_STABILITY = 0.3;
/** Days at the floor after which a memory counts as cold (the seed's 7 ticks of a day). */
export const COLD_AFTER_DAYS = 7;

/** `decay: { kind: 'stability' }`, each field defaulting as `DEFAULT_STABILITY_DECAY` says. */
export interface StabilityDecay {
  kind: 'stability';
  /** β: days of retention at stability 1 and importance 0 before R falls to 1/e. Default 120. */
  betaDays?: number;
  /** R never falls below this. Default 0.02. */
  floor?: number;
  /** R of a core memory never falls below this. Default 0.6. */
  coreFloor?: number;
}

export const DEFAULT_STABILITY_DECAY: Readonly<Required<StabilityDecay>> = Object.freeze({ kind: 'stability', betaDays: 120, floor: 0.02, coreFloor: 0.6 });

/** What retention reads of a memory. */
type RetentionFields = Pick<MemoryRecord, 'createdAt' | 'lastAccessedAt' | 'priority' | 'stability' | 'core'>;

/** S · B · β in days: the memory's time constant. */
function timeConstantDays(record: RetentionFields, decay: StabilityDecay): number {
  const importance = Math.min(1, Math.max(0, record.priority - 1));
  const boost = Math.min(3, 1 + 2 * importance);
  return (record.stability ?? INITIAL_STABILITY) * boost * (decay.betaDays ?? DEFAULT_STABILITY_DECAY.betaDays);
}

function floorOf(record: RetentionFields, decay: StabilityDecay): number {
  return record.core ? (decay.coreFloor ?? DEFAULT_STABILITY_DECAY.coreFloor) : (decay.floor ?? DEFAULT_STABILITY_DECAY.floor);
}

/** Days since the last retrieval (creation when never retrieved); future dates count as 0. */
export function daysSinceAccess(record: Pick<MemoryRecord, 'createdAt' | 'lastAccessedAt'>, now: number): number {
  const elapsed = now - (record.lastAccessedAt ?? record.createdAt);
  return Number.isFinite(elapsed) ? Math.max(0, elapsed) / DAY_MS : 0;
}

export function stabilityRetention(record: RetentionFields, now: number, decay: StabilityDecay): number {
  const tau = timeConstantDays(record, decay);
  const raw = tau > 0 ? Math.exp(-daysSinceAccess(record, now) / tau) : 0;
  return Math.max(floorOf(record, decay), raw);
}

/**
 * Whether R has been at the floor for `COLD_AFTER_DAYS` or more. A clock rule rather than the seed's count of
 * maintenance ticks: nothing has to run while the app is closed. Core memories never go cold.
 */
export function isCold(record: RetentionFields, now: number, decay: StabilityDecay = DEFAULT_STABILITY_DECAY): boolean {
  if (record.core) return false;
  const floor = floorOf(record, decay);
  const tau = timeConstantDays(record, decay);
  const daysToFloor = floor > 0 && floor < 1 ? tau * Math.log(1 / floor) : 0;
  return daysSinceAccess(record, now) >= daysToFloor + COLD_AFTER_DAYS;
}
