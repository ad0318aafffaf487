/**
 * English Porter2 ("Snowball English") stemmer, as defined at snowballstem.org (the 2.x algorithm).
 * Conflates inflections ("painted", "painting", "paints" → "paint") so the lexical leg matches a
 * question's wording against a memory's. Input: one lowercase token; anything that is not plain
 * a-z letters (numbers, identifiers, other scripts) is returned unchanged.
 */

// A Map, not an object literal: "constructor" is a word too.
const EXCEPTIONS: ReadonlyMap<string, string> = new Map(Object.entries({
  skis: 'ski', skies: 'sky', dying: 'die', lying: 'lie', tying: 'tie', idly: 'idl', gently: 'gentl',
  ugly: 'ugli', early: 'earli', only: 'onli', singly: 'singl',
  sky: 'sky', news: 'news', howe: 'howe', atlas: 'atlas', cosmos: 'cosmos', bias: 'bias', andes: 'andes',
}));
/** Words left as they are after step 1a. */
const INVARIANT_AFTER_1A = new Set(['inning', 'outing', 'canning', 'herring', 'earring', 'proceed', 'exceed', 'succeed']);
const REGION_PREFIXES = ['gener', 'commun', 'arsen'];
const DOUBLES = new Set(['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt']);
const VALID_LI = new Set('cdeghkmnrt');

// Longest suffix first within each step: Porter2 acts on the longest suffix that matches, and only on it.
const STEP2: [string, string][] = [
  ['ization', 'ize'], ['ational', 'ate'], ['fulness', 'ful'], ['ousness', 'ous'], ['iveness', 'ive'],
  ['tional', 'tion'], ['biliti', 'ble'], ['lessli', 'less'], ['entli', 'ent'], ['ation', 'ate'],
  ['alism', 'al'], ['aliti', 'al'], ['ousli', 'ous'], ['iviti', 'ive'], ['fulli', 'ful'],
  ['enci', 'ence'], ['anci', 'ance'], ['abli', 'able'], ['izer', 'ize'], ['ator', 'ate'],
  ['alli', 'al'], ['bli', 'ble'], ['ogi', 'og'], ['li', ''],
];
const STEP3: [string, string][] = [
  ['ational', 'ate'], ['tional', 'tion'], ['alize', 'al'], ['icate', 'ic'], ['iciti', 'ic'],
  ['ative', ''], ['ical', 'ic'], ['ness', ''], ['ful', ''],
];
const STEP4 = ['ement', 'ment', 'able', 'ible', 'ance', 'ence', 'ate', 'iti', 'ion', 'ism', 'ive', 'ize', 'ous', 'ant', 'ent', 'al', 'er', 'ic'];

