import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assemble, blockTokenCounter, estimateTokens, formatBlock, SEPARATOR, type AssembleItem } from '../../../src/search/assemble.js';
import { runs } from '../helpers/tier.js';

const item = (id: string, text: string, createdAt = Date.UTC(2024, 4, 1)): AssembleItem => ({ id, text, createdAt });

/** Naive reference: try every item in order, keep it if the running total plus its cost fits. */
function naive(items: AssembleItem[], budget: number, count: (t: string) => number) {
  const kept: AssembleItem[] = [];
  let used = 0;
  for (const it of items) {
    const cost = count(formatBlock(it)) + (kept.length > 0 ? count(SEPARATOR) : 0);
    if (used + cost <= budget) {
      kept.push(it);
      used += cost;
    }
  }
  return { ids: kept.map((k) => k.id), tokens: used, text: kept.map(formatBlock).join(SEPARATOR) };
}

describe('assemble: greedy token-budgeted context', () => {
  it('formats one block per memory with its date, joined by blank lines', () => {
    const ctx = assemble([item('a', 'first'), item('b', 'second', Date.UTC(2023, 11, 31, 23, 59))], 1000);
    expect(ctx.text).toBe('[2024-05-01] first\n\n[2023-12-31] second');
    expect(ctx.ids).toEqual(['a', 'b']);
    expect(ctx.budget).toBe(1000);
    expect(ctx.tokens).toBe(estimateTokens('[2024-05-01] first') + estimateTokens(SEPARATOR) + estimateTokens('[2023-12-31] second'));
  });

  it('skips a memory that does not fit and keeps trying smaller ones (never breaks early)', () => {
    const words = (n: number) => Array.from({ length: n }, () => 'w').join(' ');
    const count = (t: string) => t.split(/\s+/).filter(Boolean).length; // one token per word
    // blocks cost 1 (date) + words; separator costs 0 under this counter
    const ctx = assemble([item('big', words(50)), item('mid', words(8)), item('huge', words(500)), item('small', words(1))], 12, count);
    expect(ctx.ids).toEqual(['mid', 'small']);
    expect(ctx.tokens).toBe(9 + 2);
  });

  it('uses estimateTokens = ceil(length / 4) by default', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
  });

  it('a zero budget yields an empty context', () => {
    expect(assemble([item('a', 'x')], 0)).toEqual({ text: '', tokens: 0, budget: 0, ids: [] });
  });

  it('matches the naive greedy for any items, budget and counter; never exceeds the budget', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 200 }), { maxLength: 25 }),
        fc.integer({ min: 0, max: 400 }),
        fc.constantFrom<(t: string) => number>(estimateTokens, (t) => t.split(' ').length, (t) => t.length),
        (texts, budget, count) => {
          const items = texts.map((t, i) => item(`m${i}`, t, Date.UTC(2020, 0, 1) + i * 86_400_000));
          const ctx = assemble(items, budget, count);
          expect(ctx).toEqual({ ...naive(items, budget, count), budget });
          expect(ctx.tokens).toBeLessThanOrEqual(budget);
          // greedy maximality: every skipped item would not have fit at the end either
          const skipped = items.filter((it) => !ctx.ids.includes(it.id));
          for (const s of skipped) expect(ctx.tokens + count(formatBlock(s)) + (ctx.ids.length > 0 ? count(SEPARATOR) : 0)).toBeGreaterThan(budget);
        },
      ),
      { numRuns: runs(300) },
    );
  });

  it('a stored date outside the Date range (or NaN) gives a block without a date, never a throw', () => {
    for (const createdAt of [1e16, -1e16, NaN, Infinity]) expect(formatBlock(item('x', 'undated', createdAt))).toBe('undated');
    const ctx = assemble([item('a', 'first'), item('b', 'second', 8.64e15 + 1)], 1000);
    expect(ctx.text).toBe('[2024-05-01] first\n\nsecond');
    expect(ctx.ids).toEqual(['a', 'b']);
  });

  it('years beyond 9999 keep their whole date', () => {
    expect(formatBlock(item('x', 'far', 8.64e15))).toBe('[+275760-09-13] far');
    expect(formatBlock(item('x', 'early', -8.64e15))).toBe('[-271821-04-20] early');
  });
});

describe('blockTokenCounter: block costs remembered per record', () => {
  it('counts a record once, again when its text or date changes, and assembles what countTokens alone does', () => {
    const counted: string[] = [];
    const count = (text: string) => (counted.push(text), text.split(' ').length);
    const blocks = blockTokenCounter(count);
    const a = item('a', 'alpha beta gamma');
    const b = item('b', 'delta');
    const plain = assemble([a, b], 5, count);
    counted.length = 0;
    expect(assemble([a, b], 5, count, blocks)).toEqual(plain);
    expect(assemble([a, b], 5, count, blocks)).toEqual(plain);
    // Each block counted once over two searches (the separator is counted per search).
    expect(counted.filter((t) => t !== SEPARATOR)).toEqual([formatBlock(a), formatBlock(b)]);
    a.text = 'alpha';
    a.createdAt = Number.NaN;
    expect(blocks(a)).toBe(count(formatBlock(a)));
    expect(counted.filter((t) => t !== SEPARATOR).slice(2, 3)).toEqual(['alpha']);
  });
});
