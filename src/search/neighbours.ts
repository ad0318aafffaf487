/**
 * Thread neighbours. Memories that share a thread (`meta.thread`: a chat session, a document, a meeting)
 * form a sequence ordered by `createdAt`, ties kept in the order the engine first saw them (the order they
 * were added, or loaded from the store). In a conversation the answer to a question often sits one or two
 * turns away from the words that match it ("did you paint that?" / "yes, last year"), so a strong hit lends
 * a bounded bonus to its neighbours: the `neighbours` stage (Memsense's "turn support").
 */
import type { FusedCandidate } from './fuse.js';
import type { MemoryRecord } from '../types.js';

/** The thread a memory belongs to: `meta.thread` when it is a non-empty string or a finite number. */
export function threadOf(record: Pick<MemoryRecord, 'meta'>): string | undefined {
  const thread = record.meta?.thread;
  if (typeof thread === 'string' && thread.length > 0) return thread;
  if (typeof thread === 'number' && Number.isFinite(thread)) return String(thread);
  return undefined;
}

interface Entry {
  thread: string;
  createdAt: number;
  /** Arrival order: breaks createdAt ties. */
  seq: number;
}

interface Thread {
  ids: string[];
  /** id → position in `ids`; rebuilt lazily after a change. */
  positions: Map<string, number> | null;
  sorted: boolean;
}

export class ThreadIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly threads = new Map<string, Thread>();
  private nextSeq = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Adds or re-files records (a changed thread or createdAt moves them). Records without a thread are ignored. */
  upsertAll(records: readonly MemoryRecord[]): void {
    for (const record of records) {
      const thread = threadOf(record);
      const previous = this.entries.get(record.id);
      if (previous && (previous.thread !== thread || previous.createdAt !== record.createdAt)) this.remove(record.id);
      else if (previous) continue;
      if (thread === undefined) continue;
      const entry: Entry = { thread, createdAt: record.createdAt, seq: previous?.seq ?? this.nextSeq++ };
      this.entries.set(record.id, entry);
      let group = this.threads.get(thread);
      if (!group) {
        group = { ids: [], positions: null, sorted: true };
        this.threads.set(thread, group);
      }
      const last = group.ids[group.ids.length - 1];
      // Appending in order (the common case: a chat grows at its end) keeps the thread sorted for free.
      if (group.sorted && last !== undefined && compare(this.entries.get(last)!, entry) > 0) group.sorted = false;
      group.ids.push(record.id);
      group.positions = null;
    }
  }

  remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    const group = this.threads.get(entry.thread);
    if (!group) return;
    const at = this.positionsOf(group).get(id);
    if (at !== undefined) group.ids.splice(at, 1);
    group.positions = null;
    if (group.ids.length === 0) this.threads.delete(entry.thread);
  }

  clear(): void {
    this.entries.clear();
    this.threads.clear();
  }

  /** Memories of the same thread within `window` places of `id`, nearest first (before, then after, at each distance). */
  neighbours(id: string, window: number): { id: string; distance: number }[] {
    const entry = this.entries.get(id);
    if (!entry || window < 1) return [];
    const group = this.threads.get(entry.thread)!;
    const positions = this.positionsOf(group);
    const at = positions.get(id)!;
    const out: { id: string; distance: number }[] = [];
    for (let distance = 1; distance <= window; distance++) {
      const before = group.ids[at - distance];
      const after = group.ids[at + distance];
      if (before !== undefined) out.push({ id: before, distance });
      if (after !== undefined) out.push({ id: after, distance });
    }
    return out;
  }

  private positionsOf(group: Thread): Map<string, number> {
    if (!group.sorted) {
      group.ids.sort((a, b) => compare(this.entries.get(a)!, this.entries.get(b)!));
      group.sorted = true;
      group.positions = null;
    }
    if (!group.positions) group.positions = new Map(group.ids.map((id, i) => [id, i]));
    return group.positions;
  }
}

function compare(a: Entry, b: Entry): number {
  return a.createdAt - b.createdAt || a.seq - b.seq;
}

export interface NeighbourOptions {
  /** How many places either side of a hit receive its support. */
  window: number;
  /** Bonus lent to a neighbour at distance d: weight × (lender's score) / d. Below 1, a neighbour never outranks its lender on the bonus alone. */
  weight: number;
  /** Only the best `lenders` candidates lend. */
  lenders: number;
}

export interface Lent {
  /** Added to the candidate's fused score. */
  bonus: number;
  /** The hit it came from. */
  from: string;
}

/**
 * Bonuses for neighbours of the best candidates (`scored` best first). Each neighbour takes the largest
 * bonus offered, never a sum, so it is bounded by weight × the best lender's score however many hits
 * surround it.
 */
export function neighbourBonuses(
  scored: readonly { id: string; score: number }[],
  threads: ThreadIndex,
  options: NeighbourOptions,
): Map<string, Lent> {
  const lent = new Map<string, Lent>();
  if (options.weight <= 0 || options.window < 1) return lent;
  for (const { id, score } of scored.slice(0, options.lenders)) {
    if (!(score > 0)) continue;
    for (const neighbour of threads.neighbours(id, options.window)) {
      const bonus = (options.weight * score) / neighbour.distance;
      const current = lent.get(neighbour.id);
      if (!current || bonus > current.bonus) lent.set(neighbour.id, { bonus, from: id });
    }
  }
  return lent;
}

/**
 * The `neighbours` stage: adds the bonuses to the fused scores. A neighbour that no leg returned joins as a
 * new candidate carrying only its bonus; the filter stage after this one still applies to it.
 */
export function supportNeighbours(fused: readonly FusedCandidate[], threads: ThreadIndex, options: NeighbourOptions): FusedCandidate[] {
  const lent = neighbourBonuses(fused.map((c) => ({ id: c.id, score: c.fused })), threads, options);
  if (lent.size === 0) return fused.slice();
  const out = fused.map((candidate) => {
    const support = lent.get(candidate.id);
    if (!support) return candidate;
    lent.delete(candidate.id);
    return { ...candidate, fused: candidate.fused + support.bonus, neighbour: { from: support.from, bonus: support.bonus } };
  });
  for (const [id, support] of lent) {
    out.push({ id, fused: support.bonus, rank: { lexical: null, vector: null }, legScore: { lexical: null, vector: null }, neighbour: { from: support.from, bonus: support.bonus } });
  }
  return out.sort((a, b) => b.fused - a.fused);
}
