import fc from 'fast-check';

/** Hostile query strings: search operators, quotes, lone surrogates, NUL, emoji (ZWJ too), any code point. */
export const hostileQuery = fc
  .array(
    fc.oneof(
      fc.constantFrom('(', ')', '"', '*', '-', '+', '~', '^', ':', '\\', '\u0000', '\uD800', '\uDFFF', '🔥', '👩‍💻', ' ', 'AND', 'OR', 'NOT', 'auth', 'the'),
      fc.integer({ min: 0, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''));
