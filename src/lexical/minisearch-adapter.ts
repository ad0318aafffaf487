/**
 * The one place that reads and writes MiniSearch 7's private fields. The BM25 scorer reads its index straight
 * from them, and a snapshot saves and restores them; everything else goes through MiniSearch's public API.
 *
 * The shape is checked once on a real MiniSearch instance the first time an adapter is asked for, and again on
 * each instance adapted: on any other shape `miniSearchIndex` returns null, so searches take MiniSearch's public
 * `search()` and snapshots are refused.
 */
import MiniSearch from 'minisearch';
import { EngramError, ErrorCode } from '../errors.js';
import { PackedPostings } from './packed-postings.js';
import type { DecodedSnapshot, LexicalState, TermData } from './snapshot.js';
import { termTree, type TermTree } from './term-tree.js';

/** A SearchableMap (not exported by MiniSearch's main entry): made with a tree, it serves that tree. */
interface TermIndex extends Iterable<[string, TermData]> {
  get(term: string): TermData | undefined;
  has(term: string): boolean;
  fetch(term: string, initial: () => TermData): TermData;
  constructor: new (tree: TermTree<TermData>) => TermIndex;
}

/** The private fields of MiniSearch 7 used here (exported for this adapter's test only). */
export interface MiniSearchInternals {
  _index: TermIndex;
  _documentIds: Map<number, string>;
  _idToShortId: Map<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _fieldIds: Record<string, number>;
  _documentCount: number;
  _nextId: number;
  _dirtCount: number;
  _storedFields: Map<number, unknown>;
  removeTerm(fieldId: number, shortId: number, term: string): void;
  addTerm(fieldId: number, shortId: number, term: string): void;
}

/** Whether `candidate` has the fields of a MiniSearch 7 instance, with the types used here. */
export function hasMiniSearch7Shape(candidate: unknown): boolean {
  if (typeof candidate !== 'object' || candidate === null) return false;
  const m = candidate as Partial<MiniSearchInternals>;
  return (
    typeof m._index === 'object' && m._index !== null && typeof m._index.get === 'function' && typeof m._index.has === 'function' &&
    typeof m._index.fetch === 'function' && typeof m.addTerm === 'function' &&
    typeof m._index.constructor === 'function' && typeof m._index[Symbol.iterator] === 'function' &&
    m._documentIds instanceof Map && m._idToShortId instanceof Map && m._fieldLength instanceof Map && m._storedFields instanceof Map &&
    Array.isArray(m._avgFieldLength) && typeof m._fieldIds === 'object' && m._fieldIds !== null &&
    typeof m._documentCount === 'number' && typeof m._nextId === 'number' && typeof m._dirtCount === 'number' &&
    typeof m.removeTerm === 'function'
  );
}

/**
 * The installed MiniSearch checked on a real instance: its fields, what `removeTerm` does to a discarded document,
 * and a term index made from a `termTree` by the SearchableMap constructor serving exactly those terms.
 */
function installedShapeHolds(): boolean {
  try {
    const search = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], autoVacuum: false });
    if (!hasMiniSearch7Shape(search)) return false;
    const m = search as unknown as MiniSearchInternals;
    m.addTerm = packedAddTerm;
    search.addAll([{ id: 'a', text: 'ab ab ac' }, { id: 'b', text: 'b ab' }]);
    const fieldId = m._fieldIds.text;
    if (fieldId === undefined) return false;
    // add() files every term through addTerm: the postings are packed, counted, in short id order.
    const ab = m._index.get('ab')?.get(fieldId);
    if (!(ab instanceof PackedPostings) || ab.get(0) !== 2 || ab.get(1) !== 1 || ab.size !== 2) return false;
    search.discard('a');
    if (m._documentIds.has(0) || m._documentIds.get(1) !== 'b' || m._dirtCount !== 1) return false;
    m.removeTerm(fieldId, 0, 'ab');
    if (m._index.get('ab')?.get(fieldId)?.get(0) !== 1) return false;
    const terms: [string, TermData][] = [['ab', new Map()], ['ac', new Map()], ['b', new Map()]];
    const index = new m._index.constructor(termTree(terms));
    const served = [...index];
    return served.length === terms.length && terms.every(([term, data]) => index.get(term) === data) && !index.has('a');
  } catch {
    return false;
  }
}

/**
 * MiniSearch's addTerm with a new term's postings in a field made a PackedPostings instead of a Map (an add appends
 * to it, see packed-postings.ts); the same counting otherwise.
 */
function packedAddTerm(this: MiniSearchInternals, fieldId: number, shortId: number, term: string): void {
  const data = this._index.fetch(term, newTermData);
  const postings = data.get(fieldId);
  if (postings === undefined) data.set(fieldId, PackedPostings.of(shortId, 1));
  else postings.set(shortId, (postings.get(shortId) ?? 0) + 1);
}

const newTermData = (): TermData => new Map();

let installedShape: boolean | undefined;
// One adapter per instance, so that what callers cache per adapter lives as long as the instance.
const adapters = new WeakMap<object, MiniSearchIndex>();

