import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };

describe('runtime dependencies Engram trusts with its data are pinned to the version it was tested with', () => {
  it.each([
    // Carries the page cipher (sqlite3mc) and the VFSs every byte of a database goes through.
    ['@journeyapps/wa-sqlite', 'the cipher and storage'],
    // minisearch-adapter.ts reads and restores its private fields (checked at start-up, but a drift means a rebuild).
    ['minisearch', 'its internals'],
    // The model runtime: transformers.js 4.3.1 names this exact onnxruntime-web build (a dev build: no release exists for it).
    ['@huggingface/transformers', 'the model runtime'],
    ['onnxruntime-web', 'the model runtime'],
  ])('%s (%s)', (name) => {
    expect(pkg.dependencies[name]).toMatch(/^\d+\.\d+\.\d+(-[\w.-]+)?$/);
  });
});
