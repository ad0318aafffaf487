/** Inputs and helpers shared by the Node and browser embedder tests (the browser page imports this file too). */

/** One paraphrase and one unrelated sentence for an anchor: a stronger model must score the paraphrase higher. */
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

/** Paraphrase pairs, each on its own topic. */
export const PARAPHRASES: [string, string][] = [
  [SIMILARITY.anchor, SIMILARITY.paraphrase],
  ['She is cooking pasta for dinner', 'He makes spaghetti for the evening meal'],
  ['It will rain heavily tomorrow', 'Expect a storm with lots of rain tomorrow'],
  ['The children are playing football in the park', 'Kids kick a soccer ball around on the grass'],
  ['My laptop battery died during the meeting', 'The notebook computer ran out of charge in the conference'],
  [SIMILARITY.unrelated, 'Sales for the quarter rose by eight percent'],
  ['We booked a flight to Paris for our holiday', 'Our vacation plans include flying to France'],
  ['The doctor prescribed antibiotics for the infection', 'A physician gave her medicine to treat the illness'],
];

/** The texts (PARAPHRASES flattened, so text i pairs with text i ^ 1) whose most similar other text is not their paraphrase. */
export function notNearestToParaphrase(texts: string[], vectors: ArrayLike<number>[]): string[] {
  return texts.filter((_, i) => {
    let nearest = -1;
    let best = -Infinity;
    vectors.forEach((vector, j) => {
      const similarity = j === i ? -Infinity : cosine(vectors[i]!, vector);
      if (similarity > best) [nearest, best] = [j, similarity];
    });
    return nearest !== (i ^ 1);
  });
}
