/**
 * A rule after `adjust`: a memory that a superseded memory derives from (the stored turn "I live in Lisbon" behind
 * the fact "The user lives in Lisbon", which "The user lives in Porto" replaced) never outranks the memory that
 * replaced it. Such a source still says the old version, and its own words often match a query better than the
 * fact does. When it scores at least the replacement's score (a candidate too), it is placed just below it (that
 * score × SOURCE_BELOW); nothing else moves.
 */
import type { ScoredCandidate } from './adjust.js';
import type { ProvenanceReader, RecordReader } from './state.js';

/** A demoted source's score relative to the memory that replaced what derives from it: just below it. */
export const SOURCE_BELOW = 0.99;
/** Supersede chains are followed this far to the live version (formation makes them one or two long). */
const MAX_CHAIN = 16;

export interface SourcesOutcome {
  /** Best first; the demoted candidates are copies carrying `source`. */
  scored: ScoredCandidate[];
  /** Candidates placed below a replacement. */
  demoted: number;
}

export function placeSupersededSources(scored: readonly ScoredCandidate[], provenance: ProvenanceReader, records: Pick<RecordReader, 'summary'>): SourcesOutcome {
  const position = new Map(scored.map((s, i) => [s.record.id, i]));
  // For each source among the candidates: the superseded memory behind it and its live version, when a candidate.
  const replaced = new Map<number, { of: string; by: string }[]>();
  scored.forEach((s, i) => {
    for (const derived of provenance.derivedFrom(s.record.id)) {
      if (records.summary(derived)?.supersededBy === undefined) continue;
      const by = liveVersion(derived, records);
      const at = position.get(by);
      if (at !== undefined && at !== i) replaced.set(i, [...(replaced.get(i) ?? []), { of: derived, by }]);
    }
  });
  if (replaced.size === 0) return { scored: scored.slice(), demoted: 0 };
  const out = scored.slice();
  let demoted = 0;
  // Lowest first, so a replacement that is itself demoted has its final score when its sources read it.
  for (let i = out.length - 1; i >= 0; i--) {
    const versions = replaced.get(i);
    if (!versions) continue;
    const lowest = versions.reduce((a, b) => (out[position.get(b.by)!]!.score < out[position.get(a.by)!]!.score ? b : a));
    const replacement = out[position.get(lowest.by)!]!.score;
    if (out[i]!.score < replacement) continue;
    out[i] = { ...out[i]!, score: replacement * SOURCE_BELOW, source: { ...lowest } };
    demoted++;
  }
  out.sort((a, b) => b.score - a.score);
  return { scored: out, demoted };
}

/** The end of `id`'s supersede chain: the memory that now says it (or the last one still stored). */
function liveVersion(id: string, records: Pick<RecordReader, 'summary'>): string {
  let current = id;
  for (let i = 0; i < MAX_CHAIN; i++) {
    const next = records.summary(current)?.supersededBy;
    if (next === undefined || !records.summary(next)) return current;
    current = next;
  }
  return current;
}
