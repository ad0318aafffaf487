/**
 * One term's postings in one field as restored from a snapshot: a Map (MiniSearch uses it as one) that serves
 * `size` and iteration straight from the snapshot's arrays, and becomes an ordinary Map (copies them in) on the
 * first lookup or change. Filling a Map entry per posting on every open was the largest cost of a restore;
 * searching reads postings by iteration only, so most terms are never copied.
 */
export class PackedPostings extends Map<number, number> {
  private docs: Uint32Array | null;
  private freqs: ArrayLike<number> | null;

  constructor(docs: Uint32Array, freqs: ArrayLike<number>) {
    super();
    this.docs = docs;
    this.freqs = freqs;
  }

  /** The arrays while still packed (a save copies them as they are), else null. */
  packed(): { docs: Uint32Array; freqs: ArrayLike<number> } | null {
    return this.docs && this.freqs && { docs: this.docs, freqs: this.freqs };
  }

  private unpack(): void {
    const { docs, freqs } = this;
    if (!docs || !freqs) return;
    this.docs = this.freqs = null;
    for (let i = 0; i < docs.length; i++) super.set(docs[i] as number, freqs[i] as number);
  }

  override get size(): number {
    return this.docs ? this.docs.length : super.size;
  }
  override get(key: number): number | undefined {
    this.unpack();
    return super.get(key);
  }
  override has(key: number): boolean {
    this.unpack();
    return super.has(key);
  }
  override set(key: number, value: number): this {
    this.unpack();
    return super.set(key, value);
  }
  override delete(key: number): boolean {
    this.unpack();
    return super.delete(key);
  }
  override clear(): void {
    this.docs = this.freqs = null;
    super.clear();
  }
  // A plain loop, not entries(): the BM25 scorer reads every posting of a query's terms through forEach.
  override forEach(callback: (value: number, key: number, map: Map<number, number>) => void, thisArg?: unknown): void {
    const { docs, freqs } = this;
    if (!docs || !freqs) return super.forEach(callback, thisArg);
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i] as number;
      if (this.docs === null && !super.has(doc)) continue;
      callback.call(thisArg, freqs[i] as number, doc, this);
    }
  }
  override *entries(): MapIterator<[number, number]> {
    const { docs, freqs } = this;
    if (!docs || !freqs) return yield* super.entries();
    for (let i = 0; i < docs.length; i++) {
      const doc = docs[i] as number;
      // Unpacked meanwhile (a caller deleting the entry it is at, as MiniSearch's clean-up does): skip what is gone.
      if (this.docs === null && !super.has(doc)) continue;
      yield [doc, freqs[i] as number];
    }
  }
  override *keys(): MapIterator<number> {
    for (const [key] of this.entries()) yield key;
  }
  override *values(): MapIterator<number> {
    for (const [, value] of this.entries()) yield value;
  }
  override [Symbol.iterator](): MapIterator<[number, number]> {
    return this.entries();
  }
}
