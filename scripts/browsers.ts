/**
 * Where the test browsers are, found one way for the preflight (scripts/ensure-browsers.ts), the Chromium harness
 * (test/browser/harness.ts) and the engine launcher (test/browser/engines.ts).
 *
 * Each path can be forced with its environment variable (CHROMIUM_PATH, FIREFOX_PATH, WEBKIT_DRIVER,
 * MINIBROWSER_PATH, XVFB_RUN); otherwise the usual Debian places, then PATH, then (Chromium only) Playwright's
 * downloaded build. ENGRAM_ENGINES=chromium,firefox,webkit (default all) picks the engines the cross-engine tests run.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

export type EngineName = 'chromium' | 'firefox' | 'webkit';
export const ENGINES: readonly EngineName[] = ['chromium', 'firefox', 'webkit'];

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

function first(candidates: (string | null | undefined)[]): string | null {
  return candidates.find((path): path is string => !!path && existsSync(path)) ?? null;
}

function playwrightChromium(): string | null {
  try {
    const { chromium } = createRequire(import.meta.url)('playwright-core') as typeof import('playwright-core');
    return chromium.executablePath();
  } catch {
    return null;
  }
}

/** MiniBrowser sits beside WebKitGTK's library, under a multiarch folder on Debian and in libexec elsewhere. */
function miniBrowser(): string | null {
  const roots = ['/usr/lib', '/usr/libexec', '/usr/lib64'];
  const found: string[] = [];
  for (const root of roots) {
    if (!existsSync(root)) continue;
    for (const entry of readdirSync(root)) {
      for (const api of ['webkit2gtk-4.1', 'webkit2gtk-4.0', 'webkitgtk-6.0']) {
        found.push(join(root, entry, api, 'MiniBrowser'), join(root, api, 'MiniBrowser'));
      }
    }
  }
  return first(found);
}

export interface BrowserPaths {
  chromium: string | null;
  firefox: string | null;
  webkitDriver: string | null;
  miniBrowser: string | null;
  xvfbRun: string | null;
}

/** A forced path (a bare name is looked up on PATH); null when it is not there, so the preflight says so. */
function forced(value: string): string | null {
  return value.includes('/') ? first([value]) : onPath(value);
}

export function findBrowsers(): BrowserPaths {
  const env = process.env;
  const pick = (variable: string | undefined, search: () => string | null) => (variable ? forced(variable) : search());
  return {
    chromium: pick(env.CHROMIUM_PATH, () => first(['/usr/bin/chromium', '/usr/bin/chromium-browser', onPath('chromium'), playwrightChromium()])),
    firefox: pick(env.FIREFOX_PATH, () => first(['/usr/bin/firefox-esr', onPath('firefox-esr'), onPath('firefox')])),
    webkitDriver: pick(env.WEBKIT_DRIVER, () => onPath('WebKitWebDriver')),
    miniBrowser: pick(env.MINIBROWSER_PATH, miniBrowser),
    xvfbRun: pick(env.XVFB_RUN, () => onPath('xvfb-run')),
  };
}

/** The engines ENGRAM_ENGINES names (default all three), in the usual order. */
export function selectedEngines(): EngineName[] {
  const asked = process.env.ENGRAM_ENGINES?.split(',').map((name) => name.trim()).filter(Boolean);
  if (!asked || asked.length === 0) return [...ENGINES];
  const unknown = asked.filter((name) => !ENGINES.includes(name as EngineName));
  if (unknown.length > 0) throw new Error(`ENGRAM_ENGINES: unknown engine ${unknown.join(', ')} (known: ${ENGINES.join(', ')})`);
  return ENGINES.filter((engine) => asked.includes(engine));
}

export interface Missing {
  engine: EngineName;
  /** What is missing, for a person. */
  what: string;
  /** The Debian packages that bring it. */
  apt: string[];
}

/** What each engine lacks on this machine. Chromium is always needed: the browser and consumer suites run in it. */
export function missingBrowsers(engines: readonly EngineName[] = selectedEngines(), paths: BrowserPaths = findBrowsers()): Missing[] {
  const missing: Missing[] = [];
  const want = new Set<EngineName>(['chromium', ...engines]);
  if (want.has('chromium') && !paths.chromium) missing.push({ engine: 'chromium', what: 'Chromium (or CHROMIUM_PATH)', apt: ['chromium'] });
  if (want.has('firefox') && !paths.firefox) missing.push({ engine: 'firefox', what: 'Firefox (or FIREFOX_PATH)', apt: ['firefox-esr'] });
  if (want.has('webkit')) {
    if (!paths.webkitDriver) missing.push({ engine: 'webkit', what: 'WebKitWebDriver', apt: ['webkit2gtk-driver'] });
    else if (!paths.miniBrowser) missing.push({ engine: 'webkit', what: 'WebKitGTK MiniBrowser (or MINIBROWSER_PATH)', apt: ['libwebkit2gtk-4.1-0'] });
    if (!paths.xvfbRun) missing.push({ engine: 'webkit', what: 'xvfb-run', apt: ['xvfb', 'xauth'] });
  }
  return missing;
}

/** The paths of an engine, or an error naming what to install. */
export function requireBrowser<K extends keyof BrowserPaths>(key: K): string {
  const path = findBrowsers()[key];
  if (!path) throw new Error(`no ${key} found: run \`npm run ensure-browsers\` (or set its path variable, see scripts/browsers.ts)`);
  return path;
}
