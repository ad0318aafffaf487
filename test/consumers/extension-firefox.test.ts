/**
 * examples/extension in Firefox ESR (MV3): the same build as extension.test.ts, installed through WebDriver BiDi
 * (`webExtension.install`, puppeteer's `installExtension`). In Firefox the manifest's `background.scripts` run as an
 * event page, which starts the Engram worker itself: no service worker, no offscreen document.
 *
 * Firefox's BiDi does not expose extension pages (Bug 1755014: they are left out of the browsing context tree and
 * cannot be navigated to or scripted). So the test starts Firefox with `--remote-allow-system-access`, evaluates in
 * the browser window's chrome scope through BiDi, opens the popup there in a tab of its own, and drives its DOM with
 * a frame script, a privileged script loaded into that tab's content process.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Browser } from 'puppeteer-core';
import { enginesToRun } from '../engines/support.js';
import { requireBrowser } from '../../scripts/browsers.js';
import { builtExample, consumerBrowser, serveStatic } from './harness.js';

const browser = consumerBrowser();
let app: string;

const run = enginesToRun(['firefox']).length > 0;
if (!run) test.skip('firefox not selected (ENGRAM_ENGINES)', () => {});

/** The manifest's gecko id; the profile maps it to this moz-extension:// host (Firefox picks a random one otherwise). */
const ADDON_ID = 'page-notes@engram.example';
const UUID = '5f0c8a52-3b7e-4d21-9a6f-0e4c2b1d7a93';
const ORIGIN = `moz-extension://${UUID}`;

const PAGE = { file: 'garden.html', title: "Grandma's garden", note: 'She likes tulips and orchids best' };
const PASSPHRASE = 'correct horse battery staple';

