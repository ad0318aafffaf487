// ignoreBOM: a text that starts with U+FEFF keeps it (by default the decoder drops it at the start of the input).
const strict = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Splits concatenated UTF-8 strings by their byte lengths with one decode. The pieces' UTF-16 lengths are counted
 * from the bytes (one unit per character, two for a 4-byte one), unless the bytes are plain ASCII. Malformed UTF-8
 * (SQLite keeps whatever bytes a writer gave it), including pieces that are only valid joined together, is decoded
 * piece by piece, as reading each row would.
 */
export function splitUtf8(bytes: Uint8Array, byteLengths: readonly number[]): string[] {
  let total = 0;
  for (const length of byteLengths) total += length;
  if (total !== bytes.length) throw new Error(`splitUtf8: the lengths add up to ${total} bytes, the input has ${bytes.length}`);
  const eachAlone = () => {
    let offset = 0;
    return byteLengths.map((length) => lenient.decode(bytes.subarray(offset, (offset += length))));
  };
  let all: string;
  try {
    all = strict.decode(bytes);
  } catch {
    return eachAlone();
  }
  const out = new Array<string>(byteLengths.length);
  let at = 0;
  if (all.length === bytes.length) {
    for (let i = 0; i < byteLengths.length; i++) out[i] = all.slice(at, (at += byteLengths[i]!));
    return out;
  }
  let byte = 0;
  for (let i = 0; i < byteLengths.length; i++) {
    const end = byte + byteLengths[i]!;
    // Valid as a whole, but a piece that starts inside a character was malformed alone.
    if (byte < end && ((bytes[byte] as number) & 0xc0) === 0x80) return eachAlone();
    let units = 0;
    for (; byte < end; byte++) {
      const b = bytes[byte]!;
      if ((b & 0xc0) !== 0x80) units += b >= 0xf0 ? 2 : 1;
    }
    out[i] = all.slice(at, (at += units));
  }
  return out;
}
