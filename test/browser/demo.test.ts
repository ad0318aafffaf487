/**
 * The demo page driven as a user would, in real Chromium with a persistent profile (real OPFS): load the
 * sample, search, move the decay and weight sliders and see the order change, pin a hit and see it rise,
 * reload and find the data still there. Screenshots land in test-results/ as artifacts.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { defaultState, toSearchOptions } from '../../demo/controls.js';
import { defaultSearchOptions } from '../../src/search/options.js';
import { baseURL, launchPersistent, recordRequests, tempProfileDir } from './harness.js';
import { settled } from './pages/demo-page.js';

const SHOTS = 'test-results';
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let profile: ReturnType<typeof tempProfileDir>;
let context: BrowserContext;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  profile = tempProfileDir();
  context = await launchPersistent(profile.dir);
});

afterAll(async () => {
  await context?.close();
  profile?.dispose();
});

interface ShownHit {
  id: string;
  score: number;
  delta: string;
  pinned: boolean;
}

async function shownHits(page: Page): Promise<ShownHit[]> {
  return page.$$eval('#hits li.hit', (items) =>
    items.map((item) => ({
      id: (item as HTMLElement).dataset.id ?? '',
      score: Number(item.querySelector('.explain dd')?.textContent),
      delta: item.querySelector('.delta')?.textContent ?? '',
      pinned: item.querySelector('.badge.pinned') !== null,
    })),
  );
}


const ids = (hits: ShownHit[]) => hits.map((hit) => hit.id);

async function openDemo(page: Page): Promise<void> {
  page.on('dialog', (dialog) => void dialog.accept());
  page.on('pageerror', (error) => console.error('[demo page error]', error.message));
  // A file changed under the dev server makes Vite reload the page: worth seeing when a step fails oddly.
  page.on('framenavigated', (frame) => frame === page.mainFrame() && console.log('[demo page loaded]', frame.url()));
  await page.goto(`${baseURL()}/demo/`);
}

test('every search option has a control, and the controls start at the library defaults', () => {
  const fromControls = toSearchOptions(defaultState());
  // boost is an in-process hook (it cannot cross the worker); now is "today"; touch is off in the demo (docs/demo.md).
  const { boost: _boost, now: _now, touch: _touch, ...defaults } = defaultSearchOptions;
  expect(Object.keys(fromControls).sort()).toEqual(Object.keys(defaultSearchOptions).filter((key) => key !== 'boost').sort());
  const { now: _shownNow, touch: _shownTouch, ...shown } = fromControls;
  expect(shown).toEqual(defaults);
});

test('a user loads the sample, tunes the ranking, pins a hit, and finds it all after a reload', async () => {
  const page = await context.newPage();
  await page.setViewportSize(DESKTOP);
  const requests = recordRequests(page);
  await openDemo(page);
  await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toMatch(/^\d+ memor/);

  // Load the sample with one click; the store (OPFS) and the built-in model are the real ones.
  await page.click('#load-sample');
  await expect.poll(() => page.textContent('#status-count'), { timeout: 120_000 }).toMatch(/^2\d\d memories/);
  await expect.poll(() => page.textContent('#status-storage')).toMatch(/opfs|idb/);
  await expect.poll(() => page.textContent('#status-model-label'), { timeout: 120_000 }).toMatch(/^model: engram-/);

  // Search from the keyboard: "/" focuses the query box.
  let generation = await page.$eval('#hits', (el) => Number((el as HTMLElement).dataset.generation ?? 0));
  await page.keyboard.press('/');
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('query');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('timezone bug');
  // The vector leg joins once the model has embedded the sample; the page re-ranks by itself when it does.
  await expect.poll(() => page.textContent('#results-summary'), { timeout: 120_000 }).toContain('hybrid');
  generation = await settled(page, generation);
  const base = await shownHits(page);
  expect(base.length).toBe(5);
  expect(await page.locator('#hits mark').count()).toBeGreaterThan(0);
  expect(await page.locator('#trace tbody tr').count()).toBeGreaterThanOrEqual(7);
  expect(await page.textContent('#context-meter')).toMatch(/\d+ of 2000 tokens/);
  await page.screenshot({ path: `${SHOTS}/demo-1280x800.png` });
  // The inspect pane leads with what Engram is for: how the search ranked, then what it hands a model.
  expect(await page.$$eval('aside.inspect > section', (sections) => sections.map((el) => el.id || el.getAttribute('aria-labelledby')))).toEqual(['trace-heading', 'context-heading', 'conversation', 'replay']);
  // No stale badge: the sample's memories were never retrieved, and the demo's searches record no access (touch off).
  expect(await page.locator('#hits .badge.cold').count()).toBe(0);

  // A one-day half-life with a raw curve (α = 1), on every memory (the sample's notes are one-offs, which decay
  // leaves alone by default): recent memories take over.
  await page.selectOption('#opt-decayScope', 'all');
  await page.locator('#opt-halfLifeDays').focus();
  await page.keyboard.press('Home');
  await page.locator('#opt-decayAlpha').fill('1');
  generation = await settled(page, generation);
  const decayed = await shownHits(page);
  expect(ids(decayed)).not.toEqual(ids(base));
  expect(decayed.some((hit) => /^[↑↓]\d+$|^new$/.test(hit.delta))).toBe(true);
  await page.screenshot({ path: `${SHOTS}/demo-decay-changed.png` });

  // Back to the defaults, then silence the lexical leg: the vector leg alone decides the order.
  await page.click('#reset-options');
  generation = await settled(page, generation);
  expect(ids(await shownHits(page))).toEqual(ids(base));
  await page.locator('#opt-weightLexical').focus();
  await page.keyboard.press('Home');
  generation = await settled(page, generation);
  expect(ids(await shownHits(page))).not.toEqual(ids(base));
  await page.click('#reset-options');
  generation = await settled(page, generation);

  // Turn the pinned boost up to its maximum (nothing moves: no hit is pinned yet), then pin a hit whose
  // score × that boost beats the one above it, and watch it rise.
  await page.locator('#opt-pinnedBoost').focus();
  await page.keyboard.press('End');
  generation = await settled(page, generation);
  const pinnedBoost = Number(await page.inputValue('#opt-pinnedBoost'));
  const hits = await shownHits(page);
  const rank = hits.findIndex((hit, i) => i > 0 && !hit.pinned && hit.score * pinnedBoost > (hits[i - 1]?.score ?? Infinity));
  expect(rank, `no hit close enough to the one above it: ${JSON.stringify(hits)}`).toBeGreaterThan(0);
  const target = hits[rank]!.id;
  await page.locator(`#hits li.hit[data-id="${target}"] button.pin`).click();
  generation = await settled(page, generation);
  const afterPin = await shownHits(page);
  const newRank = afterPin.findIndex((hit) => hit.id === target);
  expect(newRank).toBeGreaterThanOrEqual(0);
  expect(newRank).toBeLessThan(rank);
  expect(afterPin[newRank]).toMatchObject({ pinned: true, delta: `↑${rank - newRank}` });
  await page.screenshot({ path: `${SHOTS}/demo-pinned.png` });

  // Reload: the memories (and the pin) come back from OPFS, and the query from the saved settings.
  await page.reload();
  await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toMatch(/^2\d\d memories/);
  await expect.poll(() => page.textContent('#results-summary'), { timeout: 120_000 }).toContain('hybrid');
  await settled(page, 0);
  const reloaded = await shownHits(page);
  expect(await page.inputValue('#query')).toBe('timezone bug');
  expect(reloaded.find((hit) => hit.id === target)?.pinned).toBe(true);

  // Nothing left the page's origin: no CDN, no model hub.
  expect(requests.foreign()).toEqual([]);
  await page.close();
});

test('the page is readable at phone width, with no sideways scrolling', async () => {
  const page = await context.newPage();
  await page.setViewportSize(PHONE);
  await openDemo(page);
  await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toMatch(/^2\d\d memories/);
  await settled(page, 0);
  expect(await page.locator('#hits li.hit').count()).toBeGreaterThan(0);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  // The options start folded away on a phone and open from the keyboard.
  expect(await page.$eval('#options-panel', (el) => (el as HTMLDetailsElement).open)).toBe(false);
  await page.locator('#options-panel > summary').focus();
  await page.keyboard.press('Enter');
  expect(await page.$eval('#options-panel', (el) => (el as HTMLDetailsElement).open)).toBe(true);
  await page.locator('#options-panel > summary').press('Enter');
  await page.screenshot({ path: `${SHOTS}/demo-phone.png`, fullPage: true });
  await page.close();
});
