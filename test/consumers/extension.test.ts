/**
 * examples/extension: an MV3 Chrome extension built with plain Vite. The popup asks the service worker, which keeps
 * an offscreen document that holds the Engram worker. Driven in Debian Chromium with the extension loaded unpacked.
 * Its private vault is a second memory, encrypted at rest with a passphrase the popup sends once and nothing keeps.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, CDPSession, Page, Worker } from 'playwright-core';
import { builtExample, consumerBrowser, emittedMcWasm, installExample, launchChromium, logPage, MC_WASM, serveStatic } from './harness.js';

/** The few extension APIs the test calls inside the service worker (the repository has no @types/chrome). */
declare const chrome: {
  runtime: { reload(): void; getContexts(filter: { contextTypes: string[] }): Promise<unknown[]> };
  storage?: unknown;
  offscreen: { closeDocument(): Promise<void> };
  tabs: { query(query: object): Promise<{ id?: number; url?: string }[]> };
};

const browser = consumerBrowser();
let app: string;

beforeAll(async () => {
  app = await installExample('extension');
});

/** Two local pages whose titles the popup must capture with the notes. */
const PAGES = [
  { file: 'garden.html', title: "Grandma's garden", note: 'She likes tulips and orchids best' },
  { file: 'staging.html', title: 'Staging runbook', note: 'The staging server moved to eu-west-2 in March' },
];
/** A hit's text is the page's title, a colon and the note. */
const GARDEN_FIRST = /^Grandma's garden: She likes tulips/;
const STAGING_FIRST = /^Staging runbook: The staging server moved to eu-west-2/;

