/**
 * Supersede on add: what a new memory hides (EngineOptions.supersede, docs/api.md "Which memory is hidden").
 *
 * `'same'` (the default): a new memory hides an older live one only when both say the same thing (equal statement
 * keys, lexical/statement.ts: the same words after case, punctuation, whitespace and stop words, negations, numbers
 * and identifiers kept), in the same project, scope and kind, and never a pinned one. Candidates come from the
 * lexical index (the memories holding the new text's rarest term), so the check costs what the add stores.
 *
 * `'similar'` (the old folding, opt-in): each new memory is compared with the live stored memories and the earlier
 * items of its batch created at another instant (a batch at one instant is an import of distinct items: on BEIR
 * NFCorpus, 41 abstracts on shared topics hid each other); when the best cosine (calibrated against the mean
 * pairwise cosine of the stored and new memories, unless calibration is off) is ≥ the threshold, the one created
 * earlier (the new one on a tie) gets `supersededBy` = the other. Pairs the context calls `distinct` (another
 * project or scope, a pinned older one, other numbers, names or negations) are never matched.
 *
 * The cosine question is a threshold question, not a top-k one: only memories at least that similar matter. So the
 * whole batch asks it at once (one pass of the int8 kernel over the stored rows for many new memories, most rows
 * ruled out by a bound: quantized-scan.ts rowsAbove), and the answers are then walked in batch order, where
 * liveness can change from one new memory to the next.
 */
import { statementHash, statementKey } from '../lexical/statement.js';
import type { MemoryRecord } from '../types.js';
import { calibratedCosine, meanPairwiseCosine } from '../vector/similarity.js';
import type { VectorScan } from '../vector/scan.js';
import { VectorIndex } from '../vector/vector-index.js';

/** Best matches kept per new memory; only when none of them is live are all the others looked at. */
export const SUPERSEDE_PROBE = 8;

/** What the plan reads of a memory (a stored memory's summary holds it). */
type SupersedeFacts = Pick<MemoryRecord, 'id' | 'createdAt' | 'supersededBy'>;

export interface SupersedeContext<R extends SupersedeFacts = MemoryRecord> {
  /** The stored memories' vectors (normalised). */
  index: VectorIndex;
  /** A stored memory by id. */
  storedRecord(id: string): R | undefined;
  /** `false`: supersede is off. */
  threshold: number | false;
  /** Compare calibrated cosines (see similarity.ts) rather than raw ones. */
  calibrate: boolean;
  /** Makes the scan of the batch's own vector index. */
  makeScan(): VectorScan;
  /** Pairs never matched, whatever their cosine (`older` created no later than `newer`). Default: none. */
  distinct?(older: SupersedeFacts, newer: SupersedeFacts): boolean;
}

export interface SupersedePlan<R extends SupersedeFacts = MemoryRecord> {
  /** The batch in order: the same records, or copies with `supersededBy` set where the plan supersedes them. */
  batch: MemoryRecord[];
  /** Copies of what `storedRecord` gave for the stored memories a new memory supersedes, with `supersededBy` set. */
  stored: R[];
}

/** What supersede does to `batch` (new memories whose ids are not stored; `vectors[i]` is item i's). Changes nothing. */
export function planSupersede<R extends SupersedeFacts>(context: SupersedeContext<R>, batch: readonly MemoryRecord[], vectors: readonly Float32Array[]): SupersedePlan<R> {
  const { index, threshold } = context;
  if (threshold === false) return { batch: batch.slice(), stored: [] };
  const { floor, baseline } = floorOf(context, vectors);
  const vector = (i: number) => [vectors[i] as Float32Array];
  return plan(context, batch, vectors, { floor, baseline }, index.matchesAbove(vectors, floor, SUPERSEDE_PROBE), (i) => index.matchesAbove(vector(i), floor, index.size)[0]!);
}

/**
 * `planSupersede` for any index, a compact one too (its stored vectors are read from the store for the few rows
 * the int8 bound cannot rule out). Every stored match is found before the walk, which stays synchronous.
 */
export async function planSupersedeAsync<R extends SupersedeFacts>(
  context: SupersedeContext<R>,
  batch: readonly MemoryRecord[],
  vectors: readonly Float32Array[],
): Promise<SupersedePlan<R>> {
  const { index, threshold } = context;
  if (!index.isCompact || threshold === false) return planSupersede(context, batch, vectors);
  const { floor, baseline } = floorOf(context, vectors);
  const stored = await index.matchesAboveAsync(vectors, floor, SUPERSEDE_PROBE);
  // Where more matched than were kept, every match (the walk asks for them only when none kept is live).
  const every = await Promise.all(stored.map(async (found, i) => (found.more ? (await index.matchesAboveAsync([vectors[i] as Float32Array], floor, index.size))[0]! : found)));
  return plan(context, batch, vectors, { floor, baseline }, stored, (i) => every[i]!);
}

