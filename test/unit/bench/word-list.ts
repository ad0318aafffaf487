/** 30,000 plain words: a few real frequent ones (stop words among them) first, then made-up ones. */
export function wordList(): string[] {
  const words = ['the', 'of', 'to', 'and', 'said', 'in', 'new', 'was', 'people', 'year', 'time', 'world', 'first', 'state'];
  for (let i = 0; words.length < 30_000; i++) {
    let word = '';
    for (let x = i; word.length === 0 || x > 0; x = Math.floor(x / 26)) word += String.fromCharCode(97 + (x % 26));
    words.push(`q${word}`);
  }
  return words;
}
