/**
 * A reader for the safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian header
 * length, that many bytes of JSON (`name → { dtype, shape, data_offsets }` plus an optional `__metadata__`), then
 * the raw little-endian tensor bytes. Floats come out as Float32Array (F16 and BF16 widened exactly), integers as
 * numbers.
 */
import { EngramError, ErrorCode } from '../../src/errors.js';

export interface SafeTensor {
  dtype: string;
  shape: number[];
  /** Row-major values; F16/BF16/F64 widened or narrowed to f32, integer types as exact numbers. */
  values: Float32Array | Float64Array;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const BYTES: Record<string, number> = { F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1 };

function invalid(message: string, details?: Record<string, unknown>): EngramError {
  return new EngramError(ErrorCode.MODEL_INVALID, `safetensors: ${message}`, details ? { details } : {});
}

/** Half-precision bits → float: exact (every f16 is an f32). */
function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

export function parseHeader(bytes: Uint8Array): { entries: Record<string, HeaderEntry>; dataStart: number } {
  if (bytes.byteLength < 8) throw invalid('file shorter than its 8-byte header length');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.byteLength) throw invalid(`header length ${headerLength} runs past the end of the file`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength))) as Record<string, unknown>;
  } catch (error) {
    throw invalid(`header is not JSON (${(error as Error).message})`);
  }
  const entries: Record<string, HeaderEntry> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const { dtype, shape, data_offsets: offsets } = (entry ?? {}) as Partial<HeaderEntry>;
    if (typeof dtype !== 'string' || !Array.isArray(shape) || !Array.isArray(offsets) || offsets.length !== 2) {
      throw invalid(`tensor "${name}" has no dtype, shape and data_offsets`);
    }
    entries[name] = { dtype, shape, data_offsets: offsets };
  }
  return { entries, dataStart: 8 + headerLength };
}

/** The tensors of a safetensors file, by name; only the names asked for are decoded. */
export function readSafetensors(bytes: Uint8Array, names?: readonly string[]): Map<string, SafeTensor> {
  const { entries, dataStart } = parseHeader(bytes);
  const tensors = new Map<string, SafeTensor>();
  for (const [name, entry] of Object.entries(entries)) {
    if (names && !names.includes(name)) continue;
    tensors.set(name, decode(name, entry, bytes, dataStart));
  }
  return tensors;
}

function decode(name: string, { dtype, shape, data_offsets: [begin, end] }: HeaderEntry, bytes: Uint8Array, dataStart: number): SafeTensor {
  const size = BYTES[dtype];
  if (size === undefined) throw invalid(`tensor "${name}" has dtype ${dtype}; supported: ${Object.keys(BYTES).join(', ')}`, { dtype });
  const count = shape.reduce((a, b) => a * b, 1);
  if (end - begin !== count * size || dataStart + end > bytes.byteLength || begin < 0) {
    throw invalid(`tensor "${name}" (${dtype} ${JSON.stringify(shape)}) does not fit its data_offsets [${begin}, ${end}]`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + dataStart + begin, end - begin);
  const values = dtype === 'F64' || dtype === 'I64' ? new Float64Array(count) : new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const at = i * size;
    switch (dtype) {
      case 'F64': values[i] = view.getFloat64(at, true); break;
      case 'F32': values[i] = view.getFloat32(at, true); break;
      case 'F16': values[i] = halfToFloat(view.getUint16(at, true)); break;
      // bfloat16 is the top half of an f32.
      case 'BF16': values[i] = new Float32Array(new Uint32Array([view.getUint16(at, true) << 16]).buffer)[0]!; break;
      case 'I64': values[i] = Number(view.getBigInt64(at, true)); break;
      case 'I32': values[i] = view.getInt32(at, true); break;
      case 'I16': values[i] = view.getInt16(at, true); break;
      case 'I8': values[i] = view.getInt8(at); break;
      case 'U8': values[i] = view.getUint8(at); break;
    }
  }
  return { dtype, shape, values };
}

/** Writes tensors as safetensors (for fixtures and round-trip tests): F32 and F16 from float arrays. */
export function writeSafetensors(tensors: Record<string, { dtype: 'F32' | 'F16'; shape: number[]; values: ArrayLike<number> }>): Uint8Array {
  const header: Record<string, HeaderEntry> = {};
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (const [name, { dtype, shape, values }] of Object.entries(tensors)) {
    const data = dtype === 'F32' ? new Uint8Array(Float32Array.from(values).buffer) : f16Bytes(values);
    header[name] = { dtype, shape, data_offsets: [offset, offset + data.byteLength] };
    parts.push(data);
    offset += data.byteLength;
  }
  // The format pads the header with spaces to an 8-byte boundary.
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8);
  const headerBytes = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + headerBytes.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.byteLength), true);
  out.set(headerBytes, 8);
  let at = 8 + headerBytes.byteLength;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/** Float → nearest half (round to nearest even), for the writer. Values here are small: no overflow handling beyond Infinity. */
function f16Bytes(values: ArrayLike<number>): Uint8Array {
  const out = new Uint16Array(values.length);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (let i = 0; i < values.length; i++) {
    f32[0] = values[i]!;
    const x = u32[0]!;
    const sign = (x >>> 16) & 0x8000;
    const exponent = ((x >>> 23) & 0xff) - 127 + 15;
    let mantissa = x & 0x7fffff;
    if (exponent >= 0x1f) {
      out[i] = sign | 0x7c00;
    } else if (exponent <= 0) {
      if (exponent < -10) {
        out[i] = sign;
        continue;
      }
      mantissa |= 0x800000;
      const shift = 14 - exponent;
      const half = mantissa >> shift;
      const rest = mantissa & ((1 << shift) - 1);
      const mid = 1 << (shift - 1);
      out[i] = sign | (half + (rest > mid || (rest === mid && (half & 1)) ? 1 : 0));
    } else {
      const half = (exponent << 10) | (mantissa >> 13);
      const rest = mantissa & 0x1fff;
      out[i] = sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1)) ? 1 : 0));
    }
  }
  return new Uint8Array(out.buffer);
}
