/**
 * The compact vector index in the store (vector/saved-rows.ts): restored on open when it is current, saved on
 * demand (`Engine.saveVectorIndex`, which the worker's and engram/node's snapshot savers call). Current means
 * made at the store's present vector counter (Store.vectorCounter): no vector was written or removed since.
 *
 * Meta keys per vector space: the header (JSON: version, sizes, the counter, each chunk's tag, the lists' tag,
 * share and floor, the rows' running sum), one key per chunk, and the answering IVF lists' centroids behind their
 * tag. The header is written last, so a save cut short leaves the header before it, whose tags the rewritten
 * chunks no longer carry: the next open refuses the form and encodes the vectors again.
 */
import type { Store } from '../store/store.js';
import { decodeChunk, decodeListChunk, decodeTaggedLists, encodeChunk, encodeListChunk, encodeTaggedLists, SAVED_CHUNK_ROWS, SAVED_ROWS_VERSION } from '../vector/saved-rows.js';
import type { VectorIndex } from '../vector/vector-index.js';

const KEY_PREFIX = 'engram.vector-rows.';
/** The vector spaces with a saved form (JSON array), so one dropped with its vectors leaves nothing behind. */
const SPACES_KEY = 'engram.vector-rows';

interface Header {
  version: number;
  dim: number;
  stride: number;
  size: number;
  chunkRows: number;
  counter: number;
  tags: number[];
  /** The answering lists (their centroids' tag and each list chunk's), or null. A floor of −∞ is saved as null. */
  lists: { tag: number; tags: number[]; share: number; floor: number | null } | null;
  rowSum: number[];
}

type PersistStore = Pick<Store, 'readMeta' | 'write' | 'vectorCounter'>;

const headerKey = (space: string) => `${KEY_PREFIX}${space}`;
const chunkKey = (space: string, chunk: number) => `${KEY_PREFIX}${space}.${chunk}`;
const listsKey = (space: string) => `${KEY_PREFIX}${space}.lists`;
const listChunkKey = (space: string, chunk: number) => `${KEY_PREFIX}${space}.lists.${chunk}`;

/** A tag no earlier save of this space is likely to have used (a random nonzero u32). */
function newTag(): number {
  const word = new Uint32Array(1);
  do crypto.getRandomValues(word);
  while (word[0] === 0);
  return word[0] as number;
}

async function readHeader(store: PersistStore, space: string): Promise<Header | null> {
  const raw = await store.readMeta(headerKey(space)).catch(() => null);
  if (typeof raw !== 'string') return null;
  try {
    const header = JSON.parse(raw) as Header;
    return header && header.version === SAVED_ROWS_VERSION && header.chunkRows === SAVED_CHUNK_ROWS && Array.isArray(header.tags) ? header : null;
  } catch {
    return null;
  }
}

/**
 * Fills the empty compact `index` from the saved form of `space` when it is current and whole; false (the index
 * left empty) otherwise. `has`: whether a memory with that id is stored.
 */
export async function restoreVectorRows(index: VectorIndex, store: PersistStore, space: string, has: (id: string) => boolean): Promise<boolean> {
  const form = index.savedForm();
  if (!form || !store.vectorCounter) return false;
  const header = await readHeader(store, space);
  if (!header || header.dim !== index.dim || header.stride !== form.stride || header.tags.length !== Math.ceil(header.size / SAVED_CHUNK_ROWS)) return false;
  if (!Array.isArray(header.rowSum) || !header.rowSum.every(Number.isFinite)) return false;
  if (header.counter !== (await store.vectorCounter())) return false;
  let lists: { form: Uint8Array; share: number; floor: number } | null = null;
  if (header.lists) {
    const raw = await store.readMeta(listsKey(space)).catch(() => null);
    const form = raw instanceof Uint8Array ? decodeTaggedLists(raw, header.lists.tag) : null;
    if (!form || header.lists.tags.length !== header.tags.length) return false;
    lists = { form, share: header.lists.share, floor: header.lists.floor ?? -Infinity };
  }
  const rowsIn = (c: number) => Math.min(SAVED_CHUNK_ROWS, header.size - c * SAVED_CHUNK_ROWS);
  const bytes = async (key: string) => {
    const raw = await store.readMeta(key).catch(() => null);
    return raw instanceof Uint8Array ? raw : null;
  };
  const chunk = async (c: number) => {
    const raw = await bytes(chunkKey(space, c));
    return raw && decodeChunk(raw, { tag: header.tags[c] as number, rows: rowsIn(c), stride: header.stride });
  };
  const listChunk = async (c: number) => {
    const raw = header.lists && (await bytes(listChunkKey(space, c)));
    return raw ? decodeListChunk(raw, { tag: header.lists!.tags[c] as number, rows: rowsIn(c) }) : null;
  };
  return index.restoreSaved({ size: header.size, rowSum: header.rowSum, lists }, chunk, listChunk, has);
}

