/**
 * The inner-loop tier, `npm run test:fast` (vitest --mode fast sets ENGRAM_FAST=1): property tests run a tenth of
 * their cases and heavy campaigns are left to `npm test`, which still runs everything in full.
 */
export const FAST_TIER = process.env.ENGRAM_FAST === '1';

/** How many cases a fast-check property runs: `full` under `npm test`, a tenth of it (at least 10) in the fast tier. */
export function runs(full: number): number {
  return FAST_TIER ? Math.max(10, Math.ceil(full / 10)) : full;
}
