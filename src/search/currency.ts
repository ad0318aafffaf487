/**
 * The `currency` stage: among memories that are versions of one fact, the newer comes first (docs/api.md, "Which
 * memory is true now"). A fact that changes ("the deadline moved to 5 April", "we moved hosting to Cloudflare
 * Pages") is written later in words much like the first version's, so both match a question about it and nothing in
 * their scores says which is current: both carry the same date within one session, and decay cannot part them.
 *
 * Two of the k best candidates are taken for versions of one fact when the later one (in a thread by the thread's
 * order, elsewhere by `createdAt`: thread-index.ts `isLater`) shares at least half the query terms the sparser of
 * the two holds in its text or tags (two at least, for a query of three or more), scores at least `ratio` of the earlier one, says
 * something else (the same statement is the duplicate drop's) and names a detail the earlier does not (a number, a
 * name, a negation: lexical/statement.ts; a later turn on the topic that states none is no update), or, for notes
 * outside a thread, opens with the same label ("Home address: …"). The later one
 * is then placed above the earlier one, which stays below it with `explain.newerVersion` naming it; the newest of a
 * chain of versions takes the best place any of them held. Only the k hits are reordered, so none leaves the hits
 * (lifting from below them cost BEAM R@10 0.011 for a single place); similarity orders here, nothing is hidden.
 */
import type { ScoredCandidate } from './adjust.js';
import type { CurrencyOptions } from './options.js';
import { statementDetails, statementKey, statementKeyWords, statementWords } from '../lexical/statement.js';

export interface CurrencyParts {
  /** The query as the caller wrote it. */
  query: string;
  /** The query's processed terms (LexicalIndex.queryTerms). */
  queryTerms: readonly string[];
  /** A memory text's processed terms (LexicalIndex.textTerms). */
  textTerms(text: string): readonly string[];
  /** Whether memory `b` is a later version than memory `a` could be (ThreadIndex.isLater). */
  isLater(a: string, b: string): boolean;
  /** Whether two memories share a thread (ThreadIndex.sameThread). */
  sameThread(a: string, b: string): boolean;
  /** Whether a memory is in a thread or a sitting (ThreadIndex.inSequence); absent: every memory is. */
  inSequence?(id: string): boolean;
}

/** The candidates with every later version placed above the earlier one it matches; `placed` counts the moves. */
export function orderByCurrency(list: readonly ScoredCandidate[], k: number, options: CurrencyOptions, parts: CurrencyParts): { scored: ScoredCandidate[]; placed: number } {
  // Within the k hits only: a later version from further down would take a place from another hit (on BEAM, lifting
  // from the first 12 cost R@10 0.006, from the first 30 0.017, for no more current firsts).
  const head = Math.min(list.length, k, MAX_HEAD);
  if (head < 2 || parts.queryTerms.length === 0) return { scored: list.slice(), placed: 0 };
  const query = new Set(parts.queryTerms);
  const queryWords = new Set(statementWords(parts.query));
  const top = list.slice(0, head).map((s) => ({ ...s }));
  const covers = top.map((s) => {
    const held = new Set<string>();
    // Tags are indexed beside the text ("mqtt" on a broker note): a query term they hold is one the memory answers.
    for (const text of [s.record.text, ...s.record.tags]) for (const term of parts.textTerms(text)) if (query.has(term)) held.add(term);
    return held;
  });
  const keys: (string | undefined)[] = [];
  const keyOf = (i: number) => (keys[i] ??= statementKey((top[i] as ScoredCandidate).record.text));
  const details: (Set<string> | undefined)[] = [];
  const detailsOf = (i: number) => (details[i] ??= statementDetails((top[i] as ScoredCandidate).record.text));
  // Per candidate, as keys and details: each is asked once for every pair it is in.
  const labels: (string | null | undefined)[] = [];
  const labelAt = (i: number) => (labels[i] === undefined ? (labels[i] = labelOf((top[i] as ScoredCandidate).record.text)) : labels[i]);
  const lone: (boolean | undefined)[] = [];
  const alone = (i: number) => (lone[i] ??= parts.inSequence !== undefined && !parts.inSequence((top[i] as ScoredCandidate).record.id));
  const versionPair = (older: number, newer: number): boolean => {
    const a = covers[older] as Set<string>;
    const b = covers[newer] as Set<string>;
    let shared = 0;
    for (const term of a) if (b.has(term)) shared++;
    if (shared === 0 || shared < SHARED_TERMS * Math.min(a.size, b.size) || (query.size >= 3 && shared < 2)) return false;
    const first = top[older] as ScoredCandidate;
    const second = top[newer] as ScoredCandidate;
    if (!(second.score >= options.ratio * first.score) || !parts.isLater(first.record.id, second.record.id) || keyOf(older) === keyOf(newer)) return false;
    // A number the query names that only the earlier holds: the question is about that version ("flight LH1234").
    // A name the query shares with the earlier version is no such sign: an update need not repeat it.
    for (const detail of detailsOf(older)) if (isNumber(detail) && queryWords.has(detail) && !detailsOf(newer).has(detail)) return false;
    // Notes under one label ("Home address: …", "Coffee order: …") are that label's versions, whatever the value,
    // when one of them stands alone: in a run of turns each opens with its speaker's name.
    const sameThread = parts.sameThread(first.record.id, second.record.id);
    const label = labelAt(older);
    if (label !== null && label === labelAt(newer) && (alone(older) || alone(newer)) && !sameThread) return true;
    // Versions of one fact differ in a detail (a number, a name, a negation); later turns on the topic that state none are not updates.
    const overlap = () => wordOverlap(keyOf(older), keyOf(newer));
    return differsInDetail(detailsOf(older), detailsOf(newer), overlap, sameThread);
  };
  // Every version pair among the k: `newer` must come above `older`. Versions run forward in time (isLater), so
  // the pairs form no circle.
  const olderOf: number[][] = top.map(() => []);
  const waiting = new Array<number>(head).fill(0);
  for (let older = 0; older < head; older++) {
    for (let newer = 0; newer < head; newer++) {
      if (newer === older || !versionPair(older, newer)) continue;
      (olderOf[newer] as number[]).push(older);
      waiting[older] = (waiting[older] as number) + 1;
    }
  }
  // A version takes the best place of any version it must precede (the newest of three versions takes the first's
  // place, whichever replies or repeats lie between), then candidates are placed best place first once all their
  // later versions are.
  const place: number[] = [];
  const reach = (i: number): number => {
    let best = place[i];
    if (best !== undefined) return best;
    place[i] = best = i;
    for (const older of olderOf[i] as number[]) best = Math.min(best, reach(older));
    return (place[i] = best);
  };
  for (let i = 0; i < head; i++) reach(i);
  const order: number[] = [];
  const done = new Array<boolean>(head).fill(false);
  let placed = 0;
  for (let step = 0; step < head; step++) {
    let pick = -1;
    for (let i = 0; i < head; i++) {
      if (done[i] || (waiting[i] as number) > 0) continue;
      if (pick < 0 || (place[i] as number) < (place[pick] as number)) pick = i;
    }
    done[pick] = true;
    order.push(pick);
    for (const older of olderOf[pick] as number[]) {
      waiting[older] = (waiting[older] as number) - 1;
      const earlier = top[older] as ScoredCandidate;
      // Named by its best-placed later version that had ranked below it.
      if (older < pick && earlier.newerVersion === undefined) {
        earlier.newerVersion = (top[pick] as ScoredCandidate).record.id;
        placed++;
      }
    }
  }
  // Scores follow the new order.
  for (let i = order.length - 2; i >= 0; i--) {
    const current = top[order[i] as number] as ScoredCandidate;
    const next = top[order[i + 1] as number] as ScoredCandidate;
    if (current.score < next.score) current.score = above(next.score);
  }
  return { scored: [...order.map((i) => top[i] as ScoredCandidate), ...list.slice(head)], placed };
}

