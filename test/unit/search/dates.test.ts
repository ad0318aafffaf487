import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_SLACK_MS, queryDates, writtenWithin } from '../../../src/search/dates.js';
import { createEngine, functionModel } from '../../../src/index.js';
import { understand } from '../../../src/search/understand.js';
import { runs } from '../helpers/tier.js';

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

describe('queryDates: the calendar dates a query names', () => {
  it('reads days, months and years in the usual English orders', () => {
    expect(queryDates('What painting did Melanie show Caroline on October 13, 2023?')).toEqual([{ text: 'october 13, 2023', month: 9, day: 13, year: 2023 }]);
    expect(queryDates('What did Gina find on 1 February, 2023?')).toEqual([{ text: '1 february, 2023', month: 1, day: 1, year: 2023 }]);
    expect(queryDates('the 3rd of march')).toEqual([{ text: '3rd of march', month: 2, day: 3 }]);
    expect(queryDates('When did Melanie go camping in June?')).toEqual([{ text: 'june', month: 5 }]);
    expect(queryDates('a setback in Oct. 2023')).toEqual([{ text: 'oct. 2023', month: 9, year: 2023 }]);
    expect(queryDates('How many times did I swim in 2023?')).toEqual([{ text: '2023', year: 2023 }]);
    expect(queryDates('between August 11 and August 15 2023')).toEqual([
      { text: 'august 11', month: 7, day: 11 },
      { text: 'august 15 2023', month: 7, day: 15, year: 2023 },
    ]);
  });

  it('takes a month alone for a date only after a word such as "in", never for a name', () => {
    expect(queryDates('What did April recommend?')).toEqual([]);
    expect(queryDates('june said what about the trip')).toEqual([]);
    expect(queryDates('plans for early August and mid-september')).toEqual([
      { text: 'august', month: 7 },
      { text: 'september', month: 8 },
    ]);
    expect(queryDates('What did April say in April?')).toEqual([{ text: 'april', month: 3 }]);
  });

  it('takes "may", "jan" and "mar" for months only with a day or a year', () => {
    expect(queryDates('What may Jan recommend?')).toEqual([]);
    expect(queryDates('Did the rain mar the picnic?')).toEqual([]);
    expect(queryDates('Who came to dinner on May 3, 2023?')).toEqual([{ text: 'may 3, 2023', month: 4, day: 3, year: 2023 }]);
    expect(queryDates('in may 2023')).toEqual([{ text: 'may 2023', month: 4, year: 2023 }]);
  });

  it('finds nothing in a query without a date, and no year in other numbers', () => {
    expect(queryDates('database migration plan')).toEqual([]);
    expect(queryDates('error 12023 on port 2023x')).toEqual([]);
    expect(queryDates('')).toEqual([]);
  });
});

