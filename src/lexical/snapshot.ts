/**
 * Lexical index snapshots: MiniSearch's index in a compact, versioned binary form (typed arrays in one byte
 * array), so a reopen restores its maps directly instead of re-indexing every text or parsing MiniSearch's JSON,
 * both much slower.
 *
 * A snapshot also carries what decides whether it may be used: the lexical settings it was made under, the
 * store's change counter at that moment (the counter moves only when a memory is added or removed or its text
 * or tags change, so an equal counter means nothing the index depends on changed), and a 64-bit hash of each
 * memory's text and tags, to catch up the few memories that changed when the counter moved (a crash between a
 * write and the next save). A checksum covers every byte; any mismatch makes `decodeSnapshot` throw and the
 * engine rebuild the index. Every refusal is an `EngramError` with code `SNAPSHOT_INVALID`.
 *
 * Layout (all little-endian): four u32 words (magic, version, checksum of everything after it, header bytes),
 * a JSON header with the scalar fields and section sizes (padded to 4 bytes), then the sections in the order of
 * `sections` in `encodeSnapshot`: u32 arrays, the term frequencies (u8, u16 or u32, whichever fits) and one
 * UTF-8 string holding every document id and then every term, split by their UTF-16 lengths.
 */
import { EngramError, ErrorCode } from '../errors.js';
import { nextTask } from '../util/schedule.js';
import type { MemoryRecord } from '../types.js';
import { PackedPostings } from './packed-postings.js';

/**
 * The state without the postings of removed documents, which MiniSearch only marks as removed (`dirtCount`) and
 * cleans up later: a saved snapshot must not keep a removed memory's terms.
 */
function withoutDiscarded(state: LexicalState): LexicalState {
  if (state.dirtCount === 0) return state;
  const live = state.documentIds;
  const terms: [string, TermData][] = [];
  for (const [term, data] of state.terms) {
    const kept: TermData = new Map();
    for (const [fieldId, postings] of data) {
      const out = new Map<number, number>();
      for (const [doc, freq] of postings) if (live.has(doc)) out.set(doc, freq);
      if (out.size > 0) kept.set(fieldId, out);
    }
    if (kept.size > 0) terms.push([term, kept]);
  }
  return { ...state, dirtCount: 0, terms };
}

/** A serialised lexical index (see `decodeSnapshot`). */
export type IndexSnapshot = Uint8Array;

export const SNAPSHOT_VERSION = 3;
/** "ENGL" read as a little-endian u32: a big-endian reader (or another file) does not match it. */
const MAGIC = 0x4c474e45;
const PREAMBLE_WORDS = 4;

/** term → field id → short document id → term frequency: MiniSearch's inverted index. */
export type TermData = Map<number, Map<number, number>>;

/** The state of a MiniSearch index, as its private fields hold it (minisearch-adapter.ts reads and restores them). */
export interface LexicalState {
  documentCount: number;
  nextId: number;
  dirtCount: number;
  fieldIds: Record<string, number>;
  avgFieldLength: number[];
  /** Short id → document id, in MiniSearch's order. */
  documentIds: Map<number, string>;
  /** Short id → length of each field. */
  fieldLength: Map<number, number[]>;
  /** Every term with its postings, in the index's iteration order. */
  terms: Iterable<[string, TermData]>;
}

export interface DecodedSnapshot {
  settings: string;
  counter: number;
  state: LexicalState & { terms: [string, TermData][] };
  /** Two u32 per document, in `state.documentIds` order: `recordHash` of the memory when the snapshot was made. */
  hashes: Uint32Array;
}

interface Header {
  settings: string;
  counter: number;
  documentCount: number;
  nextId: number;
  dirtCount: number;
  fieldIds: Record<string, number>;
  avgFieldLength: number[];
  docs: number;
  terms: number;
  entries: number;
  postings: number;
  freqBytes: 1 | 2 | 4;
  stringBytes: number;
}

/** A field length MiniSearch does not have for a document (a field that was null). */
const NO_LENGTH = 0xffffffff;

function invalid(message: string): EngramError {
  return new EngramError(ErrorCode.SNAPSHOT_INVALID, message);
}

function fail(reason: string): never {
  throw invalid(`lexical snapshot refused: ${reason}`);
}

