/**
 * Maximal Marginal Relevance with near-duplicate suppression, over candidates given best first. Relevance is each
 * score divided by the best score (0..1, the same scale as cosine; fused scores need not be, RRF's are small, and
 * would otherwise be drowned by the novelty term). Repeatedly:
 *   - drop every remaining candidate that is a `duplicate` of a picked one, or whose similarity to one is ≥
 *     duplicateThreshold (when set);
 *   - pick the one maximising  mmr = λ·relevance − (1−λ)·max similarity to those already picked
 *     (ties: the better-ranked candidate).
 * Stops after k picks. At most O(k·n) similarity calls, far fewer in practice: a candidate's max similarity is
 * brought up to date only when it could be the next pick (lazy greedy).
 */
import type { DiversityOptions } from './options.js';

export interface MmrPick {
  /** Index into the candidate list. */
  index: number;
  mmr: number;
}

interface MmrResult {
  picked: MmrPick[];
  /**
   * Candidates found to be near-duplicates of a pick while selecting. Evaluation is lazy (see mmrSelect), so a
   * near-duplicate that could never have been picked anyway may go unexamined and unlisted.
   */
  duplicates: number[];
}

export function mmrSelect(
  scores: readonly number[],
  k: number,
  options: DiversityOptions,
  similarity: (a: number, b: number) => number,
  /** Indices chosen by an earlier phase: they count for novelty and duplicate drop, and are not returned. */
  preselected: readonly number[] = [],
  /** Whether two candidates say the same thing (then the later one is dropped). Default: never. */
  duplicate: (a: number, b: number) => boolean = () => false,
): MmrResult {
  const { lambda } = options;
  const duplicateThreshold = options.duplicateThreshold ?? Infinity;
  const n = scores.length;
  const best = scores.reduce((max, s) => Math.max(max, s), 0);
  const relevance = scores.map((s) => (best > 0 ? s / best : 0));
  const maxSim = new Float64Array(n).fill(-Infinity);
  const alive = new Uint8Array(n).fill(1);
  /** Indices that count for novelty, in the order they were chosen: the preselected ones, then the picks. */
  const chosen: number[] = [];
  /** How many of `chosen` each candidate's maxSim has seen. */
  const seen = new Int32Array(n);
  const picked: MmrPick[] = [];
  const duplicates: number[] = [];
  // Lazy greedy: a stale maxSim is a lower bound of the true one, so its mmr is an upper bound of the true mmr
  // (the formula is monotone in novelty when 1 − λ > 0). A candidate is brought up to date only when its bound
  // leads, and the pick is the leader once it is up to date: the same pick, mmr and tie-break (lower index) as
  // updating every candidate after every pick, with far fewer similarity calls. With λ = 1 novelty weighs nothing
  // but an infinite one still turns mmr into NaN, so every candidate is brought up to date each round.
  const lazy = 1 - lambda > 0;
  const mmrOf = (i: number) => {
    const novelty = chosen.length === 0 ? 0 : (maxSim[i] as number);
    return lambda * (relevance[i] as number) - (1 - lambda) * novelty;
  };
  /** Accounts for the choices candidate i has not seen; false when it is a near-duplicate of one (then dropped). */
  const catchUp = (i: number): boolean => {
    for (let c = seen[i] as number; c < chosen.length; c++) {
      const sim = similarity(chosen[c] as number, i);
      if (sim >= duplicateThreshold || duplicate(chosen[c] as number, i)) {
        alive[i] = 0;
        duplicates.push(i);
        return false;
      }
      if (sim > (maxSim[i] as number)) maxSim[i] = sim;
    }
    seen[i] = chosen.length;
    return true;
  };
  for (const index of preselected) alive[index] = 0;
  chosen.push(...preselected);
  const bound = new Float64Array(n);
  // The leader (highest bound, then lowest index; a NaN or −∞ bound never leads) from a heap: a scan of every
  // candidate after each catch-up made a search for 100 hits cost milliseconds.
  const leaders = new BoundHeap(bound, n);
  while (picked.length < k) {
    leaders.clear();
    for (let i = 0; i < n; i++) {
      if (alive[i] && !lazy) catchUp(i);
      if (alive[i]) {
        bound[i] = mmrOf(i);
        if ((bound[i] as number) > -Infinity) leaders.add(i);
      }
    }
    leaders.heapify();
    let choice = -1;
    for (;;) {
      choice = leaders.top();
      if (choice < 0 || seen[choice] === chosen.length) break;
      leaders.pop();
      if (catchUp(choice)) {
        bound[choice] = mmrOf(choice);
        if ((bound[choice] as number) > -Infinity) leaders.push(choice);
      }
    }
    if (choice < 0) break;
    alive[choice] = 0;
    picked.push({ index: choice, mmr: bound[choice] as number });
    chosen.push(choice);
  }
  return { picked, duplicates };
}

/** A binary max-heap of candidate indices ordered by `bound` (higher first, then lower index). */
class BoundHeap {
  private readonly items: Int32Array;
  private size = 0;

  constructor(private readonly bound: Float64Array, capacity: number) {
    this.items = new Int32Array(capacity);
  }

  clear(): void {
    this.size = 0;
  }

  /** Appends without ordering: call heapify before top or pop. */
  add(index: number): void {
    this.items[this.size++] = index;
  }

  heapify(): void {
    for (let i = (this.size >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** The leading index, or −1 when empty. */
  top(): number {
    return this.size > 0 ? (this.items[0] as number) : -1;
  }

  pop(): void {
    this.items[0] = this.items[--this.size] as number;
    this.down(0);
  }

  push(index: number): void {
    let i = this.size++;
    this.items[i] = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(index, this.items[parent] as number)) break;
      this.items[i] = this.items[parent] as number;
      i = parent;
    }
    this.items[i] = index;
  }

  private before(a: number, b: number): boolean {
    const x = this.bound[a] as number;
    const y = this.bound[b] as number;
    return x > y || (x === y && a < b);
  }

  private down(i: number): void {
    const items = this.items;
    const item = items[i] as number;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= this.size) break;
      if (child + 1 < this.size && this.before(items[child + 1] as number, items[child] as number)) child++;
      if (!this.before(items[child] as number, item)) break;
      items[i] = items[child] as number;
      i = child;
    }
    items[i] = item;
  }
}
