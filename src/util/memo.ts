/**
 * A bounded memo for a pure function of a string. Used for the embedder's token counter (assembling a context
 * tokenizes every hit, and the same memories come back search after search) and for
 * the lexical term pipeline (lowercase, stop words, stemming: a few distinct words make up most of any text).
 * When full, the memo starts over (cheap, and the hot entries return at once).
 */
export function memoizeByText<T>(fn: (text: string) => T, limit = 10_000): (text: string) => T {
  const cache = new Map<string, T>();
  return (text) => {
    let value = cache.get(text);
    if (value === undefined) {
      value = fn(text);
      if (cache.size >= limit) cache.clear();
      cache.set(text, value);
    }
    return value;
  };
}