/** The floor every passing score reaches, and the calibration baseline of the stored and new vectors. */
function floorOf(context: SupersedeContext<SupersedeFacts>, vectors: readonly Float32Array[]): { floor: number; baseline: number } {
  const baseline = context.calibrate ? batchBaseline(context.index, vectors) : 0;
  return { floor: passingFloor(context.threshold as number, baseline), baseline };
}

/** A raw cosine under every score whose cosine calibrated against `baseline` reaches `threshold` (consolidate.ts too). */
export function passingFloor(threshold: number, baseline: number): number {
  return lowestPassing((score) => calibratedCosine(score, baseline) >= threshold);
}

/** The walk of the batch in order, given each new memory's stored matches (`stored[i]`, and all of them: `everyStored(i)`). */
function plan<R extends SupersedeFacts>(
  context: SupersedeContext<R>,
  batch: readonly MemoryRecord[],
  vectors: readonly Float32Array[],
  { floor, baseline }: { floor: number; baseline: number },
  stored: Candidates[],
  everyStored: (i: number) => Candidates,
): SupersedePlan<R> {
  const { index } = context;
  const threshold = context.threshold as number;
  const changed = new Map<string, R>();
  /** Batch items walked so far, as the plan leaves them. */
  const inBatch = new Map<string, MemoryRecord>();
  const recordOf = (id: string): SupersedeFacts | undefined => changed.get(id) ?? inBatch.get(id) ?? context.storedRecord(id);
  const live = (id: string) => recordOf(id)?.supersededBy === undefined;
  const liveEarlier = (id: string) => inBatch.has(id) && live(id);
  const passes = (score: number) => calibratedCosine(score, baseline) >= threshold;
  const distinct = context.distinct ?? (() => false);
  const apart = (record: MemoryRecord, id: string) => {
    const other = recordOf(id);
    if (!other) return true;
    return other.createdAt <= record.createdAt ? distinct(other, record) : distinct(record, other);
  };
  // Every candidate for the whole batch in one call per index (liveness changes along the batch, so it is
  // checked below, in order): the stored memories, and each new memory's earlier batch items (row j = item j).
  const batchIndex = new VectorIndex(index.dim, context.makeScan(), batch.length);
  batchIndex.setMany(batch.map((r) => r.id), vectors);
  const earlier = batchIndex.matchesAbove(vectors, floor, SUPERSEDE_PROBE, (i) => i);
  batch.forEach((record, i) => {
    const vector = [vectors[i] as Float32Array];
    // Items of one batch stored at one instant are distinct items of an import, never versions of each other.
    const versionInBatch = (id: string) => liveEarlier(id) && inBatch.get(id)!.createdAt !== record.createdAt;
    const best = [
      bestLiveMatch(stored[i]!, () => everyStored(i), (id) => live(id) && !apart(record, id), passes),
      bestLiveMatch(earlier[i]!, () => batchIndex.matchesAbove(vector, floor, i, () => i)[0]!, (id) => versionInBatch(id) && !apart(record, id), passes),
    ]
      .filter((m) => m !== undefined)
      .sort((a, b) => b.score - a.score)[0];
    const other = best ? recordOf(best.id) : undefined;
    let planned = record;
    if (other) {
      const [older, newer] = other.createdAt <= record.createdAt ? [other, record] : [record, other];
      if (older === record) planned = { ...record, supersededBy: newer.id };
      else if (inBatch.has(older.id)) inBatch.set(older.id, { ...(inBatch.get(older.id) as MemoryRecord), supersededBy: newer.id });
      else changed.set(older.id, { ...(older as R), supersededBy: newer.id });
    }
    inBatch.set(record.id, planned);
  });
  return { batch: batch.map((r) => inBatch.get(r.id) as MemoryRecord), stored: [...changed.values()] };
}

type Candidates = { matches: { id: string; score: number }[]; more: boolean };

/**
 * The most similar live memory whose score `passes`, or undefined, from `candidates`: the best few matches at
 * or above a floor that every passing score reaches, best first. Liveness is checked on these few only (a
 * per-row check over the whole index would make supersede the main cost of every add); when there were more
 * than kept and none kept is live, `everyCandidate` (all of them) decides.
 */
function bestLiveMatch(
  candidates: Candidates,
  everyCandidate: () => Candidates,
  live: (id: string) => boolean,
  passes: (score: number) => boolean,
): { id: string; score: number } | undefined {
  for (const match of (candidates.more && !candidates.matches.some((m) => live(m.id)) ? everyCandidate() : candidates).matches) {
    if (!passes(match.score)) return undefined;
    if (live(match.id)) return match;
  }
  return undefined;
}

