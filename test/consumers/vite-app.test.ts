/** examples/vite-app: the README's quick start in a Vite + TypeScript app, on the dev server and a production build. */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { builtExample, consumerBrowser, installedOrtCopies, installExample, sh, startServer } from './harness.js';

const browser = consumerBrowser();
let app: string;

beforeAll(async () => {
  app = await installExample('vite-app');
});

describe('Vite + TypeScript app from the packed tarball', () => {
  test('installs one ONNX Runtime (the version transformers.js pins)', async () => {
    expect(await installedOrtCopies(app)).toEqual(['node_modules/onnxruntime-web/package.json']);
  });

  test('dev server: add, hybrid search, reload, still there', async () => {
    const server = await startServer('npx', ['vite', '--port', '0', '--strictPort', 'false', '--host', '127.0.0.1'], app);
    try {
      await browser.driveNotes(server.url);
    } finally {
      await server.stop();
    }
  });

  test('production build (tsc under strict flags, vite build): add, hybrid search, reload, still there', async () => {
    // `npm run build`, run once for every test file that needs it (harness.ts).
    await builtExample('vite-app');
    const assets = join(app, 'dist/assets');
    // One copy of ONNX Runtime's JS in the bundle: its version string is in exactly one emitted file.
    const version = JSON.parse(readFileSync(join(app, 'node_modules/onnxruntime-web/package.json'), 'utf8')).version as string;
    const withOrt = readdirSync(assets).filter((file) => file.endsWith('.js') && readFileSync(join(assets, file), 'utf8').includes(version));
    expect(withOrt).toHaveLength(1);
    expect(readdirSync(assets).filter((file) => file.startsWith('ort-wasm'))).toHaveLength(1);
    // Sync's code (the S3 client signs with AWS4-HMAC-SHA256) is a chunk of its own, fetched only by an engine with
    // `sync` (src/sync/sync-parts.ts): the worker's first download holds none of it.
    const withS3 = readdirSync(assets).filter((file) => file.endsWith('.js') && readFileSync(join(assets, file), 'utf8').includes('AWS4-HMAC-SHA256'));
    expect(withS3).toHaveLength(1);
    expect(withS3[0]).toMatch(/^sync-parts-/);

    const server = await startServer('npx', ['vite', 'preview', '--port', '0', '--host', '127.0.0.1'], app);
    try {
      await browser.driveNotes(server.url);
    } finally {
      await server.stop();
    }
  });

  test("an app's own worker file that only imports engram/worker (createMemory({ worker })) is kept whole", async () => {
    // The shared build reads src/: it must be done before src/ changes (whether it passed is the test above's).
    await builtExample('vite-app').catch(() => undefined);
    // The installed copy, changed as an app would: its own worker entry, passed to createMemory. Built as the build
    // script does, into its own folder, and changed back at once: other files use the shared dist/ and src/.
    const main = readFileSync(join(app, 'src/main.ts'), 'utf8');
    try {
      writeFileSync(join(app, 'src/own-worker.ts'), "import 'engram/worker';\n");
      const spawn = "createMemory({ name: 'notes', worker: new Worker(new URL('./own-worker.ts', import.meta.url), { type: 'module' }) })";
      writeFileSync(join(app, 'src/main.ts'), main.replace("createMemory({ name: 'notes' })", spawn));
      expect(readFileSync(join(app, 'src/main.ts'), 'utf8')).toContain('own-worker.ts');
      await sh('npx', ['tsc', '--noEmit'], app);
      await sh('npx', ['vite', 'build', '--outDir', 'dist-own-worker'], app);
    } finally {
      writeFileSync(join(app, 'src/main.ts'), main);
      rmSync(join(app, 'src/own-worker.ts'), { force: true });
    }
    const server = await startServer('npx', ['vite', 'preview', '--outDir', 'dist-own-worker', '--port', '0', '--host', '127.0.0.1'], app);
    try {
      await browser.driveNotes(server.url);
    } finally {
      await server.stop();
    }
  });
});
