/**
 * boost = priority (1..2) × (pinned ? pinnedBoost : 1) × project factor × date factor × caller hook.
 * The date factor is `dateBoost` for a memory written on a date the query names (`isDated`, decided by adjust.ts
 * with search/dates.ts), else 1.
 * The project factor applies only when the search names a project: same project `projectBoost.same` (1.3),
 * another project `other` (0.8), a memory without project `none` (0.9).
 */
import { invalidInput } from '../errors.js';
import type { SearchOptions } from './options.js';
import type { MemoryRecord } from '../types.js';

type BoostOptions = Pick<SearchOptions, 'project' | 'projectBoost' | 'pinnedBoost' | 'dateBoost' | 'boost'>;

function projectFactor(record: MemoryRecord, options: BoostOptions): number {
  if (options.project === undefined) return 1;
  if (record.project === undefined) return options.projectBoost.none;
  return record.project === options.project ? options.projectBoost.same : options.projectBoost.other;
}

export function boost(record: MemoryRecord, options: BoostOptions, isDated = false): number {
  let factor = record.priority * (record.pinned ? options.pinnedBoost : 1) * projectFactor(record, options);
  if (isDated) factor *= options.dateBoost;
  if (options.boost) {
    const hook = options.boost(record);
    if (typeof hook !== 'number' || !Number.isFinite(hook) || hook < 0) {
      throw invalidInput(`the boost hook returned ${String(hook)} for memory "${record.id}"; it must return a finite number ≥ 0`);
    }
    factor *= hook;
  }
  return factor;
}