describe.runIf(run)('MV3 extension in Firefox (event page) from the packed tarball', () => {
  beforeAll(async () => {
    // The build extension.test.ts checks, run once for both files (harness.ts).
    app = await builtExample('extension');
  });

  test('one manifest for both: Firefox reads background.scripts and its gecko id', () => {
    const dist = join(app, 'dist');
    const manifest = JSON.parse(readFileSync(join(dist, 'manifest.json'), 'utf8'));
    expect(manifest.background).toEqual({ service_worker: 'background.js', scripts: ['event-page.js'], type: 'module' });
    expect(manifest.browser_specific_settings.gecko.id).toBe(ADDON_ID);
    expect(manifest.content_security_policy.extension_pages).toContain("'wasm-unsafe-eval'");
    expect(existsSync(join(dist, 'event-page.js'))).toBe(true);
  });

  test('installed over BiDi: add, hybrid search, vault WRONG_KEY, extension reloaded, notes still there', async () => {
    const site = browser.tempDir('site');
    writeFileSync(join(site, PAGE.file), `<!doctype html><title>${PAGE.title}</title><link rel="icon" href="data:,"><p>${PAGE.title}</p>`);
    const server = await serveStatic(site);
    const profile = browser.tempDir('firefox-profile');
    const firefox = await launchFirefox(profile, browser.proxy().port);
    try {
      expect(await firefox.installExtension(join(app, 'dist'))).toBe(ADDON_ID);
      const chrome = await chromeScope(firefox);

      const sitePage = await firefox.newPage();
      await sitePage.goto(`${server.url}/${PAGE.file}`);
      let popup = await chrome.openPopup();
      const tab = await popup.run<number>(`
        const tabs = await content.wrappedJSObject.chrome.tabs.query({});
        return Array.from(tabs).find((tab) => tab.url === ${JSON.stringify(sitePage.url())})?.id;`);
      await popup.close();

      popup = await chrome.openPopup(`?tab=${tab}`);
      expect(await popup.text('#page')).toBe(PAGE.title);
      // The event page's worker opened SQLite on OPFS: the popup's status comes from it.
      expect(await popup.text('#status')).toMatch(/^ready: 0 memories, opfs,/);
      await popup.run(`
        document.querySelector('#add input[name=note]').value = ${JSON.stringify(PAGE.note)};
        document.querySelector('#add').requestSubmit();`);
      await popup.waitFor(`/^ready: 1 memories, opfs,/.test(text('#status'))`, 30_000);
      expect(await searchUntilHybrid(popup, 'which flowers does grandma like?')).toMatch(/^Grandma's garden: She likes tulips/);
      expect(await popup.text('#status')).toMatch(/model engram-glove-100d@q8\/wasm$/);

      // The vault: a second, encrypted memory in the same worker host; a wrong passphrase is WRONG_KEY.
      expect(await popup.text('#vault-status')).toBe('locked');
      expect(await unlockVault(popup, PASSPHRASE)).toBe('unlocked: 0 notes (encrypted)');
      await popup.run(`
        document.querySelector('#vault-add input[name=note]').value = 'The spare key is under the blue flowerpot';
        document.querySelector('#vault-add').requestSubmit();`);
      await popup.waitFor(`text('#vault-status') === 'unlocked: 1 notes (encrypted)'`, 60_000);
      expect(await unlockVault(popup, 'not the passphrase')).toMatch(/^WRONG_KEY: \S/);
      expect(await unlockVault(popup, PASSPHRASE)).toBe('unlocked: 1 notes (encrypted)');

      // Reload the extension: a new event page and worker, the popup closed with it. OPFS stays.
      await popup.run(`setTimeout(() => content.wrappedJSObject.chrome.runtime.reload(), 100);`);
      await popup.closed();
      popup = await chrome.openPopup(`?tab=${tab}`);
      expect(await popup.text('#status')).toMatch(/^ready: 1 memories, opfs,/);
      expect(await popup.text('#vault-status')).toBe('locked');
      expect(await searchUntilHybrid(popup, 'which flowers does grandma like?')).toMatch(/^Grandma's garden: She likes tulips/);
      expect(await unlockVault(popup, PASSPHRASE)).toBe('unlocked: 1 notes (encrypted)');
      await popup.close();
    } finally {
      await firefox.close();
      await server.close();
    }
    // The extension's origin holds its storage in the profile, under the fixed moz-extension host.
    expect(readdirSync(join(profile, 'storage/default'))).toContain(`moz-extension+++${UUID}`);
    expect(browser.proxy().requests.filter((line) => !MOZILLA_SERVICES.test(line))).toEqual([]);
  });
});

/** Firefox's own services (add-on blocklist, remote settings) that the profile's prefs may still let call home. */
const MOZILLA_SERVICES = /^(?:CONNECT |[A-Z]+ https?:\/\/)(?:[a-z0-9-]+\.)*(?:mozilla\.(?:com|net|org)|firefox\.com)[:/]/;

async function launchFirefox(profile: string, proxyPort: number): Promise<Browser> {
  const puppeteer = (await import('puppeteer-core')).default;
  return puppeteer.launch({
    browser: 'firefox',
    executablePath: requireBrowser('firefox'),
    headless: true,
    userDataDir: profile,
    // Lets BiDi evaluate in the browser window (chrome scope): the only way in to an extension page (see above).
    args: ['--remote-allow-system-access'],
    extraPrefsFirefox: {
      'extensions.webextensions.uuids': JSON.stringify({ [ADDON_ID]: UUID }),
      // The frame script below compiles the bodies the test sends; Firefox forbids that to privileged code by default.
      'security.allow_eval_with_system_principal': true,
      // Every request for a host other than loopback goes to the recording proxy.
      'network.proxy.type': 1,
      'network.proxy.http': '127.0.0.1',
      'network.proxy.http_port': proxyPort,
      'network.proxy.ssl': '127.0.0.1',
      'network.proxy.ssl_port': proxyPort,
    },
  });
}

interface Popup {
  /** Runs `body` (an async function body) in the popup's tab, with `content`, `document` and `text(selector)`. */
  run<T = unknown>(body: string): Promise<T>;
  text(selector: string): Promise<string>;
  waitFor(condition: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
  /** Resolves once the tab is gone (the extension closed it). */
  closed(timeoutMs?: number): Promise<void>;
}

/**
 * BiDi's script.evaluate in the browser window. `openPopup` opens popup.html in a new tab and loads a frame script
 * into it that runs the bodies `run` sends (privileged code, through Xray wrappers; `content.wrappedJSObject` is
 * the page's own window, for its `chrome.*`).
 */
async function chromeScope(firefox: Browser): Promise<{ openPopup(query?: string): Promise<Popup> }> {
  const connection = (firefox as unknown as { connection: { send(method: string, params: object): Promise<{ result: any }> } }).connection;
  const { result: tree } = await connection.send('browsingContext.getTree', { 'moz:scope': 'chrome' });
  const context = tree.contexts[0].context as string;
  const evaluate = async <T>(expression: string): Promise<T> => {
    const { result } = await connection.send('script.evaluate', { expression, target: { context }, awaitPromise: true, resultOwnership: 'none' });
    if (result.type === 'exception') throw new Error(`chrome scope: ${result.exceptionDetails.text}`);
    const reply = JSON.parse(result.result.value as string) as { ok: true; value: T } | { ok: false; error: string };
    if (!reply.ok) throw new Error(reply.error);
    return reply.value;
  };
  const wrap = (body: string) => `(async () => {
    try { return JSON.stringify({ ok: true, value: (await (async () => { ${body} })()) ?? null }); }
    catch (error) { return JSON.stringify({ ok: false, error: String(error?.message ?? error) }); }
  })()`;
  let opened = 0;
  return {
    openPopup: async (query = '') => {
      const key = `engramPopup${++opened}`;
      await evaluate(wrap(`
        // After a reload the popup's URL loads only once the add-on is active again.
        for (let i = 0; !WebExtensionPolicy.getByID(${JSON.stringify(ADDON_ID)})?.active; i++) {
          if (i === 300) throw new Error('the add-on is not active');
          await new Promise((r) => setTimeout(r, 100));
        }
        const tab = gBrowser.addTab(${JSON.stringify(`${ORIGIN}/popup.html${query}`)}, { triggeringPrincipal: Services.scriptSecurityManager.getSystemPrincipal() });
        gBrowser.selectedTab = tab;
        const browser = tab.linkedBrowser;
        const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
        // The tab starts on about:blank in a web content process and moves to the extension's process, with a new
        // message manager: load the frame script until it reports the popup's URL, then talk to that one.
        for (let attempt = 0; ; attempt++) {
          if (attempt === 300) throw new Error('the frame script never reached the popup');
          const manager = browser.messageManager;
          const where = new Promise((resolve) => {
            const listener = ({ data }) => { manager.removeMessageListener('engram:loaded', listener); resolve(data); };
            manager.addMessageListener('engram:loaded', listener);
          });
          if (browser.currentURI?.spec.startsWith(${JSON.stringify(ORIGIN)})) {
            manager.loadFrameScript('data:,' + encodeURIComponent(${JSON.stringify(FRAME_SCRIPT)}), false);
            if (String(await Promise.race([where, sleep(1000)])).startsWith(${JSON.stringify(ORIGIN)})) break;
          }
          // A load that raced the add-on's restart: load the popup again.
          if (attempt % 25 === 24) browser.reload();
          await sleep(200);
        }
        const manager = browser.messageManager;
        let next = 0;
        const pending = new Map();
        manager.addMessageListener('engram:done', ({ data }) => pending.get(data.id)?.(data));
        window[${JSON.stringify(key)}] = {
          tab,
          run: (body) => new Promise((resolve) => {
            const id = ++next;
            pending.set(id, resolve);
            manager.sendAsyncMessage('engram:run', { id, body });
          }),
        };`));
      const popup: Popup = {
        run: async <T>(body: string) => {
          const reply = await evaluate<{ ok: boolean; value?: string; error?: string }>(wrap(`return window[${JSON.stringify(key)}].run(${JSON.stringify(body)});`));
          if (!reply.ok) throw new Error(`popup: ${reply.error}`);
          return JSON.parse(reply.value ?? 'null') as T;
        },
        text: (selector) => popup.run<string>(`return text(${JSON.stringify(selector)});`),
        waitFor: async (condition, timeoutMs = 30_000) => {
          const ok = await popup.run<boolean>(`
            const end = Date.now() + ${timeoutMs};
            while (Date.now() < end) { if (${condition}) return true; await new Promise((r) => setTimeout(r, 100)); }
            return false;`);
          if (!ok) throw new Error(`popup: ${condition} did not hold within ${timeoutMs} ms; status: ${await popup.text('#status')}`);
        },
        close: async () => {
          await evaluate(wrap(`gBrowser.removeTab(window[${JSON.stringify(key)}].tab);`));
        },
        closed: async (timeoutMs = 30_000) => {
          await evaluate(wrap(`
            const { tab } = window[${JSON.stringify(key)}];
            for (const end = Date.now() + ${timeoutMs}; gBrowser.tabs.includes(tab); ) {
              if (Date.now() > end) throw new Error('the popup tab stayed open');
              await new Promise((r) => setTimeout(r, 100));
            }`));
        },
      };
      await popup.waitFor(`document.body?.hasAttribute('data-state')`, 60_000);
      expect(await popup.run(`return document.body.getAttribute('data-state');`), await popup.text('#status')).toBe('ready');
      return popup;
    },
  };
}

/** Runs in the popup's content process with chrome privileges; `content` is the popup's window (Xray-wrapped). */
const FRAME_SCRIPT = `
  sendAsyncMessage('engram:loaded', String(content.location));
  addMessageListener('engram:run', async ({ data: { id, body } }) => {
    const document = content.document;
    const text = (selector) => document.querySelector(selector)?.textContent ?? '';
    try {
      // A frame script has no timers of its own: the bodies use the popup's.
      const setTimeout = (run, ms) => content.setTimeout(run, ms);
      const value = await new Function('content', 'document', 'text', 'setTimeout', 'return (async () => {' + body + '})();')(content, document, text, setTimeout);
      sendAsyncMessage('engram:done', { id, ok: true, value: JSON.stringify(value ?? null) });
    } catch (error) {
      sendAsyncMessage('engram:done', { id, ok: false, error: String(error?.message ?? error) });
    }
  });
`;

/** The built-in model loads in the background: search again until the answer is hybrid; the first hit's text. */
async function searchUntilHybrid(popup: Popup, query: string): Promise<string> {
  return popup.run<string>(`
    const form = document.querySelector('#search');
    form.querySelector('input[name=query]').value = ${JSON.stringify(query)};
    for (let i = 0; i < 180; i++) {
      const before = Number(document.body.getAttribute('data-searches') ?? 0);
      form.requestSubmit();
      for (let j = 0; j < 100 && Number(document.body.getAttribute('data-searches') ?? 0) === before; j++) await new Promise((r) => setTimeout(r, 100));
      if (text('#mode') === 'hybrid') return text('#hits li:first-child');
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error('no hybrid search: ' + text('#mode') + ' / ' + text('#status'));`);
}

/** Submits the vault's passphrase and waits for the outcome (the popup marks it opening before it sends). */
async function unlockVault(popup: Popup, passphrase: string): Promise<string> {
  await popup.run(`
    document.querySelector('#vault input[name=passphrase]').value = ${JSON.stringify(passphrase)};
    document.querySelector('#vault').requestSubmit();`);
  await popup.waitFor(`['open', 'failed'].includes(document.body.getAttribute('data-vault'))`, 90_000);
  expect(await popup.run(`return document.querySelector('#vault input[name=passphrase]').value;`)).toBe('');
  return popup.text('#vault-status');
}
