/**
 * One small interface over the three browser engines available on this Debian machine, for tests and smoke
 * scripts that must run in more than Chromium:
 *
 * - chromium: Debian's chromium (or CHROMIUM_PATH) through playwright-core (flags of harness.ts).
 * - firefox:  firefox-esr (or FIREFOX_PATH) through puppeteer-core over WebDriver BiDi (it downloads no browser).
 *             Console messages of pages arrive as BiDi log entries.
 * - webkit:   WebKitGTK's MiniBrowser driven by WebKitWebDriver (Debian `webkit2gtk-driver`) under `xvfb-run`, over
 *             plain WebDriver HTTP. Its console is not reachable that way: `open` installs a hook that records the
 *             page's console errors and unhandled errors in the page, and `consoleErrors()` reads them back.
 *
 * Every engine: `open(url)` navigates a fresh page (a new profile per launch, so storage starts empty unless
 * `profileDir` is given; webkit takes none), `openTab()` opens a second page of the same browser, `evaluate(source)`
 * runs `source` as the body of an async function in the page and resolves with its JSON-serialisable result, `consoleErrors()` lists what was logged as an error so far, and
 * `close()` ends the browser and everything this module started for it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ENGINES, requireBrowser, type EngineName } from '../../scripts/browsers.js';

export { ENGINES, type EngineName };

export interface EnginePage {
  readonly engine: EngineName;
  /** Navigates to `url` and waits for its load event. */
  open(url: string): Promise<void>;
  /**
   * Runs `body` (the body of an async function: use `return`) in the page and resolves with its result, which must
   * survive JSON. `timeoutMs` (default 120 s) bounds the wait.
   */
  evaluate<T = unknown>(body: string, timeoutMs?: number): Promise<T>;
  /** Console errors and uncaught errors seen so far (page and, where the engine reports them, workers). */
  consoleErrors(): string[];
  /** Every console line seen so far, as `type: text`. */
  consoleLog(): string[];
  /** A second page (tab) of the same browser, sharing its storage; its `close` closes only that tab. */
  openTab(): Promise<EnginePage>;
  /** Closes the browser (or, for a page from `openTab`, that tab). */
  close(): Promise<void>;
}

export interface LaunchOptions {
  /**
   * A profile directory kept across launches (storage survives a restart); default a fresh temporary one.
   * Not for webkit: MiniBrowser in automation mode keeps website data in memory only (see `supportsRestart`).
   */
  profileDir?: string;
  /** Print each console line as it arrives. */
  echo?: boolean;
}

/** Whether storage can survive a browser restart: MiniBrowser's `--automation` mode uses an ephemeral data store. */
export function supportsRestart(engine: EngineName): boolean {
  return engine !== 'webkit';
}


export async function launchEngine(engine: EngineName, options: LaunchOptions = {}): Promise<EnginePage> {
  switch (engine) {
    case 'chromium':
      return launchChromium(options);
    case 'firefox':
      return launchFirefox(options);
    case 'webkit':
      return launchWebKit(options);
  }
}

/** The script wrapping of `evaluate`: the body's result (or its error) as JSON text, so every engine returns the same. */
function wrap(body: string): string {
  return `(async () => {
    try {
      const value = await (async () => { ${body} })();
      return JSON.stringify({ ok: true, value: value === undefined ? null : value });
    } catch (error) {
      return JSON.stringify({ ok: false, error: { name: error?.name, code: error?.code, message: String(error?.message ?? error) } });
    }
  })()`;
}

function unwrap<T>(engine: EngineName, text: unknown): T {
  if (typeof text !== 'string') throw new Error(`${engine}: evaluate returned ${typeof text}, not the wrapped JSON`);
  const result = JSON.parse(text) as { ok: true; value: T } | { ok: false; error: { name?: string; code?: string; message: string } };
  if (result.ok) return result.value;
  const error = new Error(`${engine}: ${result.error.code ? `${result.error.code}: ` : ''}${result.error.message}`) as Error & { code?: string };
  if (result.error.code) error.code = result.error.code;
  throw error;
}

