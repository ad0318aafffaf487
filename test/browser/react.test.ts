/** engram/react in real Chromium: React 19, @testing-library/react's renderHook, real Memories (test/browser/pages/react-lab.ts). */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openBlankPage } from './harness.js';

let browser: Browser;
let page: Page;
beforeAll(async () => {
  browser = await launchBrowser();
  page = await openBlankPage(browser, '/test/browser/pages/react-lab.html');
  await page.waitForFunction(() => window.reactLab !== undefined, undefined, { timeout: 120_000 });
});
afterAll(async () => {
  await browser?.close();
});

describe('useMemory', () => {
  test('opens one Memory per name, shared across components and an immediate remount, closed after the last unmount', async () => {
    expect(await page.evaluate(() => window.reactLab.useMemoryShares())).toEqual({
      statuses: ['opening', 'open'],
      shared: true,
      sameAfterRerender: true,
      found: 1,
      openAfterOneUnmount: true,
      remountShares: true,
      afterAll: 'CLOSED',
      workers: 1,
    });
  });

  test("a failed open is status 'error' with createMemory's own coded error, and is not kept for the next mount", async () => {
    const failed = await page.evaluate(() => window.reactLab.useMemoryFails());
    expect(failed).toEqual({ status: 'error', memory: null, code: failed.direct, direct: 'STORE_FAILED', isEngramError: true, retried: 'open' });
  });
});

describe('useSearch', () => {
  test('searches once the query is still for the debounce, and a blank query clears the result', async () => {
    expect(await page.evaluate(() => window.reactLab.useSearchDebounces())).toEqual({
      loadingWhileTyping: true,
      queries: ['tulips'],
      hits: [expect.stringMatching(/tulip/i)],
      blankClears: true,
      queriesAfterBlank: 1,
    });
  });

  test('drops the answer to a query that was replaced, even when it arrives last', async () => {
    expect(await page.evaluate(() => window.reactLab.useSearchDropsStale())).toEqual({
      queries: ['tulips', 'staging'],
      seen: ['Staging moved to eu-west-2'],
      final: 'Staging moved to eu-west-2',
    });
  });

  test('a failed search is an error with its code, and loading ends', async () => {
    expect(await page.evaluate(() => window.reactLab.useSearchErrors())).toEqual({ code: 'INVALID_INPUT', loading: false });
  });
});
