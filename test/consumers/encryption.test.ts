/**
 * Encryption at rest in the notes examples' vault, from the packed tarball: the encrypted path loads SQLite3
 * Multiple Ciphers (`mc-wa-sqlite*.mjs`, each finding its .wasm through `new URL(…, import.meta.url)`), which the
 * app's bundler must emit and serve like the plain builds. Each app opens its vault with a passphrase, keeps a note,
 * and after a reload refuses a wrong passphrase (WRONG_KEY) and opens with the right one, offline.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { builtExample, consumerBrowser, emittedMcWasm, installExample, launchChromium, logPage, MC_WASM, serveStatic, startServer } from './harness.js';

const browser = consumerBrowser();

const PASSPHRASE = 'correct horse battery staple';
const SECRET = 'The spare key is under the blue flowerpot';

/** Submits the vault's passphrase form and waits for its outcome: the vault's status once it is no longer opening. */
async function openVault(page: Page, passphrase: string): Promise<string> {
  await page.fill('#vault input[name=passphrase]', passphrase);
  await page.click('#vault button');
  // The handler marks the vault as opening before its first await, so the old outcome cannot be read here.
  await page.waitForSelector('body[data-vault=ready], body[data-vault=failed]', { timeout: 90_000 });
  // Whatever happened, the page holds the passphrase no longer.
  expect(await page.inputValue('#vault input[name=passphrase]')).toBe('');
  return (await page.textContent('#vault-status')) ?? '';
}

/**
 * The vault scenario in a new profile: open with a passphrase, keep a note, reload, a wrong passphrase, the right
 * one. Returns the paths the pages and workers requested from the app's origin; no request may leave it.
 */
async function driveVault(url: string): Promise<Set<string>> {
  const context: BrowserContext = await launchChromium(browser.tempDir('profile'), browser.proxy().port);
  const requested = new Set<string>();
  // Context-level: this also sees the Engram workers' fetches (the SQLite builds and their WASM).
  context.on('request', (request) => {
    if (request.url().startsWith(url)) requested.add(new URL(request.url()).pathname.slice(1));
  });
  const origin = new URL(url).origin;
  const leftOrigin: string[] = [];
  context.on('request', (request) => {
    if (!request.url().startsWith(origin) && !/^(data|blob):/.test(request.url())) leftOrigin.push(request.url());
  });
  try {
    const page = logPage(await context.newPage());
    await page.goto(url);
    await page.waitForSelector('body[data-state]', { timeout: 60_000 });
    expect(await page.textContent('#vault-status')).toBe('locked');

    expect(await openVault(page, PASSPHRASE)).toBe('ready: 0 memories (encrypted)');
    await page.fill('#vault-add input[name=text]', SECRET);
    await page.click('#vault-add button');
    // An add can wait behind the model's background load.
    await expect.poll(() => page.textContent('#vault-status'), { timeout: 60_000 }).toBe('ready: 1 memories (encrypted)');
    expect(await page.inputValue('#vault-add input[name=text]')).toBe('');

    await page.reload();
    await page.waitForSelector('body[data-state]', { timeout: 60_000 });
    expect(await page.textContent('#vault-status')).toBe('locked');
    expect(await openVault(page, 'correct horse battery stapler')).toMatch(/^WRONG_KEY: \S/);
    expect(await openVault(page, PASSPHRASE)).toBe('ready: 1 memories (encrypted)');
    // The vault is a separate database: the notes memory beside it saw none of this.
    expect(await page.textContent('#status')).toBe('ready: 0 memories');
    await page.close();
  } finally {
    await context.close();
  }
  expect(leftOrigin).toEqual([]);
  expect(browser.proxy().requests).toEqual([]);
  return requested;
}

describe('Vite app: the encrypted vault', () => {
  let app: string;
  beforeAll(async () => {
    app = await installExample('vite-app');
  });

  test('dev server: open with a passphrase, keep a note, reload, WRONG_KEY, open again', async () => {
    const server = await startServer('npx', ['vite', '--port', '0', '--strictPort', 'false', '--host', '127.0.0.1'], app);
    try {
      const requested = await driveVault(server.url);
      // The dev server serves the WASM from the installed package (Vite may prefix the path, e.g. /@fs/).
      expect([...requested].some((path) => path.endsWith('/mc-wa-sqlite.wasm') || path.includes('/mc-wa-sqlite.wasm?'))).toBe(true);
    } finally {
      await server.stop();
    }
  });

  test('production build: the mc WASM builds are emitted; the vault works on the preview server', async () => {
    // `npm run build`, run once for every test file that needs it (harness.ts).
    await builtExample('vite-app');
    const dist = join(app, 'dist');
    const emitted = emittedMcWasm(app, dist);
    for (const source of MC_WASM) expect(emitted.get(source), source).toHaveLength(1);

    const server = await startServer('npx', ['vite', 'preview', '--port', '0', '--host', '127.0.0.1'], app);
    try {
      const requested = await driveVault(server.url);
      // Chromium's dedicated worker has OPFS, so the vault ran on the emitted sync mc build.
      expect([...requested]).toContain(emitted.get('mc-wa-sqlite.wasm')![0]);
    } finally {
      await server.stop();
    }
  });
});

describe('webpack app: the encrypted vault', () => {
  let app: string;
  beforeAll(async () => {
    app = await installExample('webpack-app');
  });

  test('production build: the mc WASM builds are emitted; open with a passphrase, keep a note, reload, WRONG_KEY, open again', async () => {
    await builtExample('webpack-app');
    const dist = join(app, 'dist');
    const emitted = emittedMcWasm(app, dist);
    for (const source of MC_WASM) expect(emitted.get(source), source).toHaveLength(1);

    const server = await serveStatic(dist);
    try {
      const requested = await driveVault(server.url);
      expect([...requested]).toContain(emitted.get('mc-wa-sqlite.wasm')![0]);
    } finally {
      await server.close();
    }
  });
});