/**
 * Writes what changed of `index`'s saved form for `space` since its last save or restore (every chunk the first
 * time, or when other IVF lists answer); returns the bytes written (0: nothing to save, or not a compact index).
 * Run it in the write queue: the counter read there is the one of the rows saved.
 */
export async function saveVectorRows(index: VectorIndex, store: PersistStore, space: string): Promise<number> {
  const form = index.savedForm();
  if (!form || !store.vectorCounter) return 0;
  const counter = await store.vectorCounter();
  const before = await readHeader(store, space);
  // The chunks the index has not marked changed are those of the header it saved or restored.
  const kept = before && before.dim === index.dim && before.stride === form.stride ? before : null;
  if (kept?.counter === counter && form.changed.length === 0 && !form.listsChanged) return 0;
  const tag = newTag();
  const changed = new Set(form.changed);
  const tags = Array.from({ length: form.chunks }, (_, c) => (kept && !changed.has(c) ? (kept.tags[c] ?? 0) : 0));
  let bytes = 0;
  // One write per chunk, so a million rows are never all encoded at once.
  for (let c = 0; c < form.chunks; c++) {
    if (tags[c] !== 0) continue;
    const encoded = encodeChunk(index.savedChunk(c), form.stride, tag);
    await store.write({ meta: { [chunkKey(space, c)]: encoded } });
    tags[c] = tag;
    bytes += encoded.byteLength;
  }
  const meta: Record<string, string | Uint8Array | null> = {};
  for (let c = form.chunks; c < (before?.tags.length ?? 0); c++) meta[chunkKey(space, c)] = meta[listChunkKey(space, c)] = null;
  let lists: Header['lists'] = null;
  if (form.lists) {
    const keptLists = kept?.lists && !form.listsChanged ? kept.lists : null;
    const listTags = Array.from({ length: form.chunks }, (_, c) => (keptLists && !changed.has(c) ? (keptLists.tags[c] ?? 0) : 0));
    for (let c = 0; c < form.chunks; c++) {
      if (listTags[c] !== 0) continue;
      const encoded = encodeListChunk(index.savedListChunk(c), tag);
      meta[listChunkKey(space, c)] = encoded;
      listTags[c] = tag;
      bytes += encoded.byteLength;
    }
    if (!keptLists) {
      const value = encodeTaggedLists(form.lists.form(), tag);
      meta[listsKey(space)] = value;
      bytes += value.byteLength;
    }
    lists = { tag: keptLists ? keptLists.tag : tag, tags: listTags, share: form.lists.share, floor: Number.isFinite(form.lists.floor) ? form.lists.floor : null };
  } else {
    meta[listsKey(space)] = null;
    for (let c = 0; c < (before?.lists ? before.tags.length : 0); c++) meta[listChunkKey(space, c)] = null;
  }
  const header: Header = { version: SAVED_ROWS_VERSION, dim: index.dim, stride: form.stride, size: form.size, chunkRows: SAVED_CHUNK_ROWS, counter, tags, lists, rowSum: [...form.rowSum] };
  meta[headerKey(space)] = JSON.stringify(header);
  const spaces = await savedSpaces(store);
  if (!spaces.includes(space)) meta[SPACES_KEY] = JSON.stringify([...spaces, space]);
  await store.write({ meta });
  index.markSaved(form);
  return bytes;
}

async function savedSpaces(store: PersistStore): Promise<string[]> {
  const raw = await store.readMeta(SPACES_KEY).catch(() => null);
  try {
    const spaces = typeof raw === 'string' ? (JSON.parse(raw) as unknown) : [];
    return Array.isArray(spaces) ? spaces.filter((space): space is string => typeof space === 'string') : [];
  } catch {
    return [];
  }
}

/** Deletes the saved forms of every vector space but `keep` (its vectors were just dropped from the store). */
export async function dropOtherVectorRows(store: PersistStore, keep: string): Promise<void> {
  const spaces = await savedSpaces(store);
  const meta: Record<string, string | Uint8Array | null> = {};
  for (const space of spaces) {
    if (space === keep) continue;
    const header = await readHeader(store, space);
    for (let c = 0; c < (header?.tags.length ?? 0); c++) meta[chunkKey(space, c)] = meta[listChunkKey(space, c)] = null;
    meta[headerKey(space)] = meta[listsKey(space)] = null;
  }
  if (Object.keys(meta).length === 0) return;
  meta[SPACES_KEY] = spaces.includes(keep) ? JSON.stringify([keep]) : null;
  await store.write({ meta });
}