/**
 * Whether the later text names a detail the earlier does not: within one conversation a number (a count, a time, a
 * price, a date: BEAM's updates); anywhere, any detail (a number, a name, a negation) when the two are worded alike (`overlap` of their statement words ≥
 * NAME_OVERLAP: "deployed to Netlify" / "deployed to Cloudflare Pages"), since turns of a chat name people all along
 * (on LoCoMo, names alone cost nDCG@10 0.037). Two notes written apart ("wifi at the cabin is pinecone42", "wifi at
 * the office is harbour77") are other facts, not versions.
 */
function differsInDetail(earlier: ReadonlySet<string>, later: ReadonlySet<string>, overlap: () => number, sameThread: boolean): boolean {
  const newDetails = [...later].filter((d) => !earlier.has(d));
  if (newDetails.length === 0) return false;
  if (sameThread && newDetails.some(isNumber) && [...earlier].some(isNumber)) return true;
  return earlier.size > 0 && overlap() >= NAME_OVERLAP;
}

/**
 * The label a note opens with ("Home address" of "Home address: Rua …"): one to four words without a digit before a
 * colon, one of them in lower case; null when there is none. A name is no label: chat turns open with their
 * speaker's ("Caroline: …"), and LoCoMo's turns stored without a thread at their session's date lost nDCG@10 0.09.
 */
function labelOf(text: string): string | null {
  const match = LABEL.exec(text);
  if (!match || !/(?:^|[ '’-])\p{Ll}+(?:$|[ '’-])/u.test(match[1] as string)) return null;
  return (match[1] as string).toLowerCase().replace(/\s+/g, ' ');
}

const LABEL = /^\s*(\p{L}+(?:[ '’-]\p{L}+){0,3})\s*:\s*\S/u;

/** Whether a detail is or holds a number (a count, a time, a price, an identifier such as LH1234). */
function isNumber(detail: string): boolean {
  return /\p{N}/u.test(detail);
}

/** Jaccard of two statement keys' words. */
function wordOverlap(a: string, b: string): number {
  const left = statementKeyWords(a);
  const right = statementKeyWords(b);
  let shared = 0;
  for (const word of left) if (right.has(word)) shared++;
  return shared / (left.size + right.size - shared);
}

/** The most hits the stage orders: every pair among them is tested (k is rarely above this; past it, nothing moves). */
const MAX_HEAD = 100;

/** Statement-word overlap from which two texts that differ in a name or a negation are versions of one fact. */
const NAME_OVERLAP = 0.5;

/** Share of the query terms the sparser of two versions holds that the other must hold too. */
const SHARED_TERMS = 0.5;

/** The smallest step above `score` that survives a sort (and keeps a zero score positive). */
function above(score: number): number {
  return score + Math.max(Math.abs(score) * 1e-9, 1e-12);
}
