import { describe, expect, it } from 'vitest';
import { wordList } from './word-list.js';
import { parseArgs, MILLION } from '../../../bench/perf/args.js';
import { PARAGRAPH_TERMS, World, WORST_CASE_QUERY_COUNT, type BenchQuery } from '../../../bench/perf/data.js';
import { timeQueries, type LatencyRow, type SectionResult } from '../../../bench/perf/measure.js';
import { ENGINE_TERM_RULES } from '../../../bench/perf/node-data.js';
import { targetRows, type BenchResults } from '../../../bench/perf/report.js';


const words = wordList();
const sets = (seed: number) => new World(words, seed).worstCaseQueries(ENGINE_TERM_RULES);
const texts = (queries: BenchQuery[]) => queries.map((q) => q.text);

describe('Zipfian worst-case query set', () => {
  const queries = sets(7);

  it('is deterministic from the seed (texts and vectors)', () => {
    const again = sets(7);
    expect(texts(again)).toEqual(texts(queries));
    expect(again.map((q) => Array.from(q.vector))).toEqual(queries.map((q) => Array.from(q.vector)));
    expect(texts(sets(8))).not.toEqual(texts(queries));
  });

  it('makes one query in ten of the four most frequent indexed words, shuffled', () => {
    expect(queries).toHaveLength(WORST_CASE_QUERY_COUNT);
    const common = queries.filter((q) => q.kind === 'common-4');
    expect(common).toHaveLength(WORST_CASE_QUERY_COUNT / 10);
    // "the", "of", "to", "and", "in", "was" are stop words: the four kept are the next most frequent.
    for (const q of common) expect(q.text.split(' ').sort()).toEqual(['new', 'people', 'said', 'year']);
    expect(new Set(common.map((q) => q.text)).size).toBeGreaterThan(1);
  });

  it('pastes paragraphs of 64 distinct indexed terms', () => {
    const paragraphs = queries.filter((q) => q.kind === 'paragraph-64');
    expect(paragraphs).toHaveLength(WORST_CASE_QUERY_COUNT / 20);
    for (const q of paragraphs) {
      const terms = new Set(
        q.text.toLowerCase().split(/[^a-z]+/).filter((w) => w && !ENGINE_TERM_RULES.stopWords.has(w)).map(ENGINE_TERM_RULES.stem),
      );
      expect(terms.size).toBe(PARAGRAPH_TERMS);
    }
  });

  it('fills the rest with ordinary 2-6 word queries, each with a unit vector, all in the worst-case set', () => {
    const ordinary = queries.filter((q) => q.kind === 'zipf');
    expect(ordinary).toHaveLength(WORST_CASE_QUERY_COUNT - WORST_CASE_QUERY_COUNT / 10 - WORST_CASE_QUERY_COUNT / 20);
    for (const q of ordinary) {
      const length = q.text.split(' ').length;
      expect(length).toBeGreaterThanOrEqual(2);
      expect(length).toBeLessThanOrEqual(6);
    }
    for (const q of queries) {
      expect(q.set).toBe('worst-case');
      expect(Math.hypot(...q.vector)).toBeCloseTo(1, 5);
    }
    expect(new Set(queries.map((q) => q.name)).size).toBe(queries.length);
  });
});

describe('bench arguments', () => {
  it('leaves the million scale out by default and adds it with --million or --million-n', () => {
    expect(parseArgs([]).sections).not.toContain('million');
    expect(parseArgs([]).millionN).toBe(0);
    const million = parseArgs(['--million', '--rounds', '2']);
    expect(million.millionN).toBe(MILLION);
    expect(million.sections).toContain('million');
    expect(million.rounds).toBe(2);
    expect(parseArgs(['--million-n', '200000', '--sections', 'million']).millionN).toBe(200_000);
    expect(parseArgs(['--sections', 'node']).sections).toEqual(['node']);
  });
});

