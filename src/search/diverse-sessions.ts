/**
 * Session-diverse selection (CEMS's diverse assembly, `assembly: 'diverse'`), two phases over the candidates:
 *   1. the best memory of each session (`meta.thread`): each session's best-scored candidate represents it, and
 *      MMR orders the representatives, up to k of them;
 *   2. the rest of the k places by MMR across all candidates, the phase-1 picks counting for novelty.
 * Candidates with no session take part in phase 2 only, so a store without threads gets plain MMR. An aggregation
 * question ("what books has she read") has its answer spread over sessions, where greedy top-k may spend its
 * places on one session that matches best.
 */
import { mmrSelect, type MmrPick } from './mmr.js';
import type { DiversityOptions } from './options.js';

export function selectAcrossSessions(
  scores: readonly number[],
  sessions: readonly (string | undefined)[],
  k: number,
  options: DiversityOptions,
  similarity: (a: number, b: number) => number,
): MmrPick[] {
  const representative = new Map<string, number>();
  scores.forEach((score, i) => {
    const session = sessions[i];
    if (session === undefined) return;
    const current = representative.get(session);
    if (current === undefined || score > (scores[current] as number)) representative.set(session, i);
  });
  const reps = [...representative.values()].sort((a, b) => a - b);
  const phaseOne =
    reps.length > 0
      ? mmrSelect(reps.map((i) => scores[i] as number), Math.min(k, reps.length), options, (a, b) => similarity(reps[a] as number, reps[b] as number)).picked.map(
          ({ index, mmr }) => ({ index: reps[index] as number, mmr }),
        )
      : [];
  const phaseTwo = mmrSelect(scores, k - phaseOne.length, options, similarity, phaseOne.map((p) => p.index)).picked;
  return [...phaseOne, ...phaseTwo];
}
