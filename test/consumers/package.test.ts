/** The tarball `npm pack` makes: only what apps need, every export present, and a small main-thread client. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { measureSizes } from '../../scripts/sizes.js';
import { engramTarball, installExample, REPO, sh } from './harness.js';

const listing = async () => (await sh('tar', ['-tzf', await engramTarball()], REPO)).trim().split('\n').map((path) => path.replace(/^package\//, ''));

describe('the packed tarball', () => {
  test('holds dist/, the README, the licence and package.json only; no TypeScript source', async () => {
    const files = await listing();
    expect(files.filter((file) => !file.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json']);
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(files).toContain('dist/models/engram/glove-100d/onnx/model_quantized.onnx');
    // The worker's only public declaration is its entry's: the others are internal and name unshipped types.
    expect(files.filter((file) => file.startsWith('dist/worker/') && file.endsWith('.d.ts'))).toEqual(['dist/worker/index.d.ts']);
  });

  test('every export of package.json names a file in it, with its types', async () => {
    const files = new Set(await listing());
    const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>> };
    for (const [entry, target] of Object.entries(manifest.exports)) {
      for (const path of typeof target === 'string' ? [target] : Object.values(target)) {
        expect(files.has(path.replace(/^\.\//, '')), `${entry} → ${path}`).toBe(true);
      }
    }
    expect(Object.keys(manifest.exports)).toEqual(['.', './advanced', './internals', './node', './langchain', './ai-sdk', './react', './worker', './package.json']);
  });

  test('the main-thread client of an app is at most 10 kB gzipped', async () => {
    const app = await installExample('vite-app');
    const sizes = await measureSizes(join(app, 'node_modules/engram/dist'));
    expect(sizes.totals.client.gzip).toBeLessThanOrEqual(10_000);
    expect(sizes.totals.model.bytes).toBeGreaterThan(1_000_000);
    expect(sizes.totals.wasm.bytes).toBeGreaterThan(1_000_000);
  });
});
