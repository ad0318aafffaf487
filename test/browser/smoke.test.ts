import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchBrowser, openBlankPage } from './harness.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

test('test pages are cross-origin isolated and OPFS is available', async () => {
  const page = await openBlankPage(browser);
  const facts = await page.evaluate(async () => ({
    isolated: crossOriginIsolated,
    opfs: typeof navigator.storage?.getDirectory === 'function',
    webgpu: 'gpu' in navigator,
  }));
  expect(facts).toEqual({ isolated: true, opfs: true, webgpu: true });
});