describe('writtenWithin: a memory written on a named date', () => {
  const at = (y: number, m: number, d: number) => Date.UTC(y, m, d, 12);

  it('a day matches the week either side, a month the month, a year the year; no year means any year', () => {
    expect(writtenWithin(at(2023, 9, 20), [{ text: 'october 13', month: 9, day: 13 }])).toBe(true);
    expect(writtenWithin(at(2023, 9, 21), [{ text: 'october 13', month: 9, day: 13 }])).toBe(false);
    expect(writtenWithin(at(2023, 9, 6), [{ text: 'october 13', month: 9, day: 13 }])).toBe(true);
    expect(writtenWithin(at(2023, 9, 5), [{ text: 'october 13', month: 9, day: 13 }])).toBe(false);
    expect(writtenWithin(at(2024, 0, 2), [{ text: 'december 30, 2023', month: 11, day: 30, year: 2023 }])).toBe(true);
    expect(writtenWithin(at(2022, 5, 30), [{ text: 'june', month: 5 }])).toBe(true);
    expect(writtenWithin(at(2022, 6, 1), [{ text: 'june', month: 5 }])).toBe(false);
    expect(writtenWithin(at(2022, 5, 30), [{ text: 'june 2023', month: 5, year: 2023 }])).toBe(false);
    expect(writtenWithin(at(2023, 0, 1), [{ text: '2023', year: 2023 }])).toBe(true);
    expect(writtenWithin(Number.NaN, [{ text: '2023', year: 2023 }])).toBe(false);
  });

  it('agrees with a naive reference on any date and mention', () => {
    const mention = fc.record({
      year: fc.option(fc.integer({ min: 2019, max: 2025 }), { nil: undefined }),
      month: fc.option(fc.integer({ min: 0, max: 11 }), { nil: undefined }),
      day: fc.option(fc.integer({ min: 1, max: 28 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2019, 0, 1), max: Date.UTC(2025, 11, 31) }), mention, (t, raw) => {
        const m = { text: 'x', ...raw };
        if (m.month === undefined) delete m.day;
        if (m.month === undefined && m.year === undefined) return;
        // Naive: walk every calendar day the mention covers and ask whether t is within (slack of) it.
        const d = new Date(t);
        let expected = false;
        if (m.month !== undefined && m.day !== undefined) {
          for (let y = 2017; y <= 2027; y++) {
            if (m.year !== undefined && y !== m.year) continue;
            const noon = Date.UTC(y, m.month, m.day, 12);
            if (Math.abs(t - noon) <= DAY_SLACK_MS + 12 * 3_600_000 && t !== noon + DAY_SLACK_MS + 12 * 3_600_000) expected = true;
          }
        } else if (m.month !== undefined) expected = d.getUTCMonth() === m.month && (m.year === undefined || d.getUTCFullYear() === m.year);
        else expected = d.getUTCFullYear() === m.year;
        expect(writtenWithin(t, [m])).toBe(expected);
      }),
      { numRuns: runs(500) },
    );
  });

  it('reads back every date it is given in words', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 11 }), fc.integer({ min: 1, max: 28 }), fc.integer({ min: 1990, max: 2099 }), (month, day, year) => {
        const name = MONTHS[month]!;
        expect(queryDates(`what happened on ${name} ${day}, ${year}?`)).toEqual([{ text: `${name} ${day}, ${year}`, month, day, year }]);
        expect(queryDates(`what happened on ${day} ${name} ${year}?`)).toEqual([{ text: `${day} ${name} ${year}`, month, day, year }]);
      }),
      { numRuns: runs(200) },
    );
  });
});

describe('dateBoost through a search', () => {
  const NOW = Date.UTC(2024, 0, 10);
  const memories = [
    { id: 'june', text: 'We went camping by the lake with the whole family and the dog', createdAt: Date.UTC(2023, 5, 20) },
    { id: 'july', text: 'We went camping', createdAt: Date.UTC(2023, 6, 20) },
    { id: 'oct', text: 'The bakery opens at seven', createdAt: Date.UTC(2023, 9, 13) },
  ];

  it('ranks what was written on the named date first, and says why in the hit and the trace', async () => {
    const engine = await createEngine({ clock: () => NOW, embedder: null });
    await engine.add(memories);
    const plain = await engine.search('When did we go camping?', { touch: false });
    expect(plain.hits[0]!.id).toBe('july');
    expect(plain.trace.understanding.dates).toBeUndefined();
    const dated = await engine.search('When did we go camping in June?', { touch: false });
    expect(dated.hits.map((h) => h.id)).toEqual(['june', 'july']);
    expect(dated.hits[0]!.explain.dated).toBe(true);
    expect(dated.hits[0]!.explain.boost).toBe(4);
    expect(dated.hits[1]!.explain.dated).toBeUndefined();
    expect(dated.trace.understanding.dates).toEqual([{ text: 'june', month: 5 }]);
    expect(dated.trace.stages.find((s) => s.name === 'adjust')!.note).toBe('1 written on "june" (×4)');
    const off = await engine.search('When did we go camping in June?', { touch: false, dateBoost: 1 });
    expect(off.hits[0]!.id).toBe('july');
    expect(off.hits[0]!.explain.dated).toBeUndefined();
    await engine.close();
  });

  it('refuses a negative factor with a coded error', async () => {
    const engine = await createEngine({ clock: () => NOW, embedder: null });
    await expect(engine.search('x in June', { dateBoost: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await engine.close();
  });
});

describe('the understand stage reads dates by rules, whoever classifies', () => {
  it('keeps the dates when a model classifies the query', async () => {
    const llm = functionModel(async () => '{"type":"factual","complexity":"simple"}');
    const { understanding } = await understand('What did Maria donate in December 2023?', 'llm', { llm, unavailable: '', timeoutMs: 1000 });
    expect(understanding.by).toBe('llm');
    expect(understanding.dates).toEqual([{ text: 'december 2023', month: 11, year: 2023 }]);
  });
});
