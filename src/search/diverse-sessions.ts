/**
 * Session-diverse selection (CEMS's diverse assembly, `assembly: 'diverse'`), two phases over the candidates:
 *   1. the best memory of each session (`meta.thread`): each session's best-scored candidate represents it, and
 *      MMR orders the representatives, up to k of them;
 *   2. the rest of the k places by MMR across all candidates, the phase-1 picks counting for novelty.
 * Candidates with no session take part in phase 2 only, so a store without threads gets plain MMR. An aggregation
 * question ("what books has she read") has its answer spread over sessions, where greedy top-k may spend its
 * places on one session that matches best.
 *
 * The context is filled in the same two phases (`contextOrder`), over the k hits rather than the candidates: a
 * greedy fill by score would again spend a tight token budget on the one session that matches best.
 */
import { mmrSelect, type MmrPick } from './mmr.js';
import type { DiversityOptions } from './options.js';

export function selectAcrossSessions(
  scores: readonly number[],
  sessions: readonly (string | undefined)[],
  k: number,
  options: DiversityOptions,
  similarity: (a: number, b: number) => number,
  duplicate: (a: number, b: number) => boolean = () => false,
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
      ? mmrSelect(reps.map((i) => scores[i] as number), Math.min(k, reps.length), options, (a, b) => similarity(reps[a] as number, reps[b] as number), [], (a, b) => duplicate(reps[a] as number, reps[b] as number)).picked.map(
          ({ index, mmr }) => ({ index: reps[index] as number, mmr }),
        )
      : [];
  const phaseTwo = mmrSelect(scores, k - phaseOne.length, options, similarity, phaseOne.map((p) => p.index), duplicate).picked;
  return [...phaseOne, ...phaseTwo];
}

/** MMR λ of a diverse context's order: CEMS's value for its diverse assembly, taken as the seed has it, not tuned here. */
export const CONTEXT_MMR_LAMBDA = 0.6;

/**
 * The order in which a diverse context is filled, as indices into the hits: phase 1, each session's best hit, by
 * MMR with λ = CONTEXT_MMR_LAMBDA; phase 2, the rest (and every hit without a session), by MMR continuing from
 * phase 1. Every hit is placed: the hits already passed duplicate drop, so nothing is dropped here.
 */
export function contextOrder(
  scores: readonly number[],
  sessions: readonly (string | undefined)[],
  diversity: DiversityOptions,
  similarity: (a: number, b: number) => number,
): number[] {
  const options = { ...diversity, lambda: CONTEXT_MMR_LAMBDA, duplicateThreshold: Infinity };
  return selectAcrossSessions(scores, sessions, scores.length, options, similarity).map((p) => p.index);
}
