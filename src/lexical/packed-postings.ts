/**
 * One term's postings in one field as two ascending arrays (short ids, term frequencies) behind the Map interface
 * MiniSearch uses. Restored from a snapshot they are views of it; made by an add (the adapter's `addTerm`) they are
 * arrays of their own that grow at the end. MiniSearch gives short ids in ascending order and adds a document's
 * terms together, so an add only ever appends or counts the last posting again: lookups are binary searches and
 * nothing becomes a Map. Only a change elsewhere in the list (a removal, MiniSearch's clean-up) copies it into an
 * ordinary Map. A Map entry per posting cost about 40 bytes and most of an import's time; a posting here costs 8.
 */
type Freqs = Uint8Array | Uint16Array | Uint32Array;

export class PackedPostings extends Map<number, number> {
  /** Short ids, ascending, in the first `count` places; null once this is an ordinary Map. */
  private docs: Uint32Array | null;
  private freqs: Freqs | null;
  private count: number;
  /** Whether `docs` and `freqs` are this list's own Uint32 arrays (a snapshot's views are never written). */
  private owned: boolean;

  constructor(docs: Uint32Array, freqs: Freqs) {
    super();
    this.docs = docs;
    this.freqs = freqs;
    this.count = docs.length;
    this.owned = false;
  }

  /** A list holding one posting, as an add starts one. */
  static of(doc: number, freq: number): PackedPostings {
    const list = new PackedPostings(new Uint32Array(2), new Uint32Array(2));
    list.owned = true;
    list.docs![0] = doc;
    list.freqs![0] = freq;
    list.count = 1;
    return list;
  }

  /** The arrays while still packed (views of the live postings: a save copies them as they are), else null. */
  packed(): { docs: Uint32Array; freqs: Freqs } | null {
    const { docs, freqs, count } = this;
    if (!docs || !freqs) return null;
    return docs.length === count ? { docs, freqs } : { docs: docs.subarray(0, count), freqs: freqs.subarray(0, count) };
  }

  /** The place of `key` in the packed arrays, or −1. */
  private find(key: number): number {
    const docs = this.docs as Uint32Array;
    let lo = 0;
    let hi = this.count - 1;
    // Adds look up the last posting (a document's term counted again): checked first.
    if (hi >= 0 && docs[hi] === key) return hi;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const doc = docs[mid] as number;
      if (doc === key) return mid;
      if (doc < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Room for one more posting in arrays of this list's own. */
  private grow(): void {
    const { docs, freqs, count } = this;
    if (this.owned && (docs as Uint32Array).length > count) return;
    const capacity = Math.max(4, Math.ceil(count * 1.5));
    const newDocs = new Uint32Array(capacity);
    const newFreqs = new Uint32Array(capacity);
    newDocs.set((docs as Uint32Array).subarray(0, count));
    newFreqs.set((freqs as Freqs).subarray(0, count));
    this.docs = newDocs;
    this.freqs = newFreqs;
    this.owned = true;
  }

  private unpack(): void {
    const { docs, freqs, count } = this;
    if (!docs || !freqs) return;
    this.docs = this.freqs = null;
    for (let i = 0; i < count; i++) super.set(docs[i] as number, freqs[i] as number);
  }

  override get size(): number {
    return this.docs ? this.count : super.size;
  }
  override get(key: number): number | undefined {
    if (!this.docs) return super.get(key);
    const at = this.find(key);
    return at < 0 ? undefined : (this.freqs as Freqs)[at];
  }
  override has(key: number): boolean {
    return this.docs ? this.find(key) >= 0 : super.has(key);
  }
  override set(key: number, value: number): this {
    if (!this.docs) return super.set(key, value);
    const at = this.find(key);
    const count = this.count;
    if (at < 0 && count > 0 && key < (this.docs[count - 1] as number)) {
      // Into the middle: not what an add does; an ordinary Map from here on.
      this.unpack();
      return super.set(key, value);
    }
    if (!this.owned || at < 0) this.grow();
    const docs = this.docs as Uint32Array;
    const freqs = this.freqs as Uint32Array;
    if (at >= 0) freqs[at] = value;
    else {
      docs[count] = key;
      freqs[count] = value;
      this.count = count + 1;
    }
    return this;
  }
  override delete(key: number): boolean {
    if (!this.docs) return super.delete(key);
    const at = this.find(key);
    if (at < 0) return false;
    // The last posting (the newest document taken out again) goes in place; any other makes this a Map.
    if (at === this.count - 1) {
      this.count = at;
      return true;
    }
    this.unpack();
    return super.delete(key);
  }
  override clear(): void {
    this.docs = this.freqs = null;
    super.clear();
  }
  // A plain loop, not entries(): the BM25 scorer reads every posting of a query's terms through forEach.
  override forEach(callback: (value: number, key: number, map: Map<number, number>) => void, thisArg?: unknown): void {
    const { docs, freqs, count } = this;
    if (!docs || !freqs) return super.forEach(callback, thisArg);
    for (let i = 0; i < count; i++) {
      const doc = docs[i] as number;
      if (this.docs === null && !super.has(doc)) continue;
      callback.call(thisArg, freqs[i] as number, doc, this);
    }
  }
  override *entries(): MapIterator<[number, number]> {
    const { docs, freqs, count } = this;
    if (!docs || !freqs) return yield* super.entries();
    for (let i = 0; i < count; i++) {
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
