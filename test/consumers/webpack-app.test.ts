/** examples/webpack-app: the README's quick start in a plain-JavaScript webpack 5 app, as a production build. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { builtExample, consumerBrowser, installedOrtCopies, installExample, serveStatic } from './harness.js';

const browser = consumerBrowser();
let app: string;

beforeAll(async () => {
  app = await installExample('webpack-app');
});

/** webpack names assets by content hash, so an emitted file is told by its bytes: the source files it equals. */
function sameBytes(emitted: string, sources: string[]): boolean {
  const size = statSync(emitted).size;
  const candidates = sources.filter((source) => statSync(source).size === size);
  if (candidates.length === 0) return false;
  const bytes = readFileSync(emitted);
  return candidates.some((source) => readFileSync(source).equals(bytes));
}

describe('webpack 5 app from the packed tarball', () => {
  test('installs one ONNX Runtime (the version transformers.js pins)', async () => {
    expect(await installedOrtCopies(app)).toEqual(['node_modules/onnxruntime-web/package.json']);
  });

  test('production build (webpack): one ONNX Runtime; add, hybrid search, reload, still there', async () => {
    // `npm run build`, run once for every test file that needs it (harness.ts).
    await builtExample('webpack-app');
    const dist = join(app, 'dist');
    const emitted = readdirSync(dist);

    // One copy of ONNX Runtime's JS in the bundle: its version string is in exactly one emitted .js file.
    const ortPackage = join(app, 'node_modules/onnxruntime-web');
    const version = JSON.parse(readFileSync(join(ortPackage, 'package.json'), 'utf8')).version as string;
    const holdsOrt = (file: string) => /\.m?js$/.test(file) && readFileSync(join(dist, file), 'utf8').includes(version);
    const ortChunks = emitted.filter((file) => file.endsWith('.js') && holdsOrt(file));
    expect(ortChunks).toHaveLength(1);

    // One of ONNX Runtime's ort-wasm*.wasm builds, byte for byte.
    const ortWasmSources = readdirSync(join(ortPackage, 'dist'))
      .filter((file) => /^ort-wasm.*\.wasm$/.test(file))
      .map((file) => join(ortPackage, 'dist', file));
    const ortWasm = emitted.filter((file) => file.endsWith('.wasm') && sameBytes(join(dist, file), ortWasmSources));
    expect(ortWasm).toHaveLength(1);

    const server = await serveStatic(dist);
    let requested: Set<string>;
    try {
      requested = await browser.driveNotes(server.url);
    } finally {
      await server.close();
    }
    // The hybrid search ran on that WASM, and the page loaded ONNX Runtime's JS once: webpack also emits ORT's
    // bundle as a raw .mjs asset (its pthread-worker script), which a page that is not cross-origin isolated never
    // fetches.
    expect([...requested].filter((file) => ortWasm.includes(file))).toEqual(ortWasm);
    expect([...requested].filter((file) => emitted.includes(file) && holdsOrt(file))).toEqual(ortChunks);
  });
});