describe('MV3 extension (plain Vite, offscreen document) from the packed tarball', () => {
  test('npm run build writes a loadable extension folder', async () => {
    // Run once for every test file that needs it (harness.ts).
    await builtExample('extension');
    const dist = join(app, 'dist');
    for (const file of ['manifest.json', 'background.js', 'popup.html', 'offscreen.html']) {
      expect(existsSync(join(dist, file)), file).toBe(true);
    }
    const manifest = JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8'));
    expect(manifest.manifest_version).toBe(3);
    expect(manifest.permissions).toEqual(expect.arrayContaining(['offscreen', 'unlimitedStorage']));
    expect(manifest.content_security_policy.extension_pages).toContain("'wasm-unsafe-eval'");
    // Without this permission chrome.storage does not exist: the extension has nowhere of its own to keep a passphrase.
    expect(manifest.permissions).not.toContain('storage');

    // The vault's encrypted path: SQLite3 Multiple Ciphers' builds, emitted beside the plain ones.
    const emitted = emittedMcWasm(app, dist);
    for (const source of MC_WASM) expect(emitted.get(source), source).toHaveLength(1);

    // The service worker (MV3 gives it no Worker) loads none of Engram: only its relay and the message helpers.
    const serviceWorkerCode = staticImportGraph(dist, 'background.js');
    expect(serviceWorkerCode.size).toBeGreaterThan(0);
    for (const [file, code] of serviceWorkerCode) {
      expect(code, file).not.toMatch(/new Worker|createMemory|wa-sqlite|import\(/);
    }
  });

  test('popup → service worker → offscreen document: add, hybrid search, offscreen closed, extension reloaded', async () => {
    const site = browser.tempDir('site');
    const profile = browser.tempDir('profile');
    for (const { file, title } of PAGES) {
      writeFileSync(join(site, file), `<!doctype html><title>${title}</title><link rel="icon" href="data:,"><p>${title}</p>`);
    }
    // Chromium reloads an unpacked extension (chrome.runtime.reload()) only in developer mode; without it the
    // extension is unloaded and stays so. A developer who loads one unpacked has that mode on.
    mkdirSync(join(profile, 'Default'));
    writeFileSync(join(profile, 'Default/Preferences'), JSON.stringify({ extensions: { ui: { developer_mode: true } } }));
    const server = await serveStatic(site);
    const context = await launchChromium(profile, browser.proxy().port, { extensionDir: join(app, 'dist') });
    const seen: string[] = [];
    context.on('request', (request) => seen.push(request.url()));
    try {
      let worker = await extensionServiceWorker(context);
      const id = new URL(worker.url()).host;
      const origin = `chrome-extension://${id}`;

      const tabs: number[] = [];
      const sitePages: Page[] = [];
      for (const { file } of PAGES) {
        const page = logPage(await context.newPage());
        await page.goto(`${server.url}/${file}`);
        sitePages.push(page);
        tabs.push(await tabIdOf(worker, page.url()));
      }
      // Through a page that outlives the extension's reload.
      const offscreen = await watchOffscreenDocuments(context, sitePages[0]!, origin);

      // Add one note per page, each through its own popup aimed at that page's tab.
      for (const [index, { title, note }] of PAGES.entries()) {
        const popup = await openPopup(context, origin, tabs[index]!);
        expect(await popup.textContent('#page')).toBe(title);
        await popup.fill('#add input[name=note]', note);
        await popup.click('#add button');
        const added = new RegExp(`^ready: ${index + 1} memories, opfs,`);
        await expect.poll(() => popup.textContent('#status'), { timeout: 30_000 }).toMatch(added);
        await popup.close();
      }

      let popup = await openPopup(context, origin, tabs[0]!);
      await searchUntilHybrid(popup, 'which flowers does grandma like?', GARDEN_FIRST);
      expect(await popup.textContent('#status')).toMatch(/model engram-glove-100d@q8\/wasm$/);

      // Chrome may close the offscreen document; the service worker must make a new one on the next request.
      await worker.evaluate(() => chrome.offscreen.closeDocument());
      expect(await offscreenDocuments(worker)).toBe(0);
      await searchUntilHybrid(popup, 'where is staging hosted', STAGING_FIRST);
      expect(await offscreenDocuments(worker)).toBe(1);

      // Reload the whole extension: new service worker, no offscreen document, the popup closed. OPFS stays.
      const reloaded = context.waitForEvent('serviceworker', { predicate: (next) => next.url().startsWith(origin) });
      await worker.evaluate(() => chrome.runtime.reload()).catch(() => undefined); // the worker dies while answering
      worker = await reloaded;
      await expect.poll(() => popup.isClosed(), { timeout: 10_000 }).toBe(true);
      popup = await openPopup(context, origin, tabs[1]!);
      expect(await popup.textContent('#status')).toMatch(/^ready: 2 memories, opfs,/);
      await searchUntilHybrid(popup, 'where is staging hosted', STAGING_FIRST);
      await searchUntilHybrid(popup, 'which flowers does grandma like?', GARDEN_FIRST);

      // The offscreen document's worker fetched the model and both WASM files from the extension's own assets.
      const watched = offscreen.requests();
      if (process.env.DEBUG_EXTENSION) console.log('[cdp] offscreen requests', watched);
      const assets = watched.filter((url) => url.startsWith(`${origin}/assets/`)).map((url) => url.split('/').pop()!);
      for (const asset of [/^model_quantized-[^/]+\.onnx$/, /^ort-wasm[^/]*\.wasm$/, /^wa-sqlite-[^/]+\.wasm$/]) {
        expect(assets.some((file) => asset.test(file)), `${asset} in\n${watched.join('\n')}`).toBe(true);
      }
      const local = (url: string) => url.startsWith(`${origin}/`) || url.startsWith(`${server.url}/`) || /^(data|blob):/.test(url);
      expect([...seen, ...watched].filter((url) => !local(url))).toEqual([]);
      await offscreen.stop();
    } finally {
      await context.close();
      await server.close();
    }
    expect(browser.proxy().requests).toEqual([]);
  });

  test('private vault: unlock with a passphrase, keep a note, relaunch Chromium, WRONG_KEY, unlock again', async () => {
    const site = browser.tempDir('site');
    const profile = browser.tempDir('profile');
    const { file, title } = PAGES[1]!;
    writeFileSync(join(site, file), `<!doctype html><title>${title}</title><link rel="icon" href="data:,"><p>${title}</p>`);
    const server = await serveStatic(site);
    const extensionDir = join(app, 'dist');
    const mcWasm = emittedMcWasm(app, extensionDir).get('mc-wa-sqlite.wasm')![0]!.split('/').pop()!;
    const seen: string[] = [];
    const offscreenWorkerAssets: string[] = [];

    /** One Chromium session on the profile: the popup aimed at the site's page, the offscreen document watched. */
    const session = async (drive: (popup: Page, worker: Worker) => Promise<void>): Promise<void> => {
      const context = await launchChromium(profile, browser.proxy().port, { extensionDir });
      context.on('request', (request) => seen.push(request.url()));
      try {
        const worker = await extensionServiceWorker(context);
        const origin = `chrome-extension://${new URL(worker.url()).host}`;
        const sitePage = logPage(await context.newPage());
        await sitePage.goto(`${server.url}/${file}`);
        const offscreen = await watchOffscreenDocuments(context, sitePage, origin);
        const popup = await openPopup(context, origin, await tabIdOf(worker, sitePage.url()));
        await drive(popup, worker);
        // What the offscreen document's workers (not the document itself) fetched from the extension.
        const fromWorkers = offscreen.workerRequests();
        if (process.env.DEBUG_EXTENSION) console.log('[cdp] offscreen worker requests', fromWorkers);
        offscreenWorkerAssets.push(...fromWorkers.filter((url) => url.startsWith(`${origin}/assets/`)).map((url) => url.split('/').pop()!));
        seen.push(...offscreen.requests());
        await offscreen.stop();
      } finally {
        await context.close();
      }
    };

    try {
      await session(async (popup, worker) => {
        expect(await popup.textContent('#vault-status')).toBe('locked');
        // A plain page note beside the vault: the profile scan below must find this one, so it can find text at all.
        await popup.fill('#add input[name=note]', PAGES[1]!.note);
        await popup.click('#add button');
        await expect.poll(() => popup.textContent('#status'), { timeout: 30_000 }).toMatch(/^ready: 1 memories, opfs,/);

        expect(await unlockVault(popup, PASSPHRASE)).toBe('unlocked: 0 notes (encrypted)');
        await popup.fill('#vault-add input[name=note]', VAULT_NOTE);
        await popup.click('#vault-add button');
        // An add can wait behind the model's background load.
        await expect.poll(() => popup.textContent('#vault-status'), { timeout: 60_000 }).toBe('unlocked: 1 notes (encrypted)');
        expect(await popup.inputValue('#vault-add input[name=note]')).toBe('');
        // The page notes are a memory of their own: the vault's note is not among them.
        expect(await popup.textContent('#status')).toMatch(/^ready: 1 memories,/);

        // Nowhere for the extension to keep the passphrase: no chrome.storage, the extension origin's Web Storage
        // empty. The service worker cannot start a Worker; the vault's worker ran in the offscreen document (below).
        expect(await worker.evaluate(() => typeof chrome.storage)).toBe('undefined');
        expect(await worker.evaluate(() => typeof (globalThis as { Worker?: unknown }).Worker)).toBe('undefined');
        expect(await popup.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0);

        // Locked, the vault takes no note until unlocked again.
        await popup.click('#vault-lock');
        // Locking closes the vault's worker: on a loaded machine that takes more than expect.poll's default second.
        await expect.poll(() => popup.textContent('#vault-status'), { timeout: 15_000 }).toBe('locked');
        await popup.fill('#vault-add input[name=note]', 'written while locked');
        await popup.click('#vault-add button');
        await expect.poll(() => popup.textContent('#vault-status'), { timeout: 15_000 }).toMatch(/locked: unlock it/);
      });

      // A new Chromium on the same profile: a new service worker and offscreen document, the vault locked.
      await session(async (popup) => {
        expect(await popup.textContent('#vault-status')).toBe('locked');
        expect(await unlockVault(popup, `${PASSPHRASE}r`)).toMatch(/^WRONG_KEY: \S/);
        expect(await unlockVault(popup, PASSPHRASE)).toBe('unlocked: 1 notes (encrypted)');
        expect(await popup.textContent('#status')).toMatch(/^ready: 1 memories,/);
        // Unlocking an open vault closes it first, then opens it again; a wrong passphrase then leaves it locked.
        expect(await unlockVault(popup, PASSPHRASE)).toBe('unlocked: 1 notes (encrypted)');
        expect(await unlockVault(popup, 'not the passphrase')).toMatch(/^WRONG_KEY: \S/);
        await popup.fill('#vault-add input[name=note]', 'written after a wrong passphrase');
        await popup.click('#vault-add button');
        await expect.poll(() => popup.textContent('#vault-status'), { timeout: 15_000 }).toMatch(/locked: unlock it/);
        expect(await unlockVault(popup, PASSPHRASE)).toBe('unlocked: 1 notes (encrypted)');
      });
    } finally {
      await server.close();
    }

    // The vault's worker, in the offscreen document, loaded SQLite3 Multiple Ciphers' WASM from the extension.
    expect(offscreenWorkerAssets, offscreenWorkerAssets.join('\n')).toContain(mcWasm);
    const local = (url: string) => url.startsWith('chrome-extension://') || url.startsWith(`${server.url}/`) || /^(data|blob):/.test(url);
    expect(seen.filter((url) => !local(url))).toEqual([]);
    expect(browser.proxy().requests).toEqual([]);

    // Every file the two sessions left in the profile, as raw bytes: the vault's note and the passphrase appear in
    // none, in UTF-8 or UTF-16; the plain page note does (in the OPFS database), so the scan can see text.
    const found = (text: string) => filesContaining(profile, text);
    expect(found(PAGES[1]!.note).length).toBeGreaterThan(0);
    expect(found(VAULT_NOTE)).toEqual([]);
    expect(found(PASSPHRASE)).toEqual([]);
  });
});

const PASSPHRASE = 'correct horse battery staple';
const VAULT_NOTE = 'The spare key is under the blue flowerpot';

/** A built module and every module it imports statically, transitively: file (relative to `dir`) → its code. */
function staticImportGraph(dir: string, entry: string): Map<string, string> {
  const graph = new Map<string, string>();
  const visit = (file: string) => {
    if (graph.has(file)) return;
    const code = readFileSync(join(dir, file), 'utf8');
    graph.set(file, code);
    for (const [, specifier] of code.matchAll(/(?:\bfrom|\bimport)\s*["'`](\.{1,2}\/[^"'`]+)["'`]/g)) {
      visit(join(file, '..', specifier!));
    }
  };
  visit(entry);
  return graph;
}

/** Files under `dir` whose bytes hold `text` as UTF-8 or UTF-16 (little-endian, as V8 and Chromium store it). */
function filesContaining(dir: string, text: string): string[] {
  const needles = [Buffer.from(text, 'utf8'), Buffer.from(text, 'utf16le')];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((file) => {
    const path = join(dir, file);
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return false;
    const bytes = readFileSync(path);
    return needles.some((needle) => bytes.includes(needle));
  });
}

/** Submits the vault's passphrase and waits for the outcome; whatever it was, the field is empty again. */
async function unlockVault(popup: Page, passphrase: string): Promise<string> {
  await popup.fill('#vault input[name=passphrase]', passphrase);
  await popup.click('#vault button');
  // The popup marks the vault as opening before it sends anything, so an earlier outcome cannot be read here.
  await popup.waitForSelector('body[data-vault=open], body[data-vault=failed]', { timeout: 90_000 });
  expect(await popup.inputValue('#vault input[name=passphrase]')).toBe('');
  return (await popup.textContent('#vault-status')) ?? '';
}

/** The extension's service worker: already running, or the next one to start. */
async function extensionServiceWorker(context: BrowserContext): Promise<Worker> {
  const isExtension = (worker: Worker) => worker.url().startsWith('chrome-extension://');
  return context.serviceWorkers().find(isExtension) ?? context.waitForEvent('serviceworker', { predicate: isExtension });
}

/** The tab id Chrome gave the page at `url`, asked of the extension's service worker (it has the `tabs` permission). */
async function tabIdOf(worker: Worker, url: string): Promise<number> {
  const id = await worker.evaluate(async (wanted) => (await chrome.tabs.query({})).find((tab) => tab.url === wanted)?.id, url);
  if (id === undefined) throw new Error(`no tab shows ${url}`);
  return id;
}

async function offscreenDocuments(worker: Worker): Promise<number> {
  return worker.evaluate(async () => (await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'] })).length);
}

/** The popup in a tab of its own, aimed at the page in tab `tabId` (popup.html?tab=<id>), once it answered. */
async function openPopup(context: BrowserContext, origin: string, tabId: number): Promise<Page> {
  const popup = logPage(await context.newPage());
  await popup.goto(`${origin}/popup.html?tab=${tabId}`);
  await popup.waitForSelector('body[data-state]', { timeout: 60_000 });
  expect(await popup.getAttribute('body', 'data-state'), (await popup.textContent('#status')) ?? '').toBe('ready');
  return popup;
}

/** The built-in model loads in the background: search again until the answer is hybrid, then check the first hit. */
async function searchUntilHybrid(popup: Page, query: string, first: RegExp): Promise<void> {
  await popup.fill('#search input[name=query]', query);
  await expect
    .poll(
      async () => {
        const before = Number((await popup.getAttribute('body', 'data-searches')) ?? 0);
        await popup.click('#search button');
        const answered = await popup
          .waitForFunction((count) => Number(document.body.dataset.searches ?? 0) > count, before, { timeout: 10_000 })
          .then(() => true, () => false);
        return answered ? popup.textContent('#mode') : `no answer: ${await popup.textContent('#status')}`;
      },
      { timeout: 90_000, interval: 500 },
    )
    .toBe('hybrid');
  expect(await popup.textContent('#hits li:first-child')).toMatch(first);
}

interface CdpMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
}

/**
 * Watches the extension's offscreen documents and their workers over CDP, since Playwright shows neither as a page.
 * A page's CDP session may attach only in CDP's non-flat mode, and only to targets that exist, so it attaches to each
 * new document-like target as soon as it is announced (a new offscreen document is first announced as type `other`
 * with no URL) and holds each worker that document starts until the worker's network is watched. Records their
 * requests (the document's own, or its workers') and prints their console errors and warnings (all of it with
 * DEBUG_EXTENSION=1).
 */
async function watchOffscreenDocuments(
  context: BrowserContext,
  anyPage: Page,
  origin: string,
): Promise<{ requests(): string[]; workerRequests(): string[]; stop(): Promise<void> }> {
  const cdp: CDPSession = await context.newCDPSession(anyPage);
  const offscreenUrl = `${origin}/offscreen.html`;
  const targetUrls = new Map<string, string>(); // target id → its URL, once known
  const targetOfSession = new Map<string, string>(); // top-level session id → target id
  const requests: { session: string; url: string; fromWorker: boolean }[] = [];
  const isOffscreen = (session: string) => targetUrls.get(targetOfSession.get(session) ?? '')?.startsWith(offscreenUrl) ?? false;
  const debug = Boolean(process.env.DEBUG_EXTENSION);
  let nextId = 0;

  /** Sends a command along a path of non-flat sessions: the document's, then a worker's within it. */
  const send = (path: string[], method: string, params: object = {}): Promise<unknown> => {
    let message = JSON.stringify({ id: ++nextId, method, params });
    for (const sessionId of path.slice(1).reverse()) {
      message = JSON.stringify({ id: ++nextId, method: 'Target.sendMessageToTarget', params: { sessionId, message } });
    }
    return cdp.send('Target.sendMessageToTarget', { sessionId: path[0]!, message }).catch(() => undefined);
  };
  const watch = async (path: string[]) => {
    await send(path, 'Network.enable');
    await send(path, 'Runtime.enable');
    await send(path, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false });
    await send(path, 'Runtime.runIfWaitingForDebugger');
  };
  const onMessage = (path: string[], label: string, message: CdpMessage): void => {
    const params = message.params ?? {};
    switch (message.method) {
      case 'Target.receivedMessageFromTarget':
        return onMessage([...path, params['sessionId'] as string], `${label} > worker`, JSON.parse(params['message'] as string) as CdpMessage);
      case 'Target.attachedToTarget': {
        const child = [...path, params['sessionId'] as string];
        // Its own workers are watched; anything else it reports (the extension's service worker) is let go.
        const isWorker = (params['targetInfo'] as { type: string }).type === 'worker';
        void (isWorker ? watch(child) : send(child, 'Runtime.runIfWaitingForDebugger'));
        return;
      }
      case 'Network.requestWillBeSent':
        requests.push({ session: path[0]!, url: (params['request'] as { url: string }).url, fromWorker: path.length > 1 });
        return;
      case 'Runtime.consoleAPICalled': {
        if (!debug && params['type'] !== 'error' && params['type'] !== 'warning') return;
        const args = (params['args'] as { value?: unknown; description?: string }[]).map((arg) => arg.description ?? String(arg.value));
        console.error(`[${label} console.${params['type']}]`, ...args);
        return;
      }
      case 'Runtime.exceptionThrown':
        console.error(`[${label} exception]`, JSON.stringify(params['exceptionDetails']));
    }
  };

  cdp.on('Target.receivedMessageFromTarget', (event) => {
    if (!targetOfSession.has(event.sessionId)) return;
    const label = targetUrls.get(targetOfSession.get(event.sessionId)!) || 'new target';
    onMessage([event.sessionId], label, JSON.parse(event.message) as CdpMessage);
  });
  cdp.on('Target.targetInfoChanged', ({ targetInfo }) => {
    if (targetUrls.has(targetInfo.targetId)) targetUrls.set(targetInfo.targetId, targetInfo.url);
  });
  cdp.on('Target.targetCreated', ({ targetInfo: { type, url, targetId } }) => {
    const maybeOffscreen = (type === 'other' && url === '') || (type === 'background_page' && url.startsWith(offscreenUrl));
    if (!maybeOffscreen) return;
    targetUrls.set(targetId, url);
    void cdp.send('Target.attachToTarget', { targetId, flatten: false }).then(
      ({ sessionId }) => {
        targetOfSession.set(sessionId, targetId);
        if (debug) console.log('[cdp] watching', type, url || '(no URL yet)');
        return watch([sessionId]);
      },
      () => undefined, // gone before we got to it
    );
  });
  await cdp.send('Target.setDiscoverTargets', { discover: true });
  return {
    requests: () => requests.filter(({ session }) => isOffscreen(session)).map(({ url }) => url),
    workerRequests: () => requests.filter(({ session, fromWorker }) => fromWorker && isOffscreen(session)).map(({ url }) => url),
    stop: () => cdp.detach().catch(() => undefined),
  };
}
