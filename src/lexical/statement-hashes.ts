/**
 * Which indexed documents say which statement: the `statementHash` of each one's text by MiniSearch short id, and
 * the reverse, so that supersede's check on add (LexicalIndex.holdersOfRarestTerm) can tell at once that no stored
 * memory says any of a batch's statements, the common case, without reading a holder. A short id's text never
 * changes (a replaced document gets a new one), so an entry stays true while its MiniSearch instance lives.
 */
export class StatementHashes {
  /** Per short id, the hash of its text's statement key, or 0 when not known. */
  private byShortId = new Int32Array(0);
  /** Hash → the live short ids with that hash (one, or several). */
  private readonly byHash = new Map<number, number | number[]>();

  /** `unknown`: live documents already indexed whose hashes are not known (restored from a snapshot). */
  constructor(private unknown = 0) {}

  /** True when no live document's hash is unknown and none is among `hashes`. */
  noneSays(hashes: ReadonlySet<number>): boolean {
    if (this.unknown > 0) return false;
    for (const hash of hashes) if (this.byHash.has(hash)) return false;
    return true;
  }

  hashOf(shortId: number): number {
    return this.byShortId[shortId] ?? 0;
  }

  /** Notes a live document's hash: `fresh` for one just indexed, else one of the unknown ones (no-op when known). */
  note(shortId: number, hash: number, fresh: boolean): void {
    if (this.hashOf(shortId) !== 0) return;
    if (shortId >= this.byShortId.length) {
      const grown = new Int32Array(Math.max(1024, shortId + 1, this.byShortId.length * 2));
      grown.set(this.byShortId);
      this.byShortId = grown;
    }
    this.byShortId[shortId] = hash;
    const held = this.byHash.get(hash);
    this.byHash.set(hash, held === undefined ? shortId : typeof held === 'number' ? [held, shortId] : (held.push(shortId), held));
    if (!fresh) this.unknown--;
  }

  /** A live document leaves the index. */
  forget(shortId: number): void {
    const hash = this.hashOf(shortId);
    if (hash === 0) {
      this.unknown--;
      return;
    }
    this.byShortId[shortId] = 0;
    const held = this.byHash.get(hash);
    if (held === shortId || held === undefined) this.byHash.delete(hash);
    else if (typeof held !== 'number') {
      const rest = held.filter((s) => s !== shortId);
      this.byHash.set(hash, rest.length === 1 ? (rest[0] as number) : rest);
    }
  }
}
