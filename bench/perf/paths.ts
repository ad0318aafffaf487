import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * Gitignored: raw results. ENGRAM_BENCH_RESULTS puts a run's results elsewhere (the smoke tests' small runs, which
 * must not replace a real run's); the data cache stays under bench/results/cache, where the bench page fetches it.
 */
export const resultsDir = process.env.ENGRAM_BENCH_RESULTS ? resolve(process.env.ENGRAM_BENCH_RESULTS) : resolve(repoRoot, 'bench/results');
export const cacheDir = resolve(repoRoot, 'bench/results/cache');
export const docsDir = resolve(repoRoot, 'docs');

/** True in the module run as the process's script (a section), false where a test imports it. */
export function isEntry(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && pathToFileURL(resolve(process.argv[1])).href === moduleUrl;
}
