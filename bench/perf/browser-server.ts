/** The bench's Vite dev server (shared by the browser and million sections): frozen, with the bench embedder shim. */
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Plugin, ViteDevServer } from 'vite';
import { startViteServer } from '../../test/browser/vite-server.js';
import { repoRoot } from './paths.js';

/**
 * In this server only, the worker's import of the embedder module resolves to the bench input adapter, which
 * serves precomputed vectors for `{ bench }` options and hands every other option to the real createEmbedder; the
 * page's createMemory lets `{ bench }` through its option-name check (embedder-options-shim.ts).
 */
function benchEmbedderShim(): Plugin {
  const shim = resolve(repoRoot, 'bench/perf/browser/embedder-shim.ts');
  const optionsShim = resolve(repoRoot, 'bench/perf/browser/embedder-options-shim.ts');
  // Root-relative: Vite serves it like any module of the repo.
  const tracker = '/bench/perf/browser/wasm-tracker.ts';
  return {
    name: 'engram-bench-embedder-shim',
    enforce: 'pre',
    // The worker's first import: a tracker of its WebAssembly memories (read by the million section).
    transform(code, id) {
      return /[\\/]worker[\\/]index\.ts$/.test(id.split('?')[0]!) ? `import ${JSON.stringify(tracker)};\n${code}` : null;
    },
    resolveId(source, importer) {
      if (importer && /[\\/]worker[\\/]index\.ts$/.test(importer.split('?')[0]!) && /src\/embedder\/index(\.[jt]s)?$/.test(source)) return shim;
      // The page's createMemory checks embedder option names: the bench's `{ bench }` passes there.
      if (importer && /[\\/]src[\\/]client[\\/]create-memory\.ts$/.test(importer.split('?')[0]!) && /embedder\/options(\.[jt]s)?$/.test(source)) return optionsShim;
      return null;
    },
  };
}

/** A copy of the repo whose node_modules or models link to another checkout: Vite must be allowed to serve from there. */
function linkedModules(): Plugin {
  const linked = ['node_modules', 'models']
    .map((dir) => resolve(repoRoot, dir))
    .filter((dir) => existsSync(dir) && realpathSync(dir) !== dir)
    .map((dir) => realpathSync(dir));
  return { name: 'engram-bench-linked-modules', config: () => (linked.length === 0 ? {} : { server: { fs: { allow: [repoRoot, ...linked] } } }) };
}

export function startServer(): Promise<{ server: ViteDevServer; baseURL: string }> {
  // Other people edit the tree while the bench runs: no file watching, no hot reload of the page mid-run.
  return startViteServer({
    frozen: true,
    config: {
      plugins: [benchEmbedderShim(), linkedModules()],
      // Its own optimizer cache, so the test server's cache is never invalidated by this config.
      cacheDir: resolve(repoRoot, 'node_modules/.vite-bench'),
      // Pre-bundled up front: a dependency discovered mid-run would make Vite reload the page.
      optimizeDeps: { include: ['minisearch', '@orama/orama', 'comlink'] },
      logLevel: (process.env.BENCH_VITE_LOG as 'info' | undefined) ?? 'warn',
    },
  });
}

