import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** Gitignored: raw results and caches. */
export const resultsDir = resolve(repoRoot, 'bench/results');
export const docsDir = resolve(repoRoot, 'docs');
