/** Inputs and helpers shared by the Node and browser embedder tests (the browser page imports this file too). */

/** The expected ordering: the paraphrase scores ≈ 0.74, the unrelated sentence ≈ 0.16. */
export const SIMILARITY = {
  anchor: 'The cat sits on the mat',
  paraphrase: 'A kitten is resting on a rug',
  unrelated: 'Quarterly revenue grew 8 percent',
} as const;

/** Mixed lengths, punctuation, accents, digits, an empty string and a text with no known word. */
export const SAMPLE_TEXTS = [
  'The cat sits on the mat',
  'A kitten is resting on a rug',
  'Quarterly revenue grew 8 percent',
  'Remember: the user prefers dark mode in every editor, even at noon.',
  'Café au lait in Lisbon with Alice, then a long walk along the river to the old tram depot.',
  'Fix the flaky login test before the release branch is cut on Friday.',
  'x',
  '',
  'zzqx qqvw',
  'Melanie went camping with her kids and they roasted marshmallows by the campfire while it rained.',
  'PostgreSQL 16 vs SQLite 3.53: which one for an offline-first browser extension?',
  'I am grateful for the support group; it gave me courage.',
];

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number);
  return dot;
}

export function maxAbsDiff(a: ArrayLike<number>[], b: ArrayLike<number>[]): number {
  let max = 0;
  a.forEach((vector, i) => {
    for (let k = 0; k < vector.length; k++) max = Math.max(max, Math.abs((vector[k] as number) - ((b[i] as ArrayLike<number>)[k] as number)));
  });
  return max;
}

export function norm(vector: ArrayLike<number>): number {
  return Math.sqrt(cosine(vector, vector));
}
