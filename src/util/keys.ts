/**
 * Unknown option names and record fields, refused with the nearest valid one: a typo (`embeder`, `{ limit: 1 }`)
 * would otherwise be ignored without a word, and plain JavaScript, spread objects, MCP and tool calls reach here
 * with no type checker in between.
 */
import { invalidInput } from '../errors.js';

/**
 * Every key of `T`, each `true`: declared as `{ a: true, b: true } satisfies KeySet<T>`, a missing key or one `T`
 * does not have fails to compile, so the list checked at run time and the type cannot drift apart.
 */
export type KeySet<T> = { readonly [K in keyof Required<T>]: true };

/** The keys of a `KeySet`, in declaration order. */
export function keysOf<T>(set: KeySet<T>): readonly (keyof T & string)[] {
  return Object.freeze(Object.keys(set)) as readonly (keyof T & string)[];
}

/** Names people reach for that are far from the key in spelling: `{ limit }` for `k`. */
export type KeyAliases = Readonly<Record<string, string>>;

export interface KnownKeysRule {
  /** How the message names a key: `option` (default), `search option`, `field`. */
  noun?: string;
  /** Put before each key in the message: `filter.`, `memories[3].`. */
  prefix?: string;
  /** Other names that mean one of the keys. */
  aliases?: KeyAliases;
}

/**
 * INVALID_INPUT naming the first own key of `value` not in `keys`, with the nearest valid one ("unknown option
 * 'embeder' (did you mean 'embedder'?)"), or the valid ones when none is near. Keys whose value is `undefined` count
 * too: `{ ...defaults, topK: undefined }` is still a misspelling. Anything not a plain object is left to the
 * caller's own check.
 */
export function checkKnownKeys(value: unknown, keys: readonly string[], rule: KnownKeysRule = {}): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (keys.includes(key)) continue;
    const { noun = 'option', prefix = '' } = rule;
    const shown = `${prefix}${key.slice(0, 60)}`;
    const near = nearestKey(key, keys, rule.aliases);
    const hint = near === undefined ? `: valid ${noun}s are ${keys.map((k) => `'${k}'`).join(', ')}` : ` (did you mean '${prefix}${near}'?)`;
    throw invalidInput(`unknown ${noun} '${shown}'${hint}`, { key: shown, ...(near === undefined ? {} : { suggestion: `${prefix}${near}` }) });
  }
}

/**
 * The key nearest `name`: an alias first, then the smallest edit distance (insertions, deletions, substitutions and
 * swaps of two neighbours, case ignored) of at most a third of the longer name (at least 1), else undefined.
 */
export function nearestKey(name: string, keys: readonly string[], aliases: KeyAliases = {}): string | undefined {
  const lower = name.toLowerCase();
  const alias = Object.hasOwn(aliases, lower) ? aliases[lower] : undefined;
  if (alias !== undefined && keys.includes(alias)) return alias;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const key of keys) {
    const distance = editDistance(lower, key.toLowerCase());
    const allowed = Math.max(1, Math.floor(Math.max(name.length, key.length) / 3));
    if (distance <= allowed && distance < bestDistance) {
      best = key;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance (Levenshtein plus adjacent swaps). Names are short: a full table is cheap. */
export function editDistance(a: string, b: string): number {
  if (a.length > 64 || b.length > 64) return Math.max(a.length, b.length);
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
