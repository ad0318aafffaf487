import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TopK } from '../../../src/util/topk.js';
import { runs } from '../helpers/tier.js';

/** Every score pushed in order (index = position), then the heap drained: best k, best first. */
function heapTopK(scores: number[], k: number) {
  const heap = new TopK(k);
  scores.forEach((score, index) => heap.push(index, score));
  return heap.drain();
}

/** Naive reference: sort everything (score desc, index asc), take k. */
function naiveTopK(scores: number[], k: number) {
  return scores
    .map((score, index) => ({ index, score }))
    .filter((s) => !Number.isNaN(s.score))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, Math.max(0, k));
}

describe('TopK', () => {
  it('matches a full sort for any scores and k (ties broken by lower index)', () => {
    fc.assert(
      fc.property(
        // few distinct values so ties are common
        fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, min: -1, max: 1 })), { maxLength: 300 }),
        fc.integer({ min: 0, max: 320 }),
        (scores, k) => {
          expect(heapTopK(scores, k)).toEqual(naiveTopK(scores, k));
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('never selects NaN and handles k = 0, k > n and ±Infinity', () => {
    expect(heapTopK([NaN, 1, NaN, 2], 3)).toEqual([{ index: 3, score: 2 }, { index: 1, score: 1 }]);
    expect(heapTopK([1, 2, 3], 0)).toEqual([]);
    expect(heapTopK([-Infinity, Infinity, 0], 5)).toEqual([
      { index: 1, score: Infinity },
      { index: 2, score: 0 },
      { index: 0, score: -Infinity },
    ]);
  });

  it('exposes the admission threshold once full', () => {
    const heap = new TopK(2);
    expect(heap.threshold).toBe(-Infinity);
    heap.push(0, 5);
    heap.push(1, 3);
    expect(heap.threshold).toBe(3);
    heap.push(2, 4);
    expect(heap.threshold).toBe(4);
    expect(heap.size).toBe(2);
    expect(heap.drain()).toEqual([{ index: 0, score: 5 }, { index: 2, score: 4 }]);
    expect(heap.size).toBe(0);
  });
});
