import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page, type Request } from 'playwright-core';
import { inject } from 'vitest';
import { findBrowsers } from '../../scripts/browsers.js';

/** Found as the preflight finds it (scripts/browsers.ts); the Debian path when none is, for a clear launch error. */
export const CHROMIUM_PATH = findBrowsers().chromium ?? '/usr/bin/chromium';

/** Flags from DEVELOPERS.md: no background traffic on a closed network; SwiftShader WebGPU when asked. */
export function chromiumArgs(webgpu = true): string[] {
  const args = [
    '--no-sandbox',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  return args;
}

export function baseURL(): string {
  return inject('baseURL');
}

export async function launchBrowser(options: { webgpu?: boolean } = {}): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: chromiumArgs(options.webgpu ?? true) });
}

/** A persistent profile (real OPFS/IndexedDB that survives a browser restart). Call `dispose` to delete it. */
export function tempProfileDir(): { dir: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'engram-profile-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function launchPersistent(userDataDir: string, options: { webgpu?: boolean } = {}): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: chromiumArgs(options.webgpu ?? true),
  });
}

/**
 * Lowers the test origin's quota to what it uses now plus `room` bytes. OPFS checks every write against it at once.
 * Chrome's IndexedDB approves writes from the free space it last read, decaying over 30 s
 * (BucketContext::kBucketSpaceCacheTimeLimit), so it would feel the new quota up to 30 s late: `indexedDB: true`
 * waits until the origin's backing store has closed, 2 s after its last connection, and the next one reads it afresh.
 * Its usage figure also lags the writes just made (a CI run saw the first 2 MB refused with 4 MB left): with
 * `indexedDB: true` the usage is read until two readings half a second apart agree, for up to 5 s.
 */
export async function leaveRoom(page: Page, cdp: CDPSession, room: number, options: { indexedDB?: boolean } = {}): Promise<void> {
  const usage = () => page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
  let used = await usage();
  for (let reading = 0; options.indexedDB && reading < 10; reading++) {
    await page.waitForTimeout(500);
    const next = await usage();
    if (next === used) break;
    used = next;
  }
  await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL()).origin, quotaSize: used + room });
  if (options.indexedDB) await page.waitForTimeout(3000);
}

/** Records every request a page makes and reports those that leave the test server's origin. */
export function recordRequests(target: Page | BrowserContext): { all: string[]; foreign(): string[] } {
  const all: string[] = [];
  target.on('request', (request: Request) => {
    all.push(request.url());
  });
  const origin = new URL(baseURL()).origin;
  return {
    all,
    foreign: () => all.filter((url) => !url.startsWith(origin) && !url.startsWith('data:') && !url.startsWith('blob:')),
  };
}

/** Opens a blank page of the test server: same origin, cross-origin isolated, ready for `import('/src/index.ts')`. */
export async function openBlankPage(context: BrowserContext | Browser, path = '/test/browser/blank.html'): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (error) => console.error('[page error]', error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') console.error('[page console]', message.text());
  });
  await page.goto(baseURL() + path);
  return page;
}

/**
 * Calls `onRun` when a payload runs in the page: the test payloads set `window.__xss`, a trap installed before the
 * page's first script on every (re)load, so a payload reports at once, even if the page reloads later.
 */
export async function trapPayloads(page: Page, onRun: (what: string) => void): Promise<void> {
  await page.exposeBinding('__xssReport', (_source, what: string) => onRun(what));
  await page.addInitScript(() => {
    const report = (globalThis as unknown as { __xssReport(what: string): void }).__xssReport;
    let value: unknown;
    Object.defineProperty(window, '__xss', {
      get: () => value,
      set: (next: unknown) => {
        value = next;
        report(`window.__xss = ${String(next)}`);
      },
    });
  });
}