const PLAIN_WORD = /^[a-z']+$/;

const isVowel = (c: string | undefined): boolean => c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u' || c === 'y';

function longestSuffix<T extends string | [string, string]>(word: string, table: readonly T[]): T | undefined {
  let best: T | undefined;
  let bestLength = -1;
  for (const entry of table) {
    const suffix = typeof entry === 'string' ? entry : entry[0];
    if (suffix.length > bestLength && word.endsWith(suffix)) {
      best = entry;
      bestLength = suffix.length;
    }
  }
  return best;
}

/** Start of the region after the first non-vowel that follows a vowel, searching from `from`. */
function regionAfter(word: string, from: number): number {
  for (let i = from + 1; i < word.length; i++) if (!isVowel(word[i]) && isVowel(word[i - 1])) return i + 1;
  return word.length;
}

/** A short syllable ending at `end` (exclusive): consonant-vowel-consonant (last not w, x or Y), or vowel-consonant at the start. */
function endsWithShortSyllable(word: string, end: number): boolean {
  const last = word[end - 1];
  const middle = word[end - 2];
  if (end === 2) return isVowel(middle) && !isVowel(last);
  return end >= 3 && !isVowel(word[end - 3]) && isVowel(middle) && !isVowel(last) && last !== 'w' && last !== 'x' && last !== 'Y';
}

export function stemEnglish(input: string): string {
  if (input.length < 3 || !PLAIN_WORD.test(input)) return input;
  const exception = EXCEPTIONS.get(input);
  if (exception) return exception;
  let word = input.startsWith("'") ? input.slice(1) : input;

  // Prelude: a y that acts as a consonant (initial, or after a vowel) becomes Y.
  let hasY = false;
  if (word[0] === 'y') {
    word = `Y${word.slice(1)}`;
    hasY = true;
  }
  for (let i = 1; i < word.length; i++) {
    if (word[i] === 'y' && isVowel(word[i - 1])) {
      word = `${word.slice(0, i)}Y${word.slice(i + 1)}`;
      hasY = true;
    }
  }

  const prefix = REGION_PREFIXES.find((p) => word.startsWith(p));
  const r1 = prefix ? prefix.length : regionAfter(word, 0);
  const r2 = regionAfter(word, r1);

  // Step 0: possessive apostrophes.
  for (const suffix of ["'s'", "'s", "'"]) {
    if (word.endsWith(suffix)) {
      word = word.slice(0, -suffix.length);
      break;
    }
  }

  // Step 1a: plurals.
  if (word.endsWith('sses')) word = word.slice(0, -2);
  else if (word.endsWith('ied') || word.endsWith('ies')) word = word.slice(0, -3) + (word.length > 4 ? 'i' : 'ie');
  else if (word.endsWith('us') || word.endsWith('ss')) {
    // unchanged
  } else if (word.endsWith('s')) {
    // Delete the s when the part before the letter preceding it holds a vowel (gaps → gap, but gas stays).
    const before = word.slice(0, -2);
    if ([...before].some(isVowel)) word = word.slice(0, -1);
  }
  if (INVARIANT_AFTER_1A.has(word)) return word;

  // Step 1b: -ed, -ing and friends.
  const step1b = longestSuffix(word, ['eedly', 'ingly', 'edly', 'eed', 'ing', 'ed']);
  if (step1b === 'eed' || step1b === 'eedly') {
    if (word.length - step1b.length >= r1) word = `${word.slice(0, -step1b.length)}ee`;
  } else if (step1b) {
    const stem = word.slice(0, -step1b.length);
    if ([...stem].some(isVowel)) {
      word = stem;
      if (word.endsWith('at') || word.endsWith('bl') || word.endsWith('iz')) word += 'e';
      else if (DOUBLES.has(word.slice(-2))) word = word.slice(0, -1);
      else if (r1 === word.length && endsWithShortSyllable(word, word.length)) word += 'e';
    }
  }

  // Step 1c: a final y after a consonant (not the first letter) becomes i.
  const lastLetter = word[word.length - 1];
  if ((lastLetter === 'y' || lastLetter === 'Y') && word.length > 2 && !isVowel(word[word.length - 2])) word = `${word.slice(0, -1)}i`;

  // Step 2: derivational suffixes in R1.
  const step2 = longestSuffix(word, STEP2);
  if (step2 && word.length - step2[0].length >= r1) {
    const stem = word.slice(0, -step2[0].length);
    if (step2[0] === 'ogi') {
      if (stem.endsWith('l')) word = `${stem}og`;
    } else if (step2[0] === 'li') {
      if (VALID_LI.has(stem[stem.length - 1] ?? '')) word = stem;
    } else word = stem + step2[1];
  }

  // Step 3.
  const step3 = longestSuffix(word, STEP3);
  if (step3 && word.length - step3[0].length >= r1) {
    if (step3[0] !== 'ative' || word.length - step3[0].length >= r2) word = word.slice(0, -step3[0].length) + step3[1];
  }

  // Step 4: suffixes deleted in R2.
  const step4 = longestSuffix(word, STEP4);
  if (step4 && word.length - step4.length >= r2) {
    const stem = word.slice(0, -step4.length);
    if (step4 !== 'ion' || stem.endsWith('s') || stem.endsWith('t')) word = stem;
  }

  // Step 5: a final e or l.
  if (word.endsWith('e')) {
    const at = word.length - 1;
    if (at >= r2 || (at >= r1 && !endsWithShortSyllable(word, at))) word = word.slice(0, -1);
  } else if (word.endsWith('ll') && word.length - 1 >= r2) word = word.slice(0, -1);

  return hasY ? word.replaceAll('Y', 'y') : word;
}