describe('issue-16 target rows', () => {
  const latency = (system: string, op: string, n: number, set: 'standard' | 'worst-case', p50: number, p99: number): LatencyRow => ({
    section: 'browser', dim: 384, n, system, op, set, p50, p95: p99, p99, mean: p50, max: p99, samples: 10, worstCaseP50: p50, slowest: { query: 'q', p50 },
  });
  const section = (rows: LatencyRow[], figures: SectionResult['figures'] = [], env: Record<string, unknown> = {}): SectionResult => ({ latency: rows, figures, stages: [], notes: [], env });
  const results = (browser: SectionResult | null, million: SectionResult | null = null): BenchResults => ({
    meta: {
      date: '2026-01-01T00:00:00Z', command: 'npm run bench', sizes: [10_000, 100_000], dims: [384], rounds: 1, budgetMs: 1, node: 'v20', cpus: 2, cpu: 'x', chromium: '156', failures: [],
      loads: [{ section: 'browser', start: 1.25, end: 2.5, minutes: 3 }],
    },
    node: null,
    browser,
    million,
    extra: [],
  });
  const W = 'Engram worker (OPFS)';

  it('judges 100k and 10k on the worst-case set, with the load average of the section', () => {
    const rows = targetRows(results(section([
      latency(W, 'hybrid', 100_000, 'worst-case', 3.5, 13),
      latency(W, 'hybrid', 100_000, 'standard', 9, 9),
      latency(W, 'lexical leg', 100_000, 'worst-case', 1, 2.5),
      latency('Orama hybrid', 'hybrid', 100_000, 'worst-case', 70, 900),
      latency(W, 'hybrid', 10_000, 'worst-case', 1.2, 3),
    ], [{ section: 'browser', dim: 384, n: 100_000, system: W, metric: 'cold open to first answer ms', value: 950, unit: 'ms' }])));
    const by = (prefix: string) => rows.find((r) => r.target.startsWith(prefix))!;
    expect(by('100k: hybrid p50')).toMatchObject({ measured: '3.50 ms', holds: true, load: '1.3 → 2.5' });
    expect(by('100k: hybrid p99').holds).toBe(false);
    expect(by('100k: lexical leg p99').holds).toBe(true);
    expect(by('100k: ≥ 10×').measured).toMatch(/^20\.0×/);
    expect(by('100k: ≥ 10×').holds).toBe(true);
    expect(by('10k: hybrid p50').holds).toBe(false);
    expect(by('100k: cold open').holds).toBe(true);
  });

  it('says why a figure is missing instead of dropping the row', () => {
    const rows = targetRows(results(section([latency(W, 'hybrid', 100_000, 'standard', 3, 5)])));
    expect(rows.find((r) => r.target.startsWith('100k: hybrid p50'))).toMatchObject({ holds: null, measured: expect.stringMatching(/^not measured: no worst-case set figure/) });
    const million = rows.filter((r) => r.target.startsWith('1M'));
    expect(million).toHaveLength(6);
    for (const row of million) expect(row.measured).toMatch(/^not measured: the million section did not run/);
    expect(targetRows(results(null)).find((r) => r.target.startsWith('10k'))?.measured).toMatch(/browser section did not run/);
  });

  it('reads the million section: memory, latency, recall, cold open and ingest rate', () => {
    const n = 200_000;
    const figures = [
      ['total worker memory MB (peak)', 1200],
      ['vector recall@10', 0.99],
      ['vector recall@10 (worst-case set)', 0.97],
      ['cold open to first answer ms', 4000],
      ['ingest memories/s', 3000],
    ].map(([metric, value]) => ({ section: 'browser' as const, dim: 384, n, system: W, metric: metric as string, value: value as number, unit: '' }));
    const rows = targetRows(results(null, section([latency(W, 'hybrid', n, 'worst-case', 20, 80)], figures, { n })));
    const by = (prefix: string) => rows.find((r) => r.target.startsWith(prefix))!;
    expect(by('1M: total worker memory')).toMatchObject({ holds: true, measured: '1200 MB' });
    expect(by('1M: total worker memory').target).toContain('run at 200k, not 1M');
    expect(by('1M: hybrid p50').holds).toBe(true);
    expect(by('1M: hybrid p99').holds).toBe(false);
    expect(by('1M: vector recall@10')).toMatchObject({ holds: false, measured: '0.970 (lowest of 2 query sets)' });
    expect(by('1M: cold open').holds).toBe(true);
    expect(by('1M: ingest rate')).toMatchObject({ holds: null, measured: '3,000 memories/s' });
  });
});

describe('timing loop', () => {
  const queries = [0, 1, 2].map((i): BenchQuery => ({ name: `q${i}`, kind: 'zipf', text: `q${i}`, vector: new Float32Array(1) }));
  const busy = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };

  it('times whole rounds after a warm-up pass', async () => {
    let calls = 0;
    const { latency, answers } = await timeQueries(queries, (q) => (calls++, q.name), { rounds: 3, budgetMs: 10_000 });
    expect(calls).toBe(12);
    expect(latency.samples).toBe(9);
    expect(answers.get(queries[1]!)).toBe('q1');
  });

  it('keeps the warm-up pass as the measurement when that pass alone outlasts the budget', async () => {
    let calls = 0;
    const { latency } = await timeQueries(queries, () => (calls++, busy(2)), { rounds: 5, budgetMs: 1 });
    expect(calls).toBe(3);
    expect(latency.samples).toBe(3);
    expect(latency.p50).toBeGreaterThanOrEqual(2);
  });
});
