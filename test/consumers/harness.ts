/**
 * Consumer tests: each example app under examples/ is copied out of the repository (so nothing resolves from the
 * repo's own node_modules), gets the tarball `npm pack` made, installs it with npm, builds with its own tool and is
 * driven in Debian Chromium. A recording proxy catches any request that leaves the machine.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_PATH, chromiumArgs } from '../browser/harness.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where global setup writes `{ tarball }` (what `npm pack` made) or `{ error }` once the pack is done. */
    engramPacked: string;
    /** A folder outside the repository for the installed examples. */
    consumersDir: string;
    /** prebuild-install's local prebuilds: the repository's own better-sqlite3 build (global-setup.ts). */
    nativePrebuilds: string;
  }
}

const run = promisify(execFile);
export const REPO = resolve(import.meta.dirname, '../..');

/** Runs a command and returns its output; on failure, the error carries both streams. */
export async function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
    return stdout + stderr;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout}\n${stderr}`);
  }
}

/** The tarball `npm pack` made in global setup, once it has (the pack runs while other projects' files run). */
export async function engramTarball(): Promise<string> {
  const packed = inject('engramPacked');
  while (!existsSync(packed)) await new Promise((resolve) => setTimeout(resolve, 200));
  const { tarball, error } = JSON.parse(readFileSync(packed, 'utf8')) as { tarball?: string; error?: string };
  if (!tarball) throw new Error(`npm pack failed in global setup: ${error}`);
  return tarball;
}

/** Written whole (a rename), so a reader never sees half of it. */
export function writeWhole(path: string, content: string): void {
  writeFileSync(`${path}.part`, content);
  renameSync(`${path}.part`, path);
}

/** Where an example's install says it is done: `{}`, or `{ error }`. */
export const installedMarker = (dir: string) => `${dir}.installed.json`;
/** Where an example's `npm run build` says it is done: `{}`, or `{ error }` with the build's output. */
const builtMarker = (dir: string) => `${dir}.built.json`;

/** A marker's outcome, once it is written (by global setup's background chain or another test file). */
async function outcome(marker: string): Promise<{ error?: string }> {
  while (!existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 200));
  return JSON.parse(readFileSync(marker, 'utf8')) as { error?: string };
}

/** The `build` script of examples/<name>'s package.json, if it has one. */
export function buildScript(name: string): string | undefined {
  const { scripts = {} } = JSON.parse(readFileSync(join(REPO, 'examples', name, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  return scripts['build'];
}

/**
 * Claims examples/<name> for installing under `appsDir` (creating its folder claims it, once: global setup installs
 * the examples in the background and a test may ask first) and installs it: copied out of the repository with the
 * packed Engram as ./engram.tgz, then `npm install`. False when it was claimed already.
 */
export async function claimAndInstall(name: string, appsDir: string, tarball: () => Promise<string>, prebuilds: string): Promise<boolean> {
  const dir = join(appsDir, name);
  mkdirSync(appsDir, { recursive: true });
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  let result: { error?: string } = {};
  try {
    cpSync(join(REPO, 'examples', name), dir, {
      recursive: true,
      filter: (source) => !/[\\/](node_modules|dist|build)$/.test(source),
    });
    cpSync(await tarball(), join(dir, 'engram.tgz'));
    await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], dir, {
      npm_config_better_sqlite3_local_prebuilds: prebuilds,
      // As the README says for an npm without allowScripts (the examples' package.json denies the script to the others).
      ONNXRUNTIME_NODE_INSTALL: 'skip',
    });
  } catch (error) {
    result = { error: error instanceof Error ? error.message : String(error) };
  }
  writeWhole(installedMarker(dir), JSON.stringify(result));
  return true;
}

/**
 * Claims the build of examples/<name>, installed under `appsDir` (its install marker written), and runs its
 * `npm run build` once, for every test that reads the output: like the install, global setup does this in the
 * background and a test may ask first. Creating `<dir>.build-claimed` claims it. False when it was claimed already
 * or the example has no build script.
 */
export async function claimAndBuild(name: string, appsDir: string): Promise<boolean> {
  const dir = join(appsDir, name);
  if (buildScript(name) === undefined) return false;
  try {
    writeFileSync(`${dir}.build-claimed`, '', { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  let result: { error?: string } = {};
  try {
    const { error } = await outcome(installedMarker(dir));
    if (error) throw new Error(`not installed: ${error}`);
    await sh('npm', ['run', 'build'], dir);
  } catch (error) {
    result = { error: error instanceof Error ? error.message : String(error) };
  }
  writeWhole(builtMarker(dir), JSON.stringify(result));
  return true;
}

/** examples/<name> installed (by global setup in the background, or here if it has not started on it yet). */
export async function installExample(name: string): Promise<string> {
  const dir = join(inject('consumersDir'), name);
  await claimAndInstall(name, inject('consumersDir'), engramTarball, inject('nativePrebuilds'));
  const { error } = await outcome(installedMarker(dir));
  if (error) throw new Error(`installing examples/${name} failed: ${error}`);
  return dir;
}

/**
 * examples/<name> installed and built by its own `npm run build`, once for every test file (by global setup in the
 * background, or here if it has not started on it yet): the tests read its output and must not change it.
 */
export async function builtExample(name: string): Promise<string> {
  if (buildScript(name) === undefined) throw new Error(`examples/${name} has no build script`);
  const dir = await installExample(name);
  await claimAndBuild(name, inject('consumersDir'));
  const { error } = await outcome(builtMarker(dir));
  if (error) throw new Error(`building examples/${name} failed: ${error}`);
  return dir;
}

/** Every installed copy of onnxruntime-web in an app (its package.json paths): one app, one ONNX Runtime. */
export async function installedOrtCopies(app: string): Promise<string[]> {
  return (await sh('find', ['node_modules', '-path', '*/onnxruntime-web/package.json'], app)).trim().split('\n');
}

/** Starts a long-running command (a dev or preview server) and resolves with the first http URL it prints. */
export async function startServer(command: string, args: string[], cwd: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(command, args, { cwd, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' }, detached: true });
  let output = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} printed no URL:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /(https?:\/\/(?:localhost|127\.0\.0\.1)[^\s/]*)\/?/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolveUrl(found[1]!);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${command} exited with ${code}:\n${output}`)));
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

