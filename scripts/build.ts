/**
 * `npm run build`: the package as apps install it, in `dist/`.
 *
 * 1. tsc emits ES modules and `.d.ts` files for `src/` and `worker/` (dist/src, dist/worker; of the worker's
 *    declarations only its entry's is kept).
 * 2. The worker's URL in the client names the emitted `.js` file (tsc rewrites imports, not URL literals).
 * 3. The built-in model's shipped files are copied to dist/models, where model-files.ts's literals point.
 * 4. Every `new URL('literal', import.meta.url)` in dist must name a file in dist: the build fails otherwise.
 * 5. Sizes, measured on a production Vite build of a one-line app, go to the README (`--no-sizes` skips them).
 *
 * WASM is not copied: wa-sqlite and ONNX Runtime reference their own files with `new URL(…, import.meta.url)`,
 * so the app's bundler emits them from the installed dependencies.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureAdapters, measureSizes, renderAdapterSizes, renderSizes, type AdapterSize, type Sizes } from './sizes.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

/** `new URL('…', import.meta.url)` with a literal path, as every bundler recognises it. */
const URL_LITERAL = /new URL\(\s*(['"])([^'"]+)\1\s*,\s*import\.meta\.url\s*\)/g;

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? jsFiles(path) : entry.name.endsWith('.js') ? [path] : [];
  });
}

function emit(): void {
  rmSync(dist, { recursive: true, force: true });
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  for (const file of jsFiles(dist)) {
    const code = readFileSync(file, 'utf8');
    const rewritten = code.replace(URL_LITERAL, (whole, quote: string, path: string) =>
      path.endsWith('.ts') ? `new URL(${quote}${path.slice(0, -3)}.js${quote}, import.meta.url)` : whole,
    );
    if (rewritten !== code) writeFileSync(file, rewritten);
  }
  // Of the worker, only its entry is a module apps import; the other declarations are internal, and with the browser
  // store's (all but its types.ts, which the public types name) they may name wa-sqlite's ambient types
  // (src/store/browser/wa-sqlite-modules.d.ts), which are not shipped.
  for (const [dir, kept] of [[join(dist, 'worker'), 'index.d.ts'], [join(dist, 'src/store/browser'), 'types.d.ts']] as const) {
    for (const file of readdirSync(dir)) {
      if (file.endsWith('.d.ts') && file !== kept) rmSync(join(dir, file));
    }
  }
}

async function copyModel(): Promise<string[]> {
  const { BUILTIN_MODEL_FILES } = await import('../src/embedder/model-files.js');
  const copied: string[] = [];
  for (const url of Object.values(BUILTIN_MODEL_FILES)) {
    const source = fileURLToPath(url);
    const target = join(dist, relative(root, source));
    if (!existsSync(source)) throw new Error(`built-in model file missing: ${relative(root, source)} (run npm run ensure-model)`);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(source, target);
    copied.push(relative(dist, target));
  }
  return copied;
}

/** Fails the build on a URL literal that names no file of the package. */
function checkUrlLiterals(): number {
  let count = 0;
  for (const file of jsFiles(dist)) {
    for (const [, , path] of readFileSync(file, 'utf8').matchAll(URL_LITERAL)) {
      if (path!.endsWith('/')) continue;
      const target = resolve(dirname(file), path!);
      if (!target.startsWith(dist + '/') || !existsSync(target)) {
        throw new Error(`${relative(root, file)} references ${path}, which is not in dist/`);
      }
      count++;
    }
  }
  return count;
}

/** Replaces the README's sizes blocks, each between its two markers. */
function writeReadme(sizes: Sizes, adapters: AdapterSize[]): void {
  const readmePath = join(root, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const { peerDependencies = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { peerDependencies?: Record<string, string> };
  let next = readme;
  for (const [name, table] of [['sizes', renderSizes(sizes)], ['adapter-sizes', renderAdapterSizes(adapters, peerDependencies)]] as const) {
    const block = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
    if (!block.test(next)) throw new Error(`README.md has no <!-- ${name}:start --> … <!-- ${name}:end --> block`);
    next = next.replace(block, `$1${table}$2`);
  }
  if (next !== readme) writeFileSync(readmePath, next);
}

emit();
const modelFiles = await copyModel();
const urls = checkUrlLiterals();
console.log(`dist: ${jsFiles(dist).length} modules, ${modelFiles.length} model files, ${urls} asset URLs checked`);
if (!process.argv.includes('--no-sizes')) {
  const sizes = await measureSizes(dist);
  const adapters = await measureAdapters(dist);
  writeReadme(sizes, adapters);
  console.log(renderSizes(sizes));
  console.log(adapters.map((a) => `${a.entry}: ${a.gzip} B gzip`).join('\n'));
}
