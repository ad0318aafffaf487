import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stemEnglish } from '../../../src/lexical/stem.js';

const fixture = readFileSync(new URL('./fixtures/porter2.tsv', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line && !line.startsWith('#'))
  .map((line) => line.split('\t') as [string, string]);

describe('stemEnglish (Porter2)', () => {
  it('matches the reference Snowball English stemmer on the fixture words', () => {
    expect(fixture.length).toBeGreaterThan(600);
    const wrong = fixture.filter(([word, stem]) => stemEnglish(word) !== stem).map(([word, stem]) => `${word}: want ${stem}, got ${stemEnglish(word)}`);
    expect(wrong).toEqual([]);
  });

  it('conflates the inflections a question and a memory use', () => {
    for (const word of ['paint', 'painted', 'painting', 'paints']) expect(stemEnglish(word)).toBe('paint');
    expect(stemEnglish('adopted')).toBe(stemEnglish('adoption'));
    expect(stemEnglish('activities')).toBe(stemEnglish('activity'));
  });

  it('leaves short words, numbers, identifiers and other scripts alone', () => {
    for (const token of ['at', 'go', '2023', 'v8', 'x86_64', 'ümlaut', '東京', '']) expect(stemEnglish(token)).toBe(token);
  });

  it('is safe on words that are Object.prototype keys', () => {
    expect(stemEnglish('constructor')).toBe('constructor');
    expect(stemEnglish('tostring')).toBe('tostr');
  });
});