/** The adapter over `search`'s index, or null when MiniSearch's internals are not the ones this reads. */
export function miniSearchIndex(search: MiniSearch<never> | MiniSearch<unknown>): MiniSearchIndex | null {
  installedShape ??= installedShapeHolds();
  if (!installedShape) return null;
  let adapter = adapters.get(search);
  if (!adapter && hasMiniSearch7Shape(search)) adapters.set(search, (adapter = new MiniSearchIndex(search as unknown as MiniSearchInternals)));
  return adapter ?? null;
}

function invalid(message: string): EngramError {
  return new EngramError(ErrorCode.SNAPSHOT_INVALID, message);
}

/**
 * One MiniSearch instance's index, read in place. The getters return MiniSearch's own maps (read them once per
 * search, not per posting); callers must not change them.
 */
export class MiniSearchIndex {
  /** Made by `miniSearchIndex`, once the shape is checked, before anything is added: postings are packed from then on. */
  constructor(private readonly ms: MiniSearchInternals) {
    ms.addTerm = packedAddTerm;
  }

  /** A live document's length in `fieldId` (indexed terms), or undefined. */
  fieldLengthOf(id: string, fieldId: number): number | undefined {
    const shortId = this.ms._idToShortId.get(id);
    return shortId === undefined ? undefined : this.ms._fieldLength.get(shortId)?.[fieldId];
  }

  /** Every live document's length in `fieldId`. */
  *lengthsIn(fieldId: number): Iterable<number> {
    for (const lengths of this.ms._fieldLength.values()) yield lengths[fieldId] ?? 0;
  }

  /** Live documents. */
  get documentCount(): number {
    return this.ms._documentCount;
  }

  /** Discarded documents whose postings may still be in the index. */
  get dirtCount(): number {
    return this.ms._dirtCount;
  }

  /** Field name → field id. */
  get fieldIds(): Readonly<Record<string, number>> {
    return this.ms._fieldIds;
  }

  /** Average length of each field, by field id. */
  get averageFieldLengths(): readonly number[] {
    return this.ms._avgFieldLength;
  }

  /** Short id → document id, for live documents only (a discarded short id is not in it). */
  get documentIds(): ReadonlyMap<number, string> {
    return this.ms._documentIds;
  }

  /** A live document's short id. */
  shortIdOf(id: string): number | undefined {
    return this.ms._idToShortId.get(id);
  }

  /** The next short id MiniSearch will give: it only grows, so any add moves it. */
  get nextId(): number {
    return this.ms._nextId;
  }

  /** MiniSearch's term index, as an identity only (`removeAll` replaces it): never read or change it through this. */
  get termIndexIdentity(): object {
    return this.ms._index;
  }

  /** Short id → length of each field, by field id. */
  get fieldLengths(): ReadonlyMap<number, readonly number[]> {
    return this.ms._fieldLength;
  }

  /** A term's postings by field id (short id → term frequency), discarded documents included until cleaned. */
  termPostings(term: string): ReadonlyMap<number, ReadonlyMap<number, number>> | undefined {
    return this.ms._index.get(term);
  }

  /** Takes one occurrence of a discarded document out of a term's postings in a field, as MiniSearch's own clean-up does. */
  dropDiscardedOccurrence(fieldId: number, shortId: number, term: string): void {
    this.ms.removeTerm(fieldId, shortId, term);
  }

  /** The index's state for a snapshot: MiniSearch's own maps, not copies. */
  state(): LexicalState {
    const m = this.ms;
    // Stored fields are never used (storeFields: []), so a snapshot does not carry them.
    if (m._storedFields.size > 0) throw invalid('lexical snapshot: unexpected MiniSearch internals');
    return {
      documentCount: m._documentCount, nextId: m._nextId, dirtCount: m._dirtCount, fieldIds: m._fieldIds,
      avgFieldLength: m._avgFieldLength, documentIds: m._documentIds, fieldLength: m._fieldLength, terms: m._index,
    };
  }

  /**
   * Replaces the index of a new, empty MiniSearch made with the snapshot's fields by `state` (it takes the maps
   * over). `state.terms` must be in ascending order: the term tree is built from them in one pass.
   */
  replaceState(state: DecodedSnapshot['state']): void {
    const m = this.ms;
    if (JSON.stringify(m._fieldIds) !== JSON.stringify(state.fieldIds)) throw invalid('lexical snapshot: other fields');
    const idToShortId = new Map<string, number>();
    for (const [shortId, id] of state.documentIds) idToShortId.set(id, shortId);
    if (idToShortId.size !== state.documentIds.size) throw invalid('lexical snapshot: one id twice');
    const index = new m._index.constructor(termTree(state.terms));
    m._documentCount = state.documentCount;
    m._nextId = state.nextId;
    m._dirtCount = state.dirtCount;
    m._avgFieldLength = state.avgFieldLength;
    m._documentIds = state.documentIds;
    m._fieldLength = state.fieldLength;
    m._idToShortId = idToShortId;
    m._index = index;
  }
}
