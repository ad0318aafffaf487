/**
 * What a memory says, as a key: two memories say the same thing when their keys are equal (docs/api.md, "Which
 * memory is hidden"). The key is the text lowercased (NFKC), its words without punctuation, in order, less the
 * English stop words (a single letter stays: "note a", "note d"), but keeping every negation ("not", "no",
 * "never", "n't"), number and identifier: "The user is not allergic" and "The user is allergic" differ, as do
 * "gate B12" and "gate C3". Unlike the lexical leg's terms, words are not stemmed: "moved" and "moves" are
 * different statements.
 */
import { memoizeByText } from '../util/memo.js';
import { ENGLISH_STOP_WORDS } from './stopwords.js';

/** Words that turn a statement into its opposite; never dropped as stop words. */
const NEGATIONS: ReadonlySet<string> = new Set(['no', 'not', 'nor', 'never', 'none', 'nothing', 'nobody', 'nowhere', 'neither', 'without', 'cannot']);

// Split as the lexical leg splits (lexical-index.ts): on spaces and punctuation, so "C++" and "C#" stay apart.
const SEPARATORS = /[\n\r\p{Z}\p{P}\p{Cc}]+/u;

/** The words of `text` that carry its statement, lowercased, in order (numbers, identifiers and negations kept). */
export function statementWords(text: string): string[] {
  const normal = text
    .normalize('NFKC')
    .toLowerCase()
    // "isn't", "don’t", "can't": the negation as a word of its own.
    .replace(/n['’]t\b/g, ' not')
    .replace(/\bcannot\b/g, 'can not');
  const out: string[] = [];
  for (const word of normal.split(SEPARATORS)) {
    // A single letter is kept even where it is a stop word: in "note a" / "note d" it names something.
    if (word && (NEGATIONS.has(word) || word.length === 1 || !ENGLISH_STOP_WORDS.has(word))) out.push(word);
  }
  return out;
}

/** The statement key of `text`: '' when no word carries one (only stop words and negations, "not the"). */
export function statementKey(text: string): string {
  return keyOf(text);
}

// Keys and details are memoised per text, bounded by estimated bytes (2 a character): a search asks for those of
// the same long memories again and again (diversify, currency), and reading them was a large part of its time.
const MEMO_BYTES = 8 * 2 ** 20;

const keyOf = memoizeByText(
  (text: string): string => {
    const words = statementWords(text);
    return words.every((word) => NEGATIONS.has(word)) ? '' : words.join(' ');
  },
  MEMO_BYTES,
  (text, key) => 2 * (text.length + key.length),
);

/** The distinct words of a statement key (memoised, shared: callers only read it). */
export function statementKeyWords(key: string): ReadonlySet<string> {
  return keyWordsOf(key);
}

const keyWordsOf = memoizeByText((key: string): ReadonlySet<string> => new Set(key.split(' ')), MEMO_BYTES, (key, words) => 2 * key.length + 48 * words.size);


/**
 * The details that make two similar texts different memories: numbers and words with a digit ("LH1234", "4821",
 * "9:40" as "9" and "40"), negations, and capitalised words not at the start of a sentence (names: "Porto",
 * "Garnet"). Two texts whose details differ are distinct whatever their cosine. The set is memoised and shared:
 * callers only read it.
 */
export function statementDetails(text: string): Set<string> {
  return detailsOf(text);
}

const detailsOf = memoizeByText(
  (text: string): Set<string> => readDetails(text),
  MEMO_BYTES,
  (text, details) => 2 * text.length + 48 * details.size,
);

function readDetails(text: string): Set<string> {
  const details = new Set<string>();
  const normal = text.normalize('NFKC').replace(/n['’]t\b/gi, ' not');
  // The start of the text, or of a sentence: ". ", "! ", "? " before the word (read backwards, so a long text stays linear).
  const startsSentence = (at: number): boolean => {
    let i = at - 1;
    while (i >= 0 && /\s/.test(normal[i] as string)) i--;
    return i < 0 || ('.!?'.includes(normal[i] as string) && i < at - 1);
  };
  for (const match of normal.matchAll(/[^\n\r\p{Z}\p{P}\p{Cc}]+/gu)) {
    const word = match[0];
    const lower = word.toLowerCase();
    if (/\p{N}/u.test(word) || NEGATIONS.has(lower)) details.add(lower);
    else if (/^\p{Lu}/u.test(word) && !startsSentence(match.index) && !ENGLISH_STOP_WORDS.has(lower)) details.add(lower);
  }
  return details;
}

/** Whether the details (`statementDetails`) of two texts are the same set. */
export function sameDetails(a: string, b: string): boolean {
  const left = statementDetails(a);
  const right = statementDetails(b);
  if (left.size !== right.size) return false;
  for (const detail of left) if (!right.has(detail)) return false;
  return true;
}

/**
 * A 32-bit hash of a statement key, never 0 (0 means "not known" where hashes are kept): equal keys hash equal, so
 * memories whose hashes differ from every wanted key's can be skipped without reading their text.
 */
export function statementHash(key: string): number {
  let hash = 0x811c9dc5 | 0;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash === 0 ? 1 : hash;
}
