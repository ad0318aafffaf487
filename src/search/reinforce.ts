/**
 * The `reinforce` stage, after the answer (the cognitive-memory seed): every hit counts an access and gains
 * stability by the spaced-repetition factor, and the session is recorded; a memory that has been used enough
 * becomes core. The engine applies the plan in memory at once and writes it in the background with the pairs of
 * direct hits it strengthens (engine/touch-writer.ts), so the answer never waits for it.
 *   factor = min(maxSpacingFactor, days since the last retrieval / spacingDays)
 *   stability ← min(1, stability + boost × factor),  boost = directBoost, or associativeBoost for an associative hit
 *   core once accessCount ≥ core.accessCount, stability ≥ core.stability and sessions ≥ core.sessions
 */
import { daysSinceAccess, INITIAL_STABILITY } from './retention.js';
import type { MemoryRecord } from '../types.js';

/** Engine option `learning`: the constants of learning from use. Every default is the seed's (docs/learning.md). */
export interface LearningOptions {
  /** Stability a direct hit gains per unit of spacing factor. Default 0.1. */
  directBoost: number;
  /** Stability an associative hit gains per unit of spacing factor. Default 0.03. */
  associativeBoost: number;
  /** Days between retrievals that make a factor of 1. Default 7. */
  spacingDays: number;
  /** Largest spacing factor. Default 2. */
  maxSpacingFactor: number;
  /** Weight one co-retrieval adds to an association. Default 0.1. */
  associationStep: number;
  /** Days for an association's weight to fall to 1/e without use. Default 90. */
  associationDecayDays: number;
  /** Associations kept per memory (the weakest goes first). Default 32. */
  maxAssociations: number;
  /** Promotion to core, or `false` for none. Default `{ accessCount: 10, stability: 0.85, sessions: 3 }`. */
  core: { accessCount: number; stability: number; sessions: number } | false;
}

/** Distinct sessions a memory remembers (enough for any sensible `core.sessions`). */
export const MAX_SESSIONS = 8;

export const defaultLearningOptions: Readonly<LearningOptions> = Object.freeze({
  directBoost: 0.1,
  associativeBoost: 0.03,
  spacingDays: 7,
  maxSpacingFactor: 2,
  associationStep: 0.1,
  associationDecayDays: 90,
  maxAssociations: 32,
  core: Object.freeze({ accessCount: 10, stability: 0.85, sessions: 3 }),
});

export function spacingFactor(record: Pick<MemoryRecord, 'createdAt' | 'lastAccessedAt'>, now: number, learning: LearningOptions): number {
  return Math.min(learning.maxSpacingFactor, daysSinceAccess(record, now) / learning.spacingDays);
}

/** The record after one retrieval at `now` in `session`. */
export function reinforced(record: MemoryRecord, associative: boolean, now: number, session: string, learning: LearningOptions): MemoryRecord {
  const boost = associative ? learning.associativeBoost : learning.directBoost;
  const stability = Math.min(1, (record.stability ?? INITIAL_STABILITY) + boost * spacingFactor(record, now, learning));
  const sessions = (record.sessions ?? []).filter((s) => s !== session);
  sessions.push(session);
  const next: MemoryRecord = {
    ...record,
    accessCount: record.accessCount + 1,
    lastAccessedAt: now,
    stability,
    sessions: sessions.slice(-MAX_SESSIONS),
  };
  if (!next.core && qualifiesForCore(next, learning)) next.core = true;
  return next;
}

export function qualifiesForCore(record: Pick<MemoryRecord, 'accessCount' | 'stability' | 'sessions'>, learning: LearningOptions): boolean {
  const rule = learning.core;
  return rule !== false && record.accessCount >= rule.accessCount && (record.stability ?? INITIAL_STABILITY) >= rule.stability && (record.sessions?.length ?? 0) >= rule.sessions;
}