const MIME: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.css': 'text/css',
};

/** A static file server for a production build (what any host would do), with the MIME types browsers insist on. */
export async function serveStatic(root: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    let file = join(root, path);
    if (!file.startsWith(root)) return void response.writeHead(403).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': MIME[extname(file)] ?? 'application/octet-stream' });
    createReadStream(file).pipe(response);
  });
  const url = await listen(server);
  return { url, close: () => new Promise((done) => server.close(() => done())) };
}

function listen(server: Server): Promise<string> {
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/**
 * Chromium's own services (component updates, sign-in, autofill hints) call Google hosts whatever the page does;
 * no part of Engram or its dependencies does.
 */
const BROWSER_SERVICES = /^(?:CONNECT |[A-Z]+ https?:\/\/)(?:[a-z0-9-]+\.)*(?:google\.com|googleapis\.com|gvt1\.com)[:/]/;

/**
 * Chromium sends every request for a host other than loopback through this proxy, which records it and refuses it.
 * An empty list at the end means no request left the machine, from pages, workers or extensions alike.
 */
export async function recordingProxy(): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const record = (line: string) => {
    if (!BROWSER_SERVICES.test(line)) requests.push(line);
  };
  const server = createServer((request, response) => {
    record(`${request.method} ${request.url}`);
    response.writeHead(502).end();
  });
  server.on('connect', (request, socket) => {
    record(`CONNECT ${request.url}`);
    // The socket is ours once CONNECT arrives: a browser that resets it must not throw in the test process.
    socket.on('error', () => undefined);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  const url = await listen(server);
  return { port: Number(new URL(url).port), requests, close: () => new Promise((done) => server.close(() => done())) };
}

export type RecordingProxy = Awaited<ReturnType<typeof recordingProxy>>;

/**
 * For one test file: a recording proxy and temporary folders, all removed after the file. `driveNotes` runs the
 * notes scenario in a new profile, checks the proxy saw nothing, and returns the paths the app's pages and workers
 * requested from its origin.
 */
export function consumerBrowser(): { proxy(): RecordingProxy; tempDir(purpose: string): string; driveNotes(url: string): Promise<Set<string>> } {
  let proxy: RecordingProxy | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    proxy = await recordingProxy();
  });
  afterAll(async () => {
    await proxy?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const session = {
    proxy: () => {
      if (!proxy) throw new Error('the proxy starts in beforeAll');
      return proxy;
    },
    tempDir: (purpose: string) => {
      const dir = mkdtempSync(join(tmpdir(), `engram-${purpose}-`));
      dirs.push(dir);
      return dir;
    },
    driveNotes: async (url: string) => {
      const context = await launchChromium(session.tempDir('profile'), session.proxy().port);
      const requested = new Set<string>();
      // Context-level: this also sees the Engram worker's fetches (the ONNX Runtime chunk and its WASM).
      context.on('request', (request) => {
        if (request.url().startsWith(url)) requested.add(new URL(request.url()).pathname.slice(1));
      });
      try {
        await driveNotesApp(context, url);
      } finally {
        await context.close();
      }
      expect(session.proxy().requests).toEqual([]);
      return requested;
    },
  };
  return session;
}

/** A persistent Chromium profile (OPFS survives a reload), with its traffic sent to the proxy. */
export async function launchChromium(
  profileDir: string,
  proxyPort: number,
  options: { extensionDir?: string } = {},
): Promise<BrowserContext> {
  const args = [...chromiumArgs(true), `--proxy-server=http://127.0.0.1:${proxyPort}`];
  if (options.extensionDir) args.push(`--disable-extensions-except=${options.extensionDir}`, `--load-extension=${options.extensionDir}`);
  return chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM_PATH, headless: true, args });
}

