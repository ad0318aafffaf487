/**
 * The demo's two-device view (demo/sync.html) driven as a user would in real Chromium: add a memory on device A,
 * sync A, sync B, and B finds it by hybrid search (both legs), through the bucket the dev server answers under the
 * page's own origin (scripts/demo-bucket.ts). No console error, no CSP violation, no request to another origin.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { baseURL, launchBrowser, recordRequests } from './harness.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser({ webgpu: false });
});

afterAll(async () => {
  await browser?.close();
});

/** Page errors, console errors (the page's and its workers') and CSP violations. */
async function recordProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`));
  page.on('worker', (worker) => worker.on('console', (message) => message.type() === 'error' && problems.push(`worker console: ${message.text()}`)));
  await page.exposeBinding('__cspReport', (_source, what: string) => void problems.push(what));
  await page.addInitScript(() => {
    const report = (globalThis as unknown as { __cspReport(what: string): void }).__cspReport;
    document.addEventListener('securitypolicyviolation', (event) => report(`CSP: ${event.effectiveDirective} blocked ${event.blockedURI}`));
  });
  return problems;
}

const text = (page: Page, selector: string) => page.textContent(selector).then((value) => value ?? '');

test('add on device A, sync A, sync B: B finds it by hybrid search, with no console error and nothing fetched from another origin', async () => {
  const page = await browser.newPage();
  const problems = await recordProblems(page);
  const requests = recordRequests(page);
  await page.goto(`${baseURL()}/demo/sync.html`);
  // Both devices open and their models are ready (the vector leg needs them).
  for (const id of ['a', 'b']) await expect.poll(() => page.getAttribute(`#device-${id}`, 'data-ready'), { timeout: 120_000 }).toBe('ready');
  expect(await text(page, '#a-last-sync')).toBe('never');

  await page.fill('#a-text', 'The spare kayak paddle is hanging in the garden shed behind the bicycles');
  await page.click('#a-add');
  await expect.poll(() => text(page, '#a-count'), { timeout: 30_000 }).toBe('1');
  expect(await text(page, '#a-pending')).toBe('1');

  await page.click('#a-sync');
  await expect.poll(() => text(page, '#a-message'), { timeout: 60_000 }).toMatch(/^synced at .*: 0 pending$/);
  expect(await text(page, '#a-pending')).toBe('0');
  expect(await text(page, '#a-last-sync')).not.toBe('never');
  expect(await text(page, '#a-error')).toBe('none');

  await page.click('#b-sync');
  await expect.poll(() => text(page, '#b-message'), { timeout: 60_000 }).toMatch(/^synced at /);
  await expect.poll(() => text(page, '#b-count'), { timeout: 30_000 }).toBe('1');

  // A paraphrase sharing one word with the text: the lexical leg finds it by that word, the vector leg by its meaning.
  await page.fill('#b-query', 'where did I leave the kayak oar?');
  await page.click('#b-search');
  await expect.poll(() => page.$$eval('#b-hits li.device-hit', (items) => items.length), { timeout: 30_000 }).toBe(1);
  const hit = await page.$eval('#b-hits li.device-hit', (item) => ({ text: item.querySelector('.hit-text')?.textContent, legs: (item as HTMLElement).dataset.legs }));
  expect(hit).toEqual({ text: 'The spare kayak paddle is hanging in the garden shed behind the bicycles', legs: 'lexical vector' });
  expect(await text(page, '#b-error')).toBe('none');

  expect(requests.foreign()).toEqual([]);
  // The workers reached the bucket, at the page's own origin.
  expect(requests.all.some((url) => url.startsWith(`${baseURL()}/engram-demo-bucket/demo/`))).toBe(true);
  expect(problems).toEqual([]);
  await page.close();
});