/** Two independent 32-bit hashes (FNV-1a and a multiply-xorshift) of a memory's text and tags, into `out[at..at+1]`. */
export function recordHash(record: Pick<MemoryRecord, 'text' | 'tags'>, out: Uint32Array, at: number): void {
  let h1 = 0x811c9dc5;
  let h2 = 0x9e3779b9;
  const mix = (s: string) => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x85ebca6b) ^ (h2 >>> 13);
    }
  };
  mix(record.text);
  for (const tag of record.tags) {
    // A separator no text character produces keeps ["ab"] apart from ["a", "b"].
    h1 = Math.imul(h1 ^ 0x10000, 0x01000193);
    h2 = Math.imul(h2 ^ 0x10000, 0x85ebca6b) ^ (h2 >>> 13);
    mix(tag);
  }
  out[at] = h1 >>> 0;
  out[at + 1] = h2 >>> 0;
}

function checksum(words: Uint32Array): number {
  let h = 0x2545f491;
  for (let i = 0; i < words.length; i++) {
    h = Math.imul(h ^ (words[i] as number), 0x9e3779b1);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

const pad4 = (n: number) => (n + 3) & ~3;

/**
 * `recordHash` of every indexed memory, in `documentIds` order, for `encodeSnapshot`. It lets other tasks run
 * every `slice` memories (hashing every text is a large part of a save); the caller keeps the documents unchanged meanwhile.
 */
export async function documentHashes(
  documentIds: Map<number, string>,
  records: { get(id: string): Pick<MemoryRecord, 'text' | 'tags'> | undefined },
  slice = 5000,
): Promise<Uint32Array> {
  const hashes = new Uint32Array(documentIds.size * 2);
  let d = 0;
  for (const id of documentIds.values()) {
    const record = records.get(id);
    if (!record) throw invalid(`document ${id} is indexed but not a stored memory`);
    recordHash(record, hashes, d * 2);
    if (++d % slice === 0) await nextTask();
  }
  return hashes;
}

/** Serialises `state` with the `documentHashes` of its documents. */
export function encodeSnapshot(dirty: LexicalState, meta: { settings: string; counter: number }, hashes: Uint32Array): IndexSnapshot {
  const state = withoutDiscarded(dirty);
  const fields = Object.keys(state.fieldIds).length;
  const docs = state.documentIds.size;
  // In ascending order: the decoder checks it (so no term twice) and restores MiniSearch's term tree in one pass.
  const terms = [...state.terms].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let entries = 0;
  let postings = 0;
  let maxFreq = 0;
  for (const [, data] of terms) {
    entries += data.size;
    for (const termFreqs of data.values()) {
      postings += termFreqs.size;
      const freqs = termFreqs instanceof PackedPostings ? termFreqs.packed()?.freqs : undefined;
      if (freqs) for (let i = 0; i < freqs.length; i++) maxFreq = Math.max(maxFreq, freqs[i] as number);
      else for (const freq of termFreqs.values()) if (freq > maxFreq) maxFreq = freq;
    }
  }
  const shortIds = new Uint32Array(docs);
  const idLengths = new Uint32Array(docs);
  const fieldLengths = new Uint32Array(docs * fields);
  if (hashes.length !== docs * 2) throw invalid('one hash pair per document expected');
  const ids: string[] = [];
  let d = 0;
  for (const [shortId, id] of state.documentIds) {
    shortIds[d] = shortId;
    idLengths[d] = id.length;
    ids.push(id);
    const lengths = state.fieldLength.get(shortId) ?? [];
    for (let f = 0; f < fields; f++) fieldLengths[d * fields + f] = lengths[f] ?? NO_LENGTH;
    d++;
  }
  const termLengths = new Uint32Array(terms.length);
  const termEntries = new Uint32Array(terms.length);
  const entryFields = new Uint32Array(entries);
  const entryPostings = new Uint32Array(entries);
  const postingDocs = new Uint32Array(postings);
  const freqBytes = maxFreq <= 0xff ? 1 : maxFreq <= 0xffff ? 2 : 4;
  const freqs = freqBytes === 1 ? new Uint8Array(postings) : freqBytes === 2 ? new Uint16Array(postings) : new Uint32Array(postings);
  let e = 0;
  let p = 0;
  terms.forEach(([term, data], t) => {
    termLengths[t] = term.length;
    termEntries[t] = data.size;
    for (const [fieldId, termFreqs] of data) {
      entryFields[e] = fieldId;
      entryPostings[e] = termFreqs.size;
      e++;
      const packed = termFreqs instanceof PackedPostings ? termFreqs.packed() : null;
      if (packed) {
        postingDocs.set(packed.docs, p);
        for (let i = 0; i < packed.freqs.length; i++) freqs[p + i] = packed.freqs[i] as number;
        p += packed.docs.length;
        continue;
      }
      for (const [docId, freq] of termFreqs) {
        postingDocs[p] = docId;
        freqs[p] = freq;
        p++;
      }
    }
  });
  const strings = new TextEncoder().encode(ids.join('') + terms.map(([term]) => term).join(''));
  const header: Header = {
    settings: meta.settings, counter: meta.counter, documentCount: state.documentCount, nextId: state.nextId, dirtCount: state.dirtCount,
    fieldIds: state.fieldIds, avgFieldLength: state.avgFieldLength, docs, terms: terms.length, entries, postings, freqBytes,
    stringBytes: strings.byteLength,
  };
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const sections: ArrayBufferView[] = [
    shortIds, idLengths, fieldLengths, hashes, termLengths, termEntries, entryFields, entryPostings, postingDocs, freqs, strings,
  ];
  let size = PREAMBLE_WORDS * 4 + pad4(headerBytes.byteLength);
  for (const section of sections) size = pad4(size + section.byteLength);
  const out = new Uint8Array(size);
  out.set(headerBytes, PREAMBLE_WORDS * 4);
  let offset = PREAMBLE_WORDS * 4 + pad4(headerBytes.byteLength);
  for (const section of sections) {
    out.set(new Uint8Array(section.buffer, section.byteOffset, section.byteLength), offset);
    offset = pad4(offset + section.byteLength);
  }
  const words = new Uint32Array(out.buffer);
  words[0] = MAGIC;
  words[1] = SNAPSHOT_VERSION;
  words[3] = headerBytes.byteLength;
  words[2] = checksum(words.subarray(3));
  return out;
}

/** The header of a snapshot whose preamble is sound, without checking the rest; null when it is not one. */
export function snapshotHeader(bytes: Uint8Array): Header | null {
  try {
    return readHeader(aligned(bytes)).header;
  } catch {
    return null;
  }
}

function aligned(bytes: Uint8Array): Uint8Array {
  // Typed-array views need 4-byte aligned offsets: copy the rare unaligned input.
  return bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
}

function readHeader(bytes: Uint8Array): { header: Header; words: Uint32Array; offset: number } {
  if (!(bytes instanceof Uint8Array) || bytes.byteLength < PREAMBLE_WORDS * 4 || bytes.byteLength % 4 !== 0) fail('not a snapshot');
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  if (words[0] !== MAGIC) fail('not a snapshot');
  if (words[1] !== SNAPSHOT_VERSION) fail(`version ${words[1]}, this Engram reads ${SNAPSHOT_VERSION}`);
  const headerLength = words[3] as number;
  if (PREAMBLE_WORDS * 4 + headerLength > bytes.byteLength) fail('truncated');
  let header: Header;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(PREAMBLE_WORDS * 4, PREAMBLE_WORDS * 4 + headerLength))) as Header;
  } catch {
    fail('unreadable header');
  }
  return { header, words, offset: PREAMBLE_WORDS * 4 + pad4(headerLength) };
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 0xffffffff;

