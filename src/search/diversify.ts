/**
 * The `diversify` stage: MMR (mmr.ts) over the head of the list, or by session first (diverse-sessions.ts).
 */
import type { ScoredCandidate } from './adjust.js';
import { contextOrder, selectAcrossSessions } from './diverse-sessions.js';
import { mmrSelect } from './mmr.js';
import { threadOf } from './thread-index.js';
import type { DiversityOptions, SearchOptions } from './options.js';
import { statementKey } from '../lexical/statement.js';
import { calibratedCosine, dot } from '../vector/similarity.js';
import type { VectorIndex } from '../vector/vector-index.js';

/** |A ∩ B| / |A ∪ B| of two tag lists; 0 when both are empty. */
export function tagJaccard(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const left = new Set(a);
  const right = new Set(b);
  let shared = 0;
  for (const tag of left) if (right.has(tag)) shared++;
  return shared / (left.size + right.size - shared);
}

/**
 * Redundancy of two candidates: max(similarity, tagWeight × Jaccard of their tags) (Memsense), similarity being
 * cosine calibrated against `baseline`, the corpus' mean pairwise cosine (0: raw cosine; see vector/similarity.ts);
 * without vectors only memories that say the same thing (`textKey`, their statement keys) are similar.
 */
function redundancy(
  list: readonly ScoredCandidate[],
  diversity: DiversityOptions,
  vectors: VectorIndex | null,
  baseline: number,
  textKey: (i: number) => string = statementKeysOf(list),
): (a: number, b: number) => number {
  // Views into the matrix, not copies: selection is synchronous, so no write can move a row meanwhile.
  const vectorOf = list.map((s) => vectors?.get(s.record.id));
  // resolveSearchOptions fills in the default; only a direct caller of this stage can leave it out.
  const tagWeight = diversity.tagWeight ?? 0;
  const textSimilarity = (a: number, b: number) => {
    const va = vectorOf[a];
    const vb = vectorOf[b];
    if (va && vb) return calibratedCosine(dot(va, vb), baseline);
    return textKey(a) === textKey(b) ? 1 : 0;
  };
  // Without a shared tag the similarity stands as it is: calibrated cosine may be negative, and max(·, 0) would
  // change MMR's novelty for memories that have no tags at all.
  return tagWeight > 0
    ? (a: number, b: number) => {
        const shared = tagJaccard((list[a] as ScoredCandidate).record.tags, (list[b] as ScoredCandidate).record.tags);
        const sim = textSimilarity(a, b);
        return shared > 0 ? Math.max(sim, tagWeight * shared) : sim;
      }
    : textSimilarity;
}

/** Each candidate's statement key (lexical/statement.ts), computed once, when first asked for. */
function statementKeysOf(list: readonly ScoredCandidate[]): (i: number) => string {
  const keys: (string | undefined)[] = [];
  return (i) => (keys[i] ??= statementKey((list[i] as ScoredCandidate).record.text));
}

/** Whether two candidates say the same thing (equal, non-empty statement keys). */
function sameStatement(key: (i: number) => string): (a: number, b: number) => boolean {
  return (a, b) => key(a) !== '' && key(a) === key(b);
}

/**
 * The `diversify` stage: the k hits. MMR with duplicate drop (unless raw or diversity is off), by session first when
 * `bySession` (diverse-sessions.ts), then ordered by score. Redundancy as `redundancy` above. With `cover` n, the k hits
 * then reach every thread the lexical leg's first n reach (`coverLexicalThreads`).
 */
export function diversify(all: readonly ScoredCandidate[], options: SearchOptions, vectors: VectorIndex | null, baseline: number, bySession = false, cover = 0): ScoredCandidate[] {
  if (options.raw || options.diversity === false) return all.slice(0, options.k);
  // MMR reranks only the head of the list: it costs O(k·n) similarities, and a candidate far down should not win
  // a place on novelty alone (docs/quality.md).
  const head = all.slice(0, Math.max(3 * options.k, options.k + 20));
  const key = statementKeysOf(head);
  const similarity = redundancy(head, options.diversity, vectors, baseline, key);
  const duplicate = sameStatement(key);
  const scores = head.map((s) => s.score);
  const picked = bySession
    ? selectAcrossSessions(scores, head.map((s) => threadOf(s.record)), options.k, options.diversity, similarity, duplicate)
    : mmrSelect(scores, options.k, options.diversity, similarity, [], duplicate).picked;
  const hits = picked.map(({ index, mmr }) => Object.assign({}, head[index] as ScoredCandidate, { mmr }));
  return (cover > 0 ? coverLexicalThreads(hits, all, cover) : hits).sort((a, b) => b.score - a.score);
}

