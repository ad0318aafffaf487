/**
 * A bounded memo for a pure function of a string. Used for the embedder's token counter (assembling a context
 * tokenizes every hit, and the same memories come back search after search) and for
 * the lexical term pipeline (lowercase, stop words, stemming: a few distinct words make up most of any text), and
 * for what searches read of long memories' texts (their terms, statement keys and details), again search after search.
 * When full, the memo starts over (cheap, and the hot entries return at once).
 */
export function memoizeByText<T>(fn: (text: string) => T, limit = 10_000, cost?: (text: string, value: T) => number): (text: string) => T {
  const cache = new Map<string, T>();
  let spent = 0;
  return (text) => {
    let value = cache.get(text);
    if (value === undefined) {
      value = fn(text);
      // `limit` counts entries, or with `cost` what they weigh (long texts: their length, not their number).
      const weight = cost ? cost(text, value) : 1;
      if (weight > limit) return value;
      if (spent + weight > limit) {
        cache.clear();
        spent = 0;
      }
      cache.set(text, value);
      spent += weight;
    }
    return value;
  };
}

/** One value per object, made on first ask and kept as long as the object lives (a WeakMap). */
export function memoizeByObject<K extends object, T>(make: (key: K) => T): (key: K) => T {
  const cache = new WeakMap<K, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) cache.set(key, (value = make(key)));
    return value;
  };
}
