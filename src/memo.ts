/**
 * A bounded memo for a pure text → number function. Used for the embedder's token counter: a tokenizer
 * call costs ~0.1 ms, assembling a context counts every hit, and the same memories come back search after
 * search. When full, the memo starts over (cheap, and the hot entries return at once).
 */
export function memoizeByText(fn: (text: string) => number, limit = 10_000): (text: string) => number {
  const cache = new Map<string, number>();
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
