/**
 * examples/extension: an MV3 Chrome extension built with plain Vite. The popup asks the service worker, which keeps
 * an offscreen document that holds the Engram worker. Driven in Debian Chromium with the extension loaded unpacked.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, CDPSession, Page, Worker } from 'playwright-core';
import { consumerBrowser, installExample, launchChromium, logPage, serveStatic, sh } from './harness.js';

/** The few extension APIs the test calls inside the service worker (the repository has no @types/chrome). */
declare const chrome: {
  runtime: { reload(): void; getContexts(filter: { contextTypes: string[] }): Promise<unknown[]> };
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
    await sh('npm', ['run', 'build'], app);
    const dist = join(app, 'dist');
    for (const file of ['manifest.json', 'background.js', 'popup.html', 'offscreen.html']) {
      expect(existsSync(join(dist, file)), file).toBe(true);
    }
    const manifest = JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8'));
    expect(manifest.manifest_version).toBe(3);
    expect(manifest.permissions).toEqual(expect.arrayContaining(['offscreen', 'unlimitedStorage']));
    expect(manifest.content_security_policy.extension_pages).toContain("'wasm-unsafe-eval'");
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
});

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
 * requests and prints their console errors and warnings (all of it with DEBUG_EXTENSION=1).
 */
async function watchOffscreenDocuments(
  context: BrowserContext,
  anyPage: Page,
  origin: string,
): Promise<{ requests(): string[]; stop(): Promise<void> }> {
  const cdp: CDPSession = await context.newCDPSession(anyPage);
  const offscreenUrl = `${origin}/offscreen.html`;
  const targetUrls = new Map<string, string>(); // target id → its URL, once known
  const targetOfSession = new Map<string, string>(); // top-level session id → target id
  const requests: { session: string; url: string }[] = [];
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
        requests.push({ session: path[0]!, url: (params['request'] as { url: string }).url });
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
    stop: () => cdp.detach().catch(() => undefined),
  };
}
