import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/index.js';
import { memoizeByText } from '../../../src/util/memo.js';
import { calibratedCosine, dot, meanPairwiseCosine, normalize } from '../../../src/vector/similarity.js';
import { VectorIndex } from '../../../src/vector/vector-index.js';
import type { Embedder } from '../../../src/types.js';

function naiveMeanPairwise(vectors: Float32Array[]): number {
  let sum = 0;
  let pairs = 0;
  for (let i = 0; i < vectors.length; i++) {
    for (let j = 0; j < vectors.length; j++) {
      if (i === j) continue;
      sum += dot(vectors[i]!, vectors[j]!);
      pairs++;
    }
  }
  return pairs ? sum / pairs : 0;
}

const unitVector = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 4, maxLength: 4 })
  .filter((v) => v.some((x) => Math.abs(x) > 1e-3))
  .map((v) => normalize(v));

describe('calibrated similarity', () => {
  it('maps the baseline to 0, keeps 1 at 1, and is raw cosine without a positive baseline', () => {
    expect(calibratedCosine(0.9, 0.9)).toBe(0);
    expect(calibratedCosine(1, 0.9)).toBe(1);
    expect(calibratedCosine(0.95, 0.9)).toBeCloseTo(0.5, 12);
    expect(calibratedCosine(0.85, 0.9)).toBeCloseTo(-0.5, 12);
    expect(calibratedCosine(0.2, 0.9)).toBe(-1);
    expect(calibratedCosine(0.7, 0)).toBe(0.7);
    expect(calibratedCosine(0.7, -0.2)).toBe(0.7);
    expect(calibratedCosine(0.99, 1)).toBe(0);
  });

  it('meanPairwiseCosine from the row sum equals the naive mean over distinct pairs (property)', () => {
    fc.assert(
      fc.property(fc.array(unitVector, { maxLength: 12 }), (vectors) => {
        const sum = new Float64Array(4);
        for (const v of vectors) v.forEach((x, i) => (sum[i]! += x));
        expect(meanPairwiseCosine(sum, vectors.length)).toBeCloseTo(naiveMeanPairwise(vectors), 4);
      }),
    );
  });

  it('VectorIndex keeps its row sum through inserts, overwrites, removals and clear (property)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), id: fc.constantFrom('a', 'b', 'c', 'd', 'e'), vector: unitVector }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.constantFrom('a', 'b', 'c', 'd', 'e') }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
        const index = new VectorIndex(4, undefined, 1);
        const model = new Map<string, Float32Array>();
        for (const o of ops) {
          if (o.kind === 'set') {
            index.set(o.id, o.vector);
            model.set(o.id, o.vector);
          } else if (o.kind === 'remove') {
            index.remove(o.id);
            model.delete(o.id);
          } else {
            index.clear();
            model.clear();
          }
        }
        expect(index.meanPairwiseCosine()).toBeCloseTo(naiveMeanPairwise([...model.values()]), 4);
      }),
    );
  });
});

/** An embedder whose sentences all share one strong common direction, like averaged word vectors. */
function anisotropicEmbedder(): Embedder {
  return {
    id: 'anisotropic-test',
    dim: 8,
    async embed(texts) {
      return texts.map((text) => {
        const v = new Float32Array(8).fill(0);
        v[0] = 14; // the common component every text shares
        for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
          let h = 0;
          for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
          v[1 + (h % 7)] = (v[1 + (h % 7)] as number) + 1;
        }
        return normalize(v);
      });
    },
  };
}

describe('supersede with calibrated similarity', () => {
  const chat = [
    'we went hiking in the hills on sunday',
    'my sister adopted a puppy last week',
    'the new job starts in march',
    'I painted a sunrise over the lake',
    'thanks, that sounds lovely',
    'we should cook pasta together soon',
  ];

  it('does not let a shared common direction supersede distinct memories, but still supersedes a restatement', async () => {
    // supersede: 'similar', the cosine folding calibration matters for.
    const raw = await createEngine({ embedder: anisotropicEmbedder(), supersede: 'similar', calibrateSimilarity: false });
    await raw.add(chat.map((text, i) => ({ id: `m${i}`, text, createdAt: Date.UTC(2024, 0, 1) + i })));
    const rawSuperseded = (await raw.export()).filter((r) => r.supersededBy !== undefined).length;
    expect(rawSuperseded).toBeGreaterThan(2); // the failure calibration exists for

    const calibrated = await createEngine({ embedder: anisotropicEmbedder(), supersede: 'similar' });
    await calibrated.add(chat.map((text, i) => ({ id: `m${i}`, text, createdAt: Date.UTC(2024, 0, 1) + i })));
    expect((await calibrated.export()).filter((r) => r.supersededBy !== undefined)).toEqual([]);
    await calibrated.add({ id: 'again', text: 'I painted a sunrise over the lake', createdAt: Date.UTC(2024, 0, 1) + 99 });
    expect((await calibrated.get('m3'))!.supersededBy).toBe('again');
  });
});

describe('memoizeByText', () => {
  it('calls the function once per distinct text and starts over when full', () => {
    const seen: string[] = [];
    const count = memoizeByText((text) => {
      seen.push(text);
      return text.length;
    }, 2);
    expect([count('ab'), count('ab'), count('abc'), count('ab')]).toEqual([2, 2, 3, 2]);
    expect(seen).toEqual(['ab', 'abc']);
    count('abcd'); // full: starts over
    count('ab');
    expect(seen).toEqual(['ab', 'abc', 'abcd', 'ab']);
  });

  it('with a cost, bounds what its entries weigh, and never keeps one heavier than the whole budget', () => {
    const seen: string[] = [];
    const length = memoizeByText((text) => {
      seen.push(text);
      return text.length;
    }, 5, (text) => text.length);
    length('ab');
    length('abc'); // 5 of 5
    length('ab');
    expect(seen).toEqual(['ab', 'abc']);
    length('x'); // 6 > 5: starts over, then holds 'x'
    length('x');
    length('ab');
    expect(seen).toEqual(['ab', 'abc', 'x', 'ab']);
    length('abcdef'); // heavier than the budget: computed each time, never kept, nothing dropped for it
    length('abcdef');
    length('x');
    expect(seen).toEqual(['ab', 'abc', 'x', 'ab', 'abcdef', 'abcdef']);
  });
});
