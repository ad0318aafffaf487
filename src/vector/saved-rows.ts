/**
 * The saved form of a compact vector index (compact-rows.ts), so an open restores its codes and IVF lists instead
 * of reading every float and encoding it again. Rows are saved in chunks of SAVED_CHUNK_ROWS, each its own bytes,
 * so a save rewrites only the chunks whose rows changed. A chunk is tagged with the save that wrote it; the header
 * (engine/vector-persistence.ts) names each chunk's tag, so a save cut short leaves chunks the header refuses.
 *
 * Chunk bytes, little-endian: u32 words [magic, version, checksum of the words after it, tag, rows, stride, byte
 * length of the ids], then tails (float64 × rows), scales and errors (float32 × rows each), codes (rows × stride
 * bytes), the ids as UTF-8 JSON, zero-padded to 4 bytes. Each row's IVF list is saved apart, in list chunks of
 * the same rows ([magic, version, checksum, tag, rows], then int32 × rows, −1 for none): new lists rewrite those
 * (4 bytes a row), not the codes. Their centroids are the lists' own saved form (ivf.ts) behind the save's tag.
 */
import { wordSum } from './ivf.js';

/** Rows per saved chunk: at 384 dims about 3.4 MB, so a save after a few writes rewrites little. */
export const SAVED_CHUNK_ROWS = 8_192;

const CHUNK_MAGIC = 0x53525645; // 'EVRS'
const LISTS_MAGIC = 0x4c525645; // 'EVRL'
const LISTS_HEADER_WORDS = 5;
export const SAVED_ROWS_VERSION = 1;
const HEADER_WORDS = 8; // seven, padded so the float64 tails start 8-aligned

/** One chunk's rows as the index holds them. */
export interface SavedChunk {
  ids: string[];
  codes: Int8Array;
  scales: Float32Array;
  errors: Float32Array;
  tails: Float64Array;
}

export function encodeChunk(chunk: SavedChunk, stride: number, tag: number): Uint8Array {
  const rows = chunk.ids.length;
  const ids = new TextEncoder().encode(JSON.stringify(chunk.ids));
  const bytes = HEADER_WORDS * 4 + rows * (8 + 4 + 4 + stride) + ((ids.length + 3) & ~3);
  const buffer = new ArrayBuffer(bytes);
  const words = new Uint32Array(buffer);
  words.set([CHUNK_MAGIC, SAVED_ROWS_VERSION, 0, tag >>> 0, rows, stride, ids.length]);
  let at = HEADER_WORDS * 4;
  new Float64Array(buffer, at, rows).set(chunk.tails);
  at += rows * 8;
  new Float32Array(buffer, at, rows).set(chunk.scales);
  at += rows * 4;
  new Float32Array(buffer, at, rows).set(chunk.errors);
  at += rows * 4;
  new Int8Array(buffer, at, rows * stride).set(chunk.codes);
  at += rows * stride;
  new Uint8Array(buffer, at, ids.length).set(ids);
  words[2] = wordSum(words, 3);
  return new Uint8Array(buffer);
}

/**
 * A chunk's rows, or null when the bytes are not a chunk of this version with this tag, row count and stride
 * (another version, a torn save, or corrupt: the caller then encodes the vectors again).
 */
export function decodeChunk(bytes: Uint8Array, expected: { tag: number; rows: number; stride: number }): SavedChunk | null {
  if (bytes.byteLength % 4 !== 0 || bytes.byteLength < HEADER_WORDS * 4) return null;
  const buffer = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer;
  const words = new Uint32Array(buffer);
  const [magic, version, sum, tag, rows, stride, idBytes] = words as unknown as number[];
  if (magic !== CHUNK_MAGIC || version !== SAVED_ROWS_VERSION || tag !== expected.tag >>> 0 || rows !== expected.rows || stride !== expected.stride) return null;
  const length = HEADER_WORDS * 4 + rows * (8 + 4 + 4 + stride) + (((idBytes as number) + 3) & ~3);
  if (length !== buffer.byteLength || wordSum(words, 3) !== sum) return null;
  let at = HEADER_WORDS * 4;
  const tails = new Float64Array(buffer, at, rows);
  at += rows * 8;
  const scales = new Float32Array(buffer, at, rows);
  at += rows * 4;
  const errors = new Float32Array(buffer, at, rows);
  at += rows * 4;
  const codes = new Int8Array(buffer, at, rows * stride);
  at += rows * stride;
  let ids: unknown;
  try {
    ids = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, at, idBytes)));
  } catch {
    return null;
  }
  if (!Array.isArray(ids) || ids.length !== rows || !ids.every((id) => typeof id === 'string')) return null;
  return { ids: ids as string[], codes, scales, errors, tails };
}

/** A list chunk: each row's IVF list (−1 for none). */
export function encodeListChunk(lists: Int32Array, tag: number): Uint8Array {
  const words = new Uint32Array(LISTS_HEADER_WORDS + lists.length);
  words.set([LISTS_MAGIC, SAVED_ROWS_VERSION, 0, tag >>> 0, lists.length]);
  new Int32Array(words.buffer).set(lists, LISTS_HEADER_WORDS);
  words[2] = wordSum(words, 3);
  return new Uint8Array(words.buffer);
}

/** A list chunk's lists, or null when the bytes are not one of this version with this tag and row count. */
export function decodeListChunk(bytes: Uint8Array, expected: { tag: number; rows: number }): Int32Array | null {
  if (bytes.byteLength !== (LISTS_HEADER_WORDS + expected.rows) * 4) return null;
  const words = new Uint32Array(bytes.slice().buffer);
  const [magic, version, sum, tag, rows] = words as unknown as number[];
  if (magic !== LISTS_MAGIC || version !== SAVED_ROWS_VERSION || tag !== expected.tag >>> 0 || rows !== expected.rows || wordSum(words, 3) !== sum) return null;
  return new Int32Array(words.buffer, LISTS_HEADER_WORDS * 4);
}

/** The lists' centroids (ivf.ts encodeLists) behind the tag of the save that wrote them (u32, little-endian). */
export function encodeTaggedLists(form: Uint8Array, tag: number): Uint8Array {
  const value = new Uint8Array(4 + form.byteLength);
  new DataView(value.buffer).setUint32(0, tag >>> 0, true);
  value.set(form, 4);
  return value;
}

/** The centroids' form behind `tag`, or null when the bytes carry another tag (or none). */
export function decodeTaggedLists(bytes: Uint8Array, tag: number): Uint8Array | null {
  if (bytes.byteLength < 4 || new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true) !== tag >>> 0) return null;
  return bytes.subarray(4);
}
