import { describe, expect, it } from 'vitest';
import { gradedNdcgAt, judgedRecallAt, luceneBm25, parseQrels } from '../../../bench/lib/beir.js';

describe('BEIR qrels', () => {
  it('skips the header, strips CRLF and keeps graded rows per query', () => {
    const qrels = parseQrels('query-id\tcorpus-id\tscore\r\nQ1\tD1\t2\r\nQ1\tD2\t1\r\nQ2\tD3\t1\r\n');
    expect([...qrels.keys()]).toEqual(['Q1', 'Q2']);
    expect([...qrels.get('Q1')!]).toEqual([['D1', 2], ['D2', 1]]);
  });
});

describe('graded nDCG@10 (trec_eval ndcg_cut.10)', () => {
  const judged = new Map([['a', 2], ['b', 1], ['c', 1]]);

  it('matches a hand-computed example', () => {
    // Ranked x a c y b: DCG = 2/log2(3) + 1/log2(4) + 1/log2(6) = 1.261860 + 0.5 + 0.386853 = 2.148713.
    // Ideal 2 1 1: 2/log2(2) + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5 = 3.130930. nDCG = 0.686286.
    expect(gradedNdcgAt(['x', 'a', 'c', 'y', 'b'], judged)).toBeCloseTo(0.686286, 5);
    expect(gradedNdcgAt(['a', 'b', 'c'], judged)).toBeCloseTo(1, 10);
    expect(gradedNdcgAt([], judged)).toBe(0);
  });

  it('counts neither hits nor ideal past rank 10', () => {
    const many = new Map(Array.from({ length: 12 }, (_, i) => [`d${i}`, 1] as [string, number]));
    const ranked = Array.from({ length: 12 }, (_, i) => `d${i}`);
    expect(gradedNdcgAt(ranked, many)).toBeCloseTo(1, 10);
    // Only d10 and d11 are judged and they sit at ranks 11-12: nothing in the cut.
    expect(gradedNdcgAt(['x0', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7', 'x8', 'x9', 'd10', 'd11'], many)).toBe(0);
  });

  it('recall is the share of judged documents found in the cut', () => {
    expect(judgedRecallAt(['x', 'a', 'c'], judged, 100)).toBeCloseTo(2 / 3, 10);
    expect(judgedRecallAt(['x', 'a', 'c'], judged, 1)).toBe(0);
  });
});

describe('Lucene BM25 check ranker', () => {
  it('ranks by idf-weighted term matches, stop words dropped', () => {
    const ask = luceneBm25([
      { id: 'one', text: 'The statin drugs and breast cancer' },
      { id: 'two', text: 'Breast milk and the infant' },
      { id: 'three', text: 'Cooking with garlic' },
    ]);
    expect(ask('Do statin drugs cause breast cancer?', 10)).toEqual(['one', 'two']);
    expect(ask('the and', 10)).toEqual([]);
  });
});
