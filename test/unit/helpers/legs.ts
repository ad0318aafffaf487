/** Leg results for fusion tests. */
import type { LegResult } from '../../../src/search/fuse.js';

/** A leg's result from [id, score] pairs, best first. */
export const scored = (leg: 'lexical' | 'vector', items: [string, number][], weight = 1): LegResult => ({
  leg,
  weight,
  items: items.map(([id, score]) => ({ id, score })),
});