/**
 * A floor under every cosine that `passes` (a non-decreasing test): the largest failing score found by bisection,
 * so a score that passes is above it. −Infinity when everything passes, +Infinity when nothing can (cosines of
 * unit vectors stay below 2 even with rounding).
 */
function lowestPassing(passes: (score: number) => boolean): number {
  if (passes(-1)) return -Infinity;
  if (!passes(2)) return Infinity;
  let fails = -1;
  let passing = 2;
  for (let i = 0; i < 64 && passing - fails > 0; i++) {
    const mid = (fails + passing) / 2;
    if (mid === fails || mid === passing) break;
    if (passes(mid)) passing = mid;
    else fails = mid;
  }
  return fails;
}

/** Mean pairwise cosine of the stored vectors together with a batch about to join them. */
function batchBaseline(index: VectorIndex, vectors: readonly Float32Array[]): number {
  const sum = index.sumOfRows();
  for (const vector of vectors) for (let i = 0; i < sum.length; i++) sum[i] = (sum[i] as number) + (vector[i] as number);
  return meanPairwiseCosine(sum, index.size + vectors.length);
}

/** What `planSameStatement` reads of the store. */
export interface SameStatementContext {
  /**
   * Ids of stored memories that may say what `text` says (LexicalIndex.holdersOfRarestTerm), less any known to say
   * none of `statements` (the batch's keys' `statementHash`es).
   */
  candidates(text: string, statements: ReadonlySet<number>): string[];
  /** The stored records among `ids`. */
  records(ids: readonly string[]): Promise<MemoryRecord[]>;
  /** Told each stored candidate's statement key, so that `candidates` can skip it next time. */
  learn?(id: string, key: string): void;
}

/** Candidates read per new memory: a duplicate past them stays visible (the safe way to miss one). */
export const SAME_STATEMENT_CANDIDATES = 256;

/**
 * Supersede `'same'`: in batch order, a new memory and the newest live memory saying the same thing (equal
 * statement key, project, scope and kind) are folded: the one created earlier (the stored one on a tie) gets
 * `supersededBy` = the other, unless it is pinned (then both stay live). Changes nothing.
 */
export async function planSameStatement(context: SameStatementContext, batch: readonly MemoryRecord[]): Promise<SupersedePlan<MemoryRecord>> {
  const groupOf = (r: MemoryRecord, key: string) => JSON.stringify([r.project ?? null, r.scope ?? null, r.kind ?? null, key]);
  const keys = batch.map((r) => statementKey(r.text));
  const wanted = new Set(batch.map((r, i) => (keys[i] ? groupOf(r, keys[i] as string) : '')).filter(Boolean));
  if (wanted.size === 0) return { batch: batch.slice(), stored: [] };
  const batchIds = new Set(batch.map((r) => r.id));
  const statements = new Set(keys.flatMap((key) => (key ? [statementHash(key)] : [])));
  const ids = new Set<string>();
  batch.forEach((r, i) => {
    if (keys[i]) for (const id of context.candidates(r.text, statements)) if (!batchIds.has(id)) ids.add(id);
  });
  /** The newest live memory of each wanted group: stored ones first, then the batch as it is walked. */
  const holders = new Map<string, MemoryRecord>();
  for (const stored of ids.size > 0 ? await context.records([...ids]) : []) {
    const key = statementKey(stored.text);
    context.learn?.(stored.id, key);
    if (stored.supersededBy !== undefined) continue;
    const group = groupOf(stored, key);
    const holder = holders.get(group);
    if (wanted.has(group) && (!holder || stored.createdAt >= holder.createdAt)) holders.set(group, stored);
  }
  const out = batch.slice();
  const changed = new Map<string, MemoryRecord>();
  const at = new Map(batch.map((r, i) => [r.id, i]));
  batch.forEach((record, i) => {
    const key = keys[i] as string;
    if (!key) return;
    const group = groupOf(record, key);
    const holder = holders.get(group);
    const current = out[i] as MemoryRecord;
    if (!holder) {
      holders.set(group, current);
      return;
    }
    const [older, newer] = holder.createdAt <= record.createdAt ? [holder, current] : [current, holder];
    if (!older.pinned) {
      const marked = { ...older, supersededBy: newer.id };
      const index = at.get(older.id);
      if (index !== undefined) out[index] = marked;
      else changed.set(older.id, marked);
    }
    holders.set(group, newer === current ? current : holder);
  });
  return { batch: out, stored: [...changed.values()] };
}
