import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { splitUtf8 } from '../../../src/util/utf8.js';
import { runs } from '../helpers/tier.js';

const encoder = new TextEncoder();

/** What reading each piece on its own gives: the reference the one-decode split must match. */
function eachDecoded(pieces: Uint8Array[]): string[] {
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  return pieces.map((piece) => decoder.decode(piece));
}

function concat(pieces: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const piece of pieces) out.set(piece, (at += piece.length) - piece.length);
  return out;
}

const split = (pieces: Uint8Array[]) => splitUtf8(concat(pieces), pieces.map((p) => p.length));

describe('splitUtf8', () => {
  test('gives back every string of a concatenation: ASCII, 2-, 3- and 4-byte characters, a leading BOM, NUL, empty', () => {
    const texts = ['\uFEFFstarts with a BOM', 'plain', '', 'naïve café', '✓ — “quotes”', '🙂 emoji 🙂', 'a\u0000b', '\uFEFF'];
    expect(split(texts.map((t) => encoder.encode(t)))).toEqual(texts);
    const ascii = ['one', 'two', '', 'three'];
    expect(split(ascii.map((t) => encoder.encode(t)))).toEqual(ascii);
  });

  test('matches decoding each piece alone, for any strings (lone surrogates included)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 30 }), (texts) => {
        const pieces = texts.map((t) => encoder.encode(t));
        expect(split(pieces)).toEqual(eachDecoded(pieces));
      }),
      { numRuns: runs(300) },
    );
  });

  test('malformed UTF-8 decodes piece by piece, never shifting a character into a neighbour', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 12 }), { maxLength: 20 }), (pieces) => {
        expect(split(pieces)).toEqual(eachDecoded(pieces));
      }),
      { numRuns: runs(1000) },
    );
    // Valid text cut at any bytes, inside characters too.
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.array(fc.nat(200), { maxLength: 8 }), (text, cuts) => {
        const bytes = encoder.encode(text);
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...at].map((start, i, starts) => bytes.subarray(start, starts[i + 1] ?? bytes.length));
        expect(split(pieces)).toEqual(eachDecoded(pieces));
      }),
      { numRuns: runs(1000) },
    );
    // A truncated 4-byte character at the end of one piece, and a continuation byte opening the next.
    const pieces = [new Uint8Array([0x61, 0xf0, 0x9f]), new Uint8Array([0x98, 0x62])];
    expect(split(pieces)).toEqual(['a\uFFFD', '\uFFFDb']);
    // Malformed alone, valid joined: U+0080 cut in two.
    expect(split([new Uint8Array([0xc2]), new Uint8Array([0x80])])).toEqual(['\uFFFD', '\uFFFD']);
  });
});

test('splitUtf8 refuses lengths that do not add up to the input (a stale view of WebAssembly memory reads as empty)', () => {
  expect(() => splitUtf8(new Uint8Array(0), [3])).toThrow(/add up/);
  expect(() => splitUtf8(encoder.encode('abcd'), [1, 2])).toThrow(/add up/);
});