/** `assembly: 'hedge'`: threads of the lexical leg's first this many candidates are always reached. */
export const HEDGE_LEXICAL_HEADS = 2;
/** Candidates by score in which the best thread's share is counted. */
const HEDGE_WINDOW = 10;
/** Below this share of the first candidates, the best thread is not taken for where the answer is. */
const HEDGE_SHARE = 0.4;

/**
 * How many of the lexical leg's first candidates `assembly: 'hedge'` covers (`coverLexicalThreads`): all k when
 * the question asks for many memories (an aggregation) or when no thread stands out, the best thread holding
 * under 40% of the first 10 candidates by score; otherwise the first 2, so a thread keyword search ranks near the
 * top is never missing while the best thread keeps its neighbours.
 */
export function hedgeDepth(all: readonly ScoredCandidate[], aggregation: boolean, k: number): number {
  if (aggregation) return k;
  const first = all.slice(0, HEDGE_WINDOW);
  const best = first.length > 0 ? threadOf((first[0] as ScoredCandidate).record) : undefined;
  if (best === undefined) return Math.min(HEDGE_LEXICAL_HEADS, k);
  const share = first.filter((s) => threadOf(s.record) === best).length / first.length;
  return share < HEDGE_SHARE ? k : Math.min(HEDGE_LEXICAL_HEADS, k);
}

/**
 * `assembly: 'cover'`: the hits, changed so that they reach every thread (`meta.thread`) that the lexical leg's first
 * k candidates reach, so a question's sessions are never fewer than keyword search would find. For each such thread
 * the hits lack, in lexical rank order, its best-ranked lexical candidate takes the place of the lowest-scored hit
 * whose thread keeps another hit, or when there is none, of the lowest-scored hit of a thread no lexical candidate
 * has; placed hits stay. Neighbour support packs a chat's top 10 into fewer sessions than BM25's (docs/quality.md
 * has what this costs in turn-level recall).
 */
export function coverLexicalThreads(hits: readonly ScoredCandidate[], all: readonly ScoredCandidate[], k: number): ScoredCandidate[] {
  const out = [...hits];
  const lexicalHeads = all
    .filter((s) => s.candidate.rank.lexical !== null && s.candidate.rank.lexical <= k)
    .sort((a, b) => (a.candidate.rank.lexical as number) - (b.candidate.rank.lexical as number));
  const wanted = new Set<string>();
  for (const s of lexicalHeads) {
    const thread = threadOf(s.record);
    if (thread !== undefined) wanted.add(thread);
  }
  if (wanted.size === 0) return out;
  const perThread = new Map<string, number>();
  for (const s of out) {
    const thread = threadOf(s.record);
    if (thread !== undefined) perThread.set(thread, (perThread.get(thread) ?? 0) + 1);
  }
  for (const head of lexicalHeads) {
    const thread = threadOf(head.record);
    if (thread === undefined || perThread.has(thread)) continue;
    // The victim: lowest score among hits sharing their thread, else among hits of threads no lexical head has.
    let victim = -1;
    let victimShares = false;
    for (let i = 0; i < out.length; i++) {
      const s = out[i] as ScoredCandidate;
      if (s.covers) continue;
      const own = threadOf(s.record);
      const shares = own !== undefined && (perThread.get(own) ?? 0) > 1;
      if (!shares && own !== undefined && wanted.has(own)) continue;
      if (victim < 0 || (shares && !victimShares) || (shares === victimShares && s.score < (out[victim] as ScoredCandidate).score)) {
        victim = i;
        victimShares = shares;
      }
    }
    if (victim < 0) break;
    const left = threadOf((out[victim] as ScoredCandidate).record);
    if (left !== undefined) {
      const remaining = (perThread.get(left) as number) - 1;
      if (remaining === 0) perThread.delete(left);
      else perThread.set(left, remaining);
    }
    out[victim] = { ...head, covers: { thread, lexicalRank: head.candidate.rank.lexical as number } };
    perThread.set(thread, 1);
  }
  return out;
}

/**
 * The order a diverse context is filled in (`assembly: 'diverse'`): the hits, each thread's best first, by
 * `contextOrder` (diverse-sessions.ts) with the same redundancy as the `diversify` stage.
 */
export function diverseContextOrder(hits: readonly ScoredCandidate[], diversity: DiversityOptions, vectors: VectorIndex | null, baseline: number): ScoredCandidate[] {
  const order = contextOrder(
    hits.map((s) => s.score),
    hits.map((s) => threadOf(s.record)),
    diversity,
    redundancy(hits, diversity, vectors, baseline),
  );
  return order.map((i) => hits[i] as ScoredCandidate);
}