/** Forwards a page's errors to the test log. */
export function logPage(page: Page): Page {
  page.on('pageerror', (error) => console.error('[page error]', error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') console.error(`[page ${message.type()}]`, message.text());
  });
  return page;
}

/**
 * The scenario every notes example (Vite, webpack) passes: it opens, remembers two notes, answers a hybrid search
 * with the right note first, and after a reload still has both. The built-in model loads in the background, so the
 * search is repeated until the trace says `hybrid`.
 */
async function driveNotesApp(context: BrowserContext, url: string): Promise<void> {
  const page = logPage(await context.newPage());
  const seen: string[] = [];
  page.on('request', (request) => seen.push(request.url()));
  await page.goto(url);
  await page.waitForSelector('body[data-state]', { timeout: 60_000 });
  expect(await page.textContent('#status')).toMatch(/^ready/);

  const notes = ['The staging server moved to eu-west-2 in March', 'Grandma likes tulips and orchids in her garden'];
  for (const [index, text] of notes.entries()) {
    await page.fill('#add input[name=text]', text);
    await page.click('#add button');
    // An add can wait behind the model's background load for a second or more.
    await expect.poll(() => page.textContent('#status'), { timeout: 30_000 }).toMatch(new RegExp(`${index + 1} memories`));
  }

  await searchUntilHybrid(page, 'which flowers does grandma like?', /tulips/);
  await page.reload();
  await page.waitForSelector('body[data-state=ready]', { timeout: 60_000 });
  expect(await page.textContent('#status')).toMatch(/2 memories/);
  await searchUntilHybrid(page, 'where is staging hosted', /eu-west-2/);

  const origin = new URL(url).origin;
  expect(seen.filter((request) => !request.startsWith(origin) && !/^(data|blob):/.test(request))).toEqual([]);
  await page.close();
}

async function searchUntilHybrid(page: Page, query: string, first: RegExp): Promise<void> {
  await page.fill('#search input[name=query]', query);
  await expect
    .poll(
      async () => {
        await page.click('#search button');
        await page.waitForTimeout(250);
        return page.textContent('#mode');
      },
      { timeout: 60_000, interval: 500 },
    )
    .toBe('hybrid');
  expect(await page.textContent('#hits li:first-child')).toMatch(first);
}

/** SQLite3 Multiple Ciphers' WASM builds that Engram's worker may load (OPFS: sync; IndexedDB: asyncify). */
export const MC_WASM = ['mc-wa-sqlite.wasm', 'mc-wa-sqlite-async.wasm'];

/**
 * For each of SQLite3 Multiple Ciphers' WASM files in the app's installed wa-sqlite, the emitted files in `dir`
 * (recursively) with the same bytes: bundlers rename assets by content hash, so bytes are what identify them.
 */
export function emittedMcWasm(app: string, dir: string): Map<string, string[]> {
  const sourceDir = join(app, 'node_modules/@journeyapps/wa-sqlite/dist');
  const emitted = (readdirSync(dir, { recursive: true }) as string[]).filter((file) => file.endsWith('.wasm'));
  const found = new Map<string, string[]>();
  for (const source of MC_WASM) {
    const bytes = readFileSync(join(sourceDir, source));
    found.set(
      source,
      emitted.filter((file) => statSync(join(dir, file)).size === bytes.length && readFileSync(join(dir, file)).equals(bytes)),
    );
  }
  return found;
}
