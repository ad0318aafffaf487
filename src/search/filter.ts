/**
 * Hard constraints. A memory is eligible when it passes the caller's `filter`, its `validUntil` has not
 * passed (now ≤ validUntil; unless asked for, below), and it is not superseded (unless `deepRecall`). An expired
 * memory of kind `plan` or `transient_state` comes back with `includeExpiredTransients`, and any expired memory with
 * `deepRecall` and `includeExpiredInDeepRecall`; either way it scores × `deepRecallPenalty`, as a superseded one
 * does. Eligibility is applied inside
 * the legs, so each leg's `candidatePool` holds only eligible memories and filters never starve results;
 * the filter stage re-checks the fused list (free when the legs did their job) and applies the deepRecall
 * penalty to superseded memories.
 */
import { invalidInput } from '../errors.js';
import type { FusedCandidate } from './fuse.js';
import type { SearchFilter } from './options.js';
import { toEpochMs } from '../util/dates.js';
import type { MemoryRecord } from '../types.js';

/** What eligibility reads of a memory: a full record, or the engine's summary of one (store.ts RecordSummary). */
type EligibilityFields = Pick<MemoryRecord, 'project' | 'scope' | 'tags' | 'kind' | 'createdAt' | 'validUntil' | 'supersededBy' | 'core'>;

/** Kinds whose expiry ends their relevance but which `includeExpiredTransients` brings back (the seed's). */
const TRANSIENT_KINDS: ReadonlySet<string> = new Set(['plan', 'transient_state']);
export type Eligibility = (record: EligibilityFields) => boolean;

interface EligibilityOptions {
  filter: SearchFilter;
  deepRecall: boolean;
  now: number;
  includeExpiredTransients?: boolean;
  includeExpiredInDeepRecall?: boolean;
  /** False when no memory has an expiry date or is superseded (lets an unfiltered search skip all checks). */
  anyRestricted?: boolean;
}

/**
 * One predicate for a whole search; validates the filter once (INVALID_INPUT on a bad field). Null when every
 * memory is eligible: no caller filter and, per `anyRestricted`, nothing expired or superseded to exclude.
 */
export function compileEligibility(options: EligibilityOptions): Eligibility | null {
  const { filter, deepRecall, now, anyRestricted = true } = options;
  const checks: Eligibility[] = [];
  const projects = oneOrMany(filter.project, 'filter.project');
  const scopes = oneOrMany(filter.scope, 'filter.scope');
  const tags = stringList(filter.tags, 'filter.tags');
  const kinds = stringList(filter.kinds, 'filter.kinds');
  if (projects) checks.push((r) => r.project !== undefined && projects.has(r.project));
  if (scopes) checks.push(scopeCheck(scopes));
  const tagList = tags ? [...tags] : [];
  if (tagList.length > 0) checks.push((r) => tagList.every((t) => r.tags.includes(t)));
  if (kinds) checks.push((r) => r.kind !== undefined && kinds.has(r.kind));
  if (filter.since !== undefined) {
    const since = toEpochMs(filter.since, 'filter.since');
    checks.push((r) => r.createdAt >= since);
  }
  if (filter.until !== undefined) {
    const until = toEpochMs(filter.until, 'filter.until');
    checks.push((r) => r.createdAt <= until);
  }
  if (filter.core !== undefined) {
    if (typeof filter.core !== 'boolean') throw invalidInput('filter.core must be true or false');
    const core = filter.core;
    checks.push((r) => (r.core === true) === core);
  }
  if (checks.length === 0 && !anyRestricted) return null;
  const everyExpired = deepRecall && options.includeExpiredInDeepRecall === true;
  const expiredTransients = options.includeExpiredTransients === true;
  if (!everyExpired) {
    checks.push((r) => r.validUntil === undefined || now <= r.validUntil || (expiredTransients && r.kind !== undefined && TRANSIENT_KINDS.has(r.kind)));
  }
  if (!deepRecall) checks.push((r) => r.supersededBy === undefined);
  return (record) => checks.every((check) => check(record));
}

/**
 * `filter.scope` (CEMS's scopes): `'personal'` matches memories scoped `'personal'` and memories with no scope (a
 * memory is the user's own unless marked otherwise); `'shared'` matches `'shared'`; `'both'` matches either; any
 * other label matches itself. A list matches any of its entries.
 */
function scopeCheck(scopes: ReadonlySet<string>): Eligibility {
  const personal = scopes.has('personal') || scopes.has('both');
  const wanted = new Set(scopes);
  if (scopes.has('both')) wanted.add('personal').add('shared');
  return (r) => (r.scope === undefined ? personal : wanted.has(r.scope));
}

/** A fused candidate that passed the filter stage, with its record and its deep-recall penalty. */
export interface Eligible {
  candidate: FusedCandidate;
  record: MemoryRecord;
  penalty: number;
}

/**
 * The `filter` stage: the fused candidates whose memory still exists and is eligible, each with its score factor.
 * The legs applied eligibility already; this catches what they did not see: candidates the neighbours stage
 * brought in, and memories removed while the query was being embedded.
 */
export function filterCandidates(
  fused: readonly FusedCandidate[],
  recordOf: (id: string) => MemoryRecord | undefined,
  eligible: ((record: MemoryRecord) => boolean) | null,
  deepRecallPenalty: number,
  now: number,
): Eligible[] {
  return fused.flatMap((candidate) => {
    const record = recordOf(candidate.id);
    if (!record || (eligible && !eligible(record))) return [];
    return [{ candidate, record, penalty: penaltyFactor(record, deepRecallPenalty, now) }];
  });
}

/** Score factor for an eligible memory: × `deepRecallPenalty` when superseded, and again when expired; else 1. */
export function penaltyFactor(record: Pick<MemoryRecord, 'supersededBy' | 'validUntil'>, deepRecallPenalty: number, now: number): number {
  const superseded = record.supersededBy === undefined ? 1 : deepRecallPenalty;
  return record.validUntil !== undefined && now > record.validUntil ? superseded * deepRecallPenalty : superseded;
}

/** Entries a filter list may hold: enough for any app's tags or projects, small enough to cross a tab in one message. */
export const MAX_FILTER_VALUES = 1_000;

function oneOrMany(value: unknown, field: string): Set<string> | null {
  if (value === undefined) return null;
  return stringList(typeof value === 'string' ? [value] : value, field);
}

function stringList(value: unknown, field: string): Set<string> | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw invalidInput(`${field} must be a string array`);
  }
  if (value.length > MAX_FILTER_VALUES) throw invalidInput(`${field} must have at most ${MAX_FILTER_VALUES} entries`, { length: value.length });
  return new Set(value as string[]);
}
