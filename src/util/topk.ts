/**
 * Partial top-k selection with a bounded binary min-heap: O(n log k) time, O(k) memory, and never a sort of
 * all n. Order is total and deterministic: higher score first, then lower index (so equal scores keep the
 * order in which rows were offered). NaN scores are never selected.
 */
interface RankedIndex {
  index: number;
  score: number;
}

export class TopK {
  readonly k: number;
  private readonly scores: Float64Array;
  private readonly indices: Int32Array;
  private length = 0;

  constructor(k: number) {
    this.k = Math.max(0, Math.floor(k));
    this.scores = new Float64Array(this.k);
    this.indices = new Int32Array(this.k);
  }

  get size(): number {
    return this.length;
  }

  /** Lowest score still kept once the heap is full; -Infinity before. Lets a scan skip hopeless rows. */
  get threshold(): number {
    return this.length < this.k ? -Infinity : (this.scores[0] as number);
  }

  push(index: number, score: number): void {
    if (this.k === 0 || Number.isNaN(score)) return;
    if (this.length < this.k) {
      this.scores[this.length] = score;
      this.indices[this.length] = index;
      this.siftUp(this.length++);
      return;
    }
    if (!this.worse(0, score, index)) return;
    this.scores[0] = score;
    this.indices[0] = index;
    this.siftDown(0);
  }

  /** The kept items, best first. Empties the heap. */
  drain(): RankedIndex[] {
    const out: RankedIndex[] = new Array(this.length);
    for (let i = this.length - 1; i >= 0; i--) {
      out[i] = { index: this.indices[0] as number, score: this.scores[0] as number };
      this.length--;
      if (this.length > 0) {
        this.scores[0] = this.scores[this.length] as number;
        this.indices[0] = this.indices[this.length] as number;
        this.siftDown(0);
      }
    }
    return out;
  }

  /** True when the heap slot ranks below (score, index). */
  private worse(slot: number, score: number, index: number): boolean {
    const s = this.scores[slot] as number;
    return s < score || (s === score && (this.indices[slot] as number) > index);
  }

  private siftUp(slot: number): void {
    while (slot > 0) {
      const parent = (slot - 1) >> 1;
      if (!this.worse(slot, this.scores[parent] as number, this.indices[parent] as number)) break;
      this.swap(slot, parent);
      slot = parent;
    }
  }

  private siftDown(slot: number): void {
    for (;;) {
      const left = 2 * slot + 1;
      if (left >= this.length) return;
      const right = left + 1;
      let worst = left;
      if (right < this.length && this.worse(right, this.scores[left] as number, this.indices[left] as number)) worst = right;
      if (!this.worse(worst, this.scores[slot] as number, this.indices[slot] as number)) return;
      this.swap(slot, worst);
      slot = worst;
    }
  }

  private swap(a: number, b: number): void {
    const s = this.scores[a] as number;
    this.scores[a] = this.scores[b] as number;
    this.scores[b] = s;
    const i = this.indices[a] as number;
    this.indices[a] = this.indices[b] as number;
    this.indices[b] = i;
  }
}