/** Reads and checks a snapshot. Throws an `EngramError` (`SNAPSHOT_INVALID`) on anything unexpected (the caller then rebuilds). */
export function decodeSnapshot(input: Uint8Array): DecodedSnapshot {
  const bytes = aligned(input);
  const { header: h, words, offset: start } = readHeader(bytes);
  if (checksum(words.subarray(3)) !== words[2]) fail('checksum mismatch (corrupt)');
  const fieldIds = h.fieldIds && typeof h.fieldIds === 'object' ? Object.values(h.fieldIds) : [];
  const fields = fieldIds.length;
  if (
    typeof h.settings !== 'string' || !isCount(h.counter) || !isCount(h.documentCount) || !isCount(h.nextId) || !isCount(h.dirtCount) ||
    !isCount(h.docs) || !isCount(h.terms) || !isCount(h.entries) || !isCount(h.postings) || !isCount(h.stringBytes) ||
    ![1, 2, 4].includes(h.freqBytes) || fields === 0 || !fieldIds.every((f) => isCount(f) && f < fields) ||
    new Set(fieldIds).size !== fields || !Array.isArray(h.avgFieldLength) || h.avgFieldLength.length > fields ||
    !h.avgFieldLength.every((x) => typeof x === 'number' && Number.isFinite(x)) || h.documentCount !== h.docs
  ) {
    fail('inconsistent header');
  }
  let offset = start;
  const take = <T>(count: number, bytesEach: number, make: (buffer: ArrayBuffer, at: number, n: number) => T): T => {
    if (offset + count * bytesEach > bytes.byteLength) fail('truncated');
    const view = make(bytes.buffer as ArrayBuffer, bytes.byteOffset + offset, count);
    offset = pad4(offset + count * bytesEach);
    return view;
  };
  const u32 = (count: number) => take(count, 4, (b, at, n) => new Uint32Array(b, at, n));
  const shortIds = u32(h.docs);
  const idLengths = u32(h.docs);
  const fieldLengths = u32(h.docs * fields);
  const hashes = u32(h.docs * 2).slice();
  const termLengths = u32(h.terms);
  const termEntries = u32(h.terms);
  const entryFields = u32(h.entries);
  const entryPostings = u32(h.entries);
  const postingDocs = u32(h.postings);
  const freqs = take(h.postings, h.freqBytes, (b, at, n) =>
    h.freqBytes === 1 ? new Uint8Array(b, at, n) : h.freqBytes === 2 ? new Uint16Array(b, at, n) : new Uint32Array(b, at, n),
  );
  const stringBytes = take(h.stringBytes, 1, (b, at, n) => new Uint8Array(b, at, n));
  if (offset !== bytes.byteLength) fail('unexpected length');
  let strings: string;
  try {
    strings = new TextDecoder('utf-8', { fatal: true }).decode(stringBytes);
  } catch {
    fail('unreadable strings');
  }

  let at = 0;
  const documentIds = new Map<number, string>();
  const fieldLength = new Map<number, number[]>();
  for (let d = 0; d < h.docs; d++) {
    const shortId = shortIds[d] as number;
    if (shortId >= h.nextId) fail('document short id out of range');
    const end = at + (idLengths[d] as number);
    documentIds.set(shortId, strings.slice(at, end));
    at = end;
    const lengths: number[] = [];
    for (let f = 0; f < fields; f++) {
      const length = fieldLengths[d * fields + f] as number;
      if (length !== NO_LENGTH) lengths[f] = length;
    }
    fieldLength.set(shortId, lengths);
  }
  // (Two documents with one id would leave the restored index's id map short: the engine's check refuses that.)
  if (documentIds.size !== h.docs) fail('duplicate documents');

  const terms: [string, TermData][] = new Array(h.terms);
  let previous: string | null = null;
  let e = 0;
  let p = 0;
  for (let t = 0; t < h.terms; t++) {
    const end = at + (termLengths[t] as number);
    const term = strings.slice(at, end);
    if (previous !== null && !(previous < term)) fail('terms out of order or repeated');
    previous = term;
    at = end;
    const data: TermData = new Map();
    const entryEnd = e + (termEntries[t] as number);
    if (entryEnd > h.entries) fail('entries out of range');
    for (; e < entryEnd; e++) {
      const fieldId = entryFields[e] as number;
      const postingEnd = p + (entryPostings[e] as number);
      if (fieldId >= fields || postingEnd > h.postings) fail('postings out of range');
      for (let i = p; i < postingEnd; i++) {
        if ((postingDocs[i] as number) >= h.nextId) fail('posting document out of range');
        // Ascending, as PackedPostings' binary search needs (a save writes them so).
        if (i > p && (postingDocs[i] as number) <= (postingDocs[i - 1] as number)) fail('postings out of order');
      }
      // Views into the snapshot, which the index then keeps alive (a copy would cost the time saved).
      data.set(fieldId, new PackedPostings(postingDocs.subarray(p, postingEnd), freqs.subarray(p, postingEnd)));
      p = postingEnd;
    }
    terms[t] = [term, data];
  }
  if (e !== h.entries || p !== h.postings || at !== strings.length) fail('section sizes disagree');

  return {
    settings: h.settings,
    counter: h.counter,
    state: {
      documentCount: h.documentCount, nextId: h.nextId, dirtCount: h.dirtCount, fieldIds: h.fieldIds,
      avgFieldLength: h.avgFieldLength, documentIds, fieldLength, terms,
    },
    hashes,
  };
}

/**
 * What a restored snapshot misses against the stored memories: those whose text or tags changed or that are new
 * (to index again) and the indexed ids no longer stored (to remove).
 */
export function staleDocuments(
  snapshot: DecodedSnapshot,
  records: { get(id: string): MemoryRecord | undefined; values(): Iterable<MemoryRecord> },
): { changed: MemoryRecord[]; removed: string[] } {
  const changed: MemoryRecord[] = [];
  const removed: string[] = [];
  const indexed = new Set<string>();
  const hash = new Uint32Array(2);
  let d = 0;
  for (const id of snapshot.state.documentIds.values()) {
    indexed.add(id);
    const record = records.get(id);
    if (!record) removed.push(id);
    else {
      recordHash(record, hash, 0);
      if (hash[0] !== snapshot.hashes[d * 2] || hash[1] !== snapshot.hashes[d * 2 + 1]) changed.push(record);
    }
    d++;
  }
  for (const record of records.values()) if (!indexed.has(record.id)) changed.push(record);
  return { changed, removed };
}