function bounded<T>(engine: EngineName, promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${engine}: evaluate did not settle within ${ms} ms`)), ms))),
  ]);
}

/** A new folder under the system's temp folder, and its removal. */
export function tempDir(prefix: string): { dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  return {
    dir,
    dispose: () => {
      try {
        remove();
      } catch (error) {
        // Firefox's helper processes may still write the profile for seconds after it closed (ENOTEMPTY on a loaded
        // machine, even after 11 s of retries). A leftover temp folder is no test failure: try again at exit.
        console.warn(`tempDir: ${dir} not removed yet (${(error as NodeJS.ErrnoException).code ?? String(error)}); retrying at exit`);
        process.once('exit', () => {
          try {
            rmSync(dir, { recursive: true, force: true });
          } catch {
            // Left in the system's temp folder.
          }
        });
      }
    },
  };
}

class Console {
  readonly lines: string[] = [];
  readonly errors: string[] = [];
  constructor(private readonly engine: EngineName, private readonly echo: boolean) {}
  add(type: string, text: string): void {
    this.lines.push(`${type}: ${text}`);
    if (type === 'error' || type === 'pageerror') this.errors.push(text);
    if (this.echo) console.log(`[${this.engine} ${type}] ${text}`);
  }
}

/** A page of a driver that navigates and evaluates scripts itself (Playwright's and puppeteer's pages). */
interface DriverPage {
  goto(url: string, options: { waitUntil: 'load' }): Promise<unknown>;
  evaluate(script: string): Promise<unknown>;
}

function driverPage(engine: EngineName, page: DriverPage, log: Console, openTab: () => Promise<EnginePage>, close: () => Promise<void>): EnginePage {
  return {
    engine,
    open: async (url) => void (await page.goto(url, { waitUntil: 'load' })),
    evaluate: async <T>(body: string, timeoutMs = 120_000) => unwrap<T>(engine, await bounded(engine, page.evaluate(wrap(body)), timeoutMs)),
    consoleErrors: () => [...log.errors],
    consoleLog: () => [...log.lines],
    openTab,
    close,
  };
}

async function launchChromium(options: LaunchOptions): Promise<EnginePage> {
  const { chromium } = await import('playwright-core');
  const profile = options.profileDir ? null : tempDir('engram-chromium-');
  const context = await chromium.launchPersistentContext(options.profileDir ?? profile!.dir, {
    executablePath: requireBrowser('chromium'),
    headless: true,
    args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const wrapPage = (page: import('playwright-core').Page, close: () => Promise<void>): EnginePage => {
    const log = new Console('chromium', options.echo ?? false);
    page.on('console', (message) => log.add(message.type(), message.text()));
    page.on('pageerror', (error) => log.add('pageerror', error.message));
    page.on('worker', (worker) => worker.on('console', (message) => log.add(message.type(), `[worker] ${message.text()}`)));
    return driverPage('chromium', page, log, async () => {
      const tab = await context.newPage();
      return wrapPage(tab, () => tab.close());
    }, close);
  };
  return wrapPage(context.pages()[0] ?? (await context.newPage()), async () => {
    await context.close();
    profile?.dispose();
  });
}

async function launchFirefox(options: LaunchOptions): Promise<EnginePage> {
  const puppeteer = (await import('puppeteer-core')).default;
  const profile = options.profileDir ? null : tempDir('engram-firefox-');
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: requireBrowser('firefox'),
    headless: true,
    userDataDir: options.profileDir ?? profile!.dir,
  });
  const wrapPage = (page: import('puppeteer-core').Page, close: () => Promise<void>): EnginePage => {
    const log = new Console('firefox', options.echo ?? false);
    // Page console; worker console arrives as BiDi log entries of the worker's realm, which puppeteer reports
    // here in the versions that forward them.
    page.on('console', (message) => log.add(message.type(), message.text()));
    page.on('pageerror', (error) => log.add('pageerror', error instanceof Error ? error.message : String(error)));
    return driverPage('firefox', page, log, async () => {
      const tab = await browser.newPage();
      return wrapPage(tab, () => tab.close());
    }, close);
  };
  return wrapPage((await browser.pages())[0] ?? (await browser.newPage()), async () => {
    await browser.close();
    profile?.dispose();
  });
}

/** A free TCP port on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Records console errors and uncaught errors in the page itself (WebDriver classic has no console events). */
const WEBKIT_CONSOLE_HOOK = `
  if (!window.__engineLog) {
    const log = (window.__engineLog = []);
    for (const type of ['error', 'warn', 'log', 'info']) {
      const original = console[type].bind(console);
      console[type] = (...args) => { log.push({ type, text: args.map((a) => a instanceof Error ? a.message : typeof a === 'string' ? a : (() => { try { return JSON.stringify(a); } catch { return String(a); } })()).join(' ') }); original(...args); };
    }
    addEventListener('error', (event) => log.push({ type: 'pageerror', text: String(event.message) }));
    addEventListener('unhandledrejection', (event) => log.push({ type: 'pageerror', text: 'unhandled rejection: ' + String(event.reason?.message ?? event.reason) }));
  }
`;

async function launchWebKit(options: LaunchOptions): Promise<EnginePage> {
  if (options.profileDir) throw new Error('webkit: MiniBrowser in automation mode keeps no profile across launches');
  const port = await freePort();
  // -a: a free display; the driver starts MiniBrowser on it. Its own process group, so close() ends all of it.
  const driver: ChildProcess = spawn(requireBrowser('xvfbRun'), ['-a', requireBrowser('webkitDriver'), `--port=${port}`, '--host=127.0.0.1'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let driverOutput = '';
  driver.stdout?.on('data', (chunk: Buffer) => (driverOutput += chunk.toString()));
  driver.stderr?.on('data', (chunk: Buffer) => (driverOutput += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const stopDriver = async () => {
    if (driver.exitCode !== null || driver.signalCode !== null) return;
    const exited = new Promise((done) => driver.once('exit', done));
    try {
      process.kill(-driver.pid!, 'SIGTERM');
    } catch {
      return;
    }
    await Promise.race([exited, new Promise((done) => setTimeout(done, 5000))]);
  };
  const request = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as { value: unknown };
    if (!response.ok) {
      const value = json.value as { error?: string; message?: string };
      throw new Error(`webkit: ${method} ${path}: ${value?.error ?? response.status}: ${value?.message ?? ''}`);
    }
    return json.value;
  };
  // The driver takes a moment to listen.
  const started = Date.now();
  for (;;) {
    try {
      await request('GET', '/status');
      break;
    } catch (error) {
      if (driver.exitCode !== null || Date.now() - started > 30_000) {
        await stopDriver();
        throw new Error(`webkit: WebKitWebDriver did not start: ${String(error)}\n${driverOutput}`);
      }
      await new Promise((done) => setTimeout(done, 200));
    }
  }
  let sessionId: string;
  try {
    const session = (await request('POST', '/session', {
      capabilities: {
        alwaysMatch: {
          browserName: 'MiniBrowser',
          'webkitgtk:browserOptions': { binary: requireBrowser('miniBrowser'), args: ['--automation'] },
          timeouts: { script: 600_000, pageLoad: 120_000 },
        },
      },
    })) as { sessionId: string };
    sessionId = session.sessionId;
  } catch (error) {
    await stopDriver();
    throw error;
  }
  const path = (tail: string) => `/session/${sessionId}${tail}`;
  // One WebDriver session drives one window at a time: every command of a tab switches to it first, and the
  // commands of all tabs run one after another.
  let current = (await request('GET', path('/window'))) as string;
  let queue: Promise<unknown> = Promise.resolve();
  const inWindow = <T>(handle: string, run: () => Promise<T>): Promise<T> => {
    const next = queue.then(async () => {
      if (current !== handle) {
        await request('POST', path('/window'), { handle });
        current = handle;
      }
      return run();
    });
    queue = next.catch(() => undefined);
    return next;
  };

  const wrapPage = (handle: string, close: () => Promise<void>): EnginePage => {
    const log = new Console('webkit', options.echo ?? false);
    let seen = 0;
    const pullLog = async () => {
      try {
        const entries = (await inWindow(handle, () =>
          request('POST', path('/execute/sync'), { script: `return (window.__engineLog || []).slice(arguments[0]);`, args: [seen] }),
        )) as { type: string; text: string }[];
        seen += entries.length;
        for (const entry of entries) log.add(entry.type, entry.text);
      } catch {
        // The page is navigating or gone: nothing to read.
      }
    };
    return {
      engine: 'webkit',
      open: async (url) => {
        await pullLog();
        seen = 0;
        await inWindow(handle, async () => {
          await request('POST', path('/url'), { url });
          await request('POST', path('/execute/sync'), { script: WEBKIT_CONSOLE_HOOK, args: [] });
        });
      },
      evaluate: async <T>(body: string, timeoutMs = 120_000) => {
        const script = `const done = arguments[arguments.length - 1]; ${wrap(body)}.then(done, (e) => done(JSON.stringify({ ok: false, error: { message: String(e) } })));`;
        try {
          return unwrap<T>('webkit', await bounded('webkit', inWindow(handle, () => request('POST', path('/execute/async'), { script, args: [] })), timeoutMs));
        } finally {
          await pullLog();
        }
      },
      consoleErrors: () => [...log.errors],
      consoleLog: () => [...log.lines],
      openTab: async () => {
        const { handle: tab } = (await inWindow(handle, () => request('POST', path('/window/new'), { type: 'tab' }))) as { handle: string };
        return wrapPage(tab, () =>
          inWindow(tab, async () => {
            await request('DELETE', path('/window'));
            current = '';
          }),
        );
      },
      close,
    };
  };
  return wrapPage(current, async () => {
    await request('DELETE', path('')).catch(() => undefined);
    await stopDriver();
  });
}
