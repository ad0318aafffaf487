/**
 * `npm run bench`'s browser section, run small in its own process (its own Vite server and Chromium, as the bench
 * runs it): it must complete with every system measured, the real worker on OPFS included, and the Engram answers
 * must match the exact scan. Times are not checked.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { SectionResult } from '../../bench/perf/measure.js';
import { repoRoot } from '../../bench/perf/paths.js';

test('the browser bench section completes at N = 300 with exact Engram answers, worker included', () => {
  const results = mkdtempSync(join(tmpdir(), 'engram-bench-results-'));
  try {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/perf/browser.ts', '--sizes=300', '--dims=384', '--rounds=1', '--budget=50'], {
      cwd: repoRoot,
      env: { ...process.env, ENGRAM_BENCH_RESULTS: results },
      encoding: 'utf8',
      timeout: 170_000,
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    const out = JSON.parse(readFileSync(join(results, 'browser.json'), 'utf8')) as SectionResult;
    expect(out.notes).toEqual([]);
    const systems = new Set(out.latency.map((r) => r.system));
    expect(systems).toEqual(new Set(['naive (full sort)', 'Engram (page, in-process)', 'Engram worker (OPFS)', 'MiniSearch', 'Orama hybrid']));
    const value = (system: string, metric: string) => out.figures.find((f) => f.system === system && f.metric === metric)?.value;
    for (const system of ['Engram (page, in-process)', 'Engram worker (OPFS)']) {
      expect(new Set(out.latency.filter((r) => r.system === system).map((r) => r.op))).toEqual(new Set(['hybrid', 'lexical leg', 'vector leg']));
      expect(value(system, 'vector recall@10')).toBe(1);
      expect(value(system, 'vector recall@10 (worst-case set)')).toBe(1);
    }
    expect(value('Engram worker (OPFS)', 'cold open to first hybrid answer ms')).toBeGreaterThan(0);
    expect(value('Engram worker (OPFS)', 'bytes on disk per memory')).toBeGreaterThan(0);
  } finally {
    rmSync(results, { recursive: true, force: true });
  }
});
