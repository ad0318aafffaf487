/**
 * The demo's "Encrypt with a passphrase" option, driven as a user would in real Chromium with a persistent profile
 * (real OPFS and IndexedDB, the real worker and page cipher): open an encrypted database, add a memory, reload,
 * get WRONG_KEY for a wrong passphrase and KEY_REQUIRED for none, open it with the right one and find the memory,
 * change the passphrase, and see the old one fail after a reload. NOT_ENCRYPTED for the plain default database.
 * Throughout, the passphrases must appear nowhere but in the fields while typed: not in localStorage, the URL,
 * any request, the console (page or worker), the page's markup, or a field after its submit.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { baseURL, launchPersistent, recordRequests, tempProfileDir } from './harness.js';
import { settled } from './pages/demo-page.js';

const SHOTS = 'test-results';
const VAULT = 'vault-e2e';
// Distinctive enough that finding one anywhere can only mean it leaked; one has a non-ASCII letter (NFC-normalised).
const FIRST = 'first tide-pool passphrase Ŝ 4417';
const SECOND = 'second greenhouse passphrase 9081';
const WRONG = 'not the passphrase 0000';
const MEMORY_TEXT = 'The spare key to the boathouse is under the blue heron statue';

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

/** Every console line of the page and of its workers, with its arguments as JSON where they serialise. */
function recordConsole(page: Page): { lines: string[]; flush(): Promise<void> } {
  const lines: string[] = [];
  const pending: Promise<unknown>[] = [];
  const take = (message: ConsoleMessage) => {
    lines.push(message.text());
    for (const arg of message.args()) pending.push(arg.jsonValue().then((value) => lines.push(JSON.stringify(value)), () => undefined));
  };
  page.on('console', take);
  page.on('worker', (worker) => worker.on('console', take));
  return { lines, flush: () => Promise.all(pending).then(() => undefined) };
}

/** Page errors and CSP violations (the page's CSP must allow the encrypted build of SQLite as it does the plain one). */
async function recordProblems(page: Page): Promise<string[]> {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  await page.exposeBinding('__cspReport', (_source, what: string) => void problems.push(what));
  await page.addInitScript(() => {
    const report = (globalThis as unknown as { __cspReport(what: string): void }).__cspReport;
    document.addEventListener('securitypolicyviolation', (event) => report(`CSP: ${event.effectiveDirective} blocked ${event.blockedURI}`));
  });
  return problems;
}

const statusCount = (page: Page) => page.textContent('#status-count');

/** The open form's error: its text, its code, and whether it holds any element (it must be text only). */
async function openError(page: Page): Promise<{ text: string; code: string | null; children: number }> {
  return page.$eval('#open-error', (el) => ({ text: el.textContent ?? '', code: (el as HTMLElement).dataset.code ?? null, children: el.children.length }));
}

/** Types into the open form as a user would and presses Open. */
async function submitOpen(page: Page, name: string, passphrase: string | null): Promise<void> {
  await expect.poll(() => page.isEnabled('#db-open'), { timeout: 60_000 }).toBe(true);
  // Ticking the box first: it proposes a database name of its own, which the name typed next overrides.
  await page.setChecked('#db-encrypt', passphrase !== null);
  await page.fill('#db-name', name);
  if (passphrase !== null) await page.fill('#db-passphrase', passphrase);
  await page.click('#db-open');
}

/** Opens with `passphrase` and expects the refusal `code`, shown as `CODE: message`, with nothing open. */
async function expectRefused(page: Page, name: string, passphrase: string | null, code: string): Promise<void> {
  await submitOpen(page, name, passphrase);
  await expect.poll(async () => (await openError(page)).code, { timeout: 60_000 }).toBe(code);
  const shown = await openError(page);
  expect(shown.text).toMatch(new RegExp(`^${code}: \\S`));
  expect(shown.children).toBe(0);
  expect(await statusCount(page)).toBe('not open');
  expect(await page.isEnabled('#add-memory')).toBe(false);
  // Ready for another try, without a reload; the passphrase typed is gone from its field.
  expect(await page.isEnabled('#db-open')).toBe(true);
  expect(await page.inputValue('#db-passphrase')).toBe('');
}

/** Searches `query` and answers the texts of the hits shown. */
async function searchTexts(page: Page, query: string): Promise<string[]> {
  const before = await page.$eval('#hits', (el) => Number((el as HTMLElement).dataset.generation ?? 0));
  await page.fill('#query', query);
  await settled(page, before);
  return page.$$eval('#hits li.hit .hit-text', (items) => items.map((item) => item.textContent ?? ''));
}

/** Where a passphrase must never be: localStorage, the URL, the requests, the console, the markup. */
async function expectNoLeak(page: Page, requests: { all: string[] }, consoleLog: { lines: string[]; flush(): Promise<void> }): Promise<void> {
  await consoleLog.flush();
  const storage = await page.evaluate(() => Object.entries(localStorage).map(([key, value]) => `${key}=${value}`).join('\n'));
  const markup = await page.content();
  for (const secret of [FIRST, SECOND, WRONG]) {
    for (const variant of [secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%20/g, '+')]) {
      expect(storage).not.toContain(variant);
      expect(page.url()).not.toContain(variant);
      expect(requests.all.filter((url) => url.includes(variant))).toEqual([]);
      expect(consoleLog.lines.filter((line) => line.includes(variant))).toEqual([]);
      expect(markup).not.toContain(variant);
    }
  }
  for (const field of ['#db-passphrase', '#pp-current', '#pp-next', '#pp-repeat']) expect(await page.inputValue(field)).toBe('');
}

test('a user encrypts a database with a passphrase, reopens it, changes the passphrase, and the old one fails', async () => {
  const page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  const problems = await recordProblems(page);
  const requests = recordRequests(page.context());
  const consoleLog = recordConsole(page);
  await page.goto(`${baseURL()}/demo/`);

  // A first visit opens the plain default database, as the demo always did, and says it is not encrypted.
  await expect.poll(() => statusCount(page), { timeout: 60_000 }).toMatch(/^\d+ memor/);
  expect(await page.inputValue('#db-name')).toBe('engram-demo');
  expect(await page.isChecked('#db-encrypt')).toBe(false);
  expect(await page.isHidden('#db-passphrase')).toBe(true);
  await expect.poll(() => page.textContent('#status-encryption')).toBe('not encrypted');
  expect(await page.isHidden('#passphrase-form')).toBe(true);
  // Ticking "Encrypt" on the default name proposes a database of its own (the default one exists unencrypted).
  await expect.poll(() => page.isEnabled('#db-encrypt'), { timeout: 60_000 }).toBe(true);
  await page.setChecked('#db-encrypt', true);
  expect(await page.inputValue('#db-name')).toBe('engram-demo-encrypted');
  await page.setChecked('#db-encrypt', false);
  expect(await page.inputValue('#db-name')).toBe('engram-demo');

  // A passphrase for that existing plain database is refused, never used to open it.
  await expectRefused(page, 'engram-demo', FIRST, 'NOT_ENCRYPTED');

  // A new database, encrypted from the start.
  await submitOpen(page, VAULT, FIRST);
  await expect.poll(() => statusCount(page), { timeout: 60_000 }).toBe('0 memories');
  await expect.poll(() => page.textContent('#status-encryption')).toBe('encrypted at rest');
  expect(await page.textContent('#status-database')).toBe(`database: ${VAULT}`);
  expect(await page.isVisible('#passphrase-form')).toBe(true);
  expect((await openError(page)).text).toBe('');

  await page.click('#add-memory');
  await page.fill('#editor-text', MEMORY_TEXT);
  await page.click('#editor-form button[value="save"]');
  await expect.poll(() => statusCount(page), { timeout: 60_000 }).toBe('1 memory');
  expect(await searchTexts(page, 'boathouse key')).toEqual([MEMORY_TEXT]);
  await expectNoLeak(page, requests, consoleLog);

  // After a reload the demo remembers the database and that it is encrypted, and waits for the passphrase.
  await page.reload();
  await expect.poll(() => statusCount(page)).toBe('not open');
  expect(await page.inputValue('#db-name')).toBe(VAULT);
  expect(await page.isChecked('#db-encrypt')).toBe(true);
  expect(await page.inputValue('#db-passphrase')).toBe('');
  expect(await page.isEnabled('#add-memory')).toBe(false);

  await expectRefused(page, VAULT, WRONG, 'WRONG_KEY');
  await page.screenshot({ path: `${SHOTS}/demo-encryption-wrong-key.png` });
  // Without a passphrase: refused, never an empty database in its place.
  await expectRefused(page, VAULT, null, 'KEY_REQUIRED');

  await submitOpen(page, VAULT, FIRST);
  await expect.poll(() => statusCount(page), { timeout: 60_000 }).toBe('1 memory');
  expect((await openError(page)).text).toBe('');
  await expect.poll(() => page.textContent('#status-encryption')).toBe('encrypted at rest');
  expect(await searchTexts(page, 'heron statue')).toEqual([MEMORY_TEXT]);

  // Change the passphrase: a wrong current one and a mistyped repeat change nothing.
  const changePassphrase = async (current: string, next: string, repeat = next) => {
    await page.fill('#pp-current', current);
    await page.fill('#pp-next', next);
    await page.fill('#pp-repeat', repeat);
    await page.click('#pp-change');
  };
  const changeResult = () => page.$eval('#passphrase-result', (el) => ({ text: el.textContent ?? '', code: (el as HTMLElement).dataset.code ?? null, children: el.children.length }));
  await changePassphrase(WRONG, SECOND);
  await expect.poll(async () => (await changeResult()).code, { timeout: 60_000 }).toBe('WRONG_KEY');
  expect((await changeResult()).text).toMatch(/^WRONG_KEY: \S/);
  expect((await changeResult()).children).toBe(0);
  await changePassphrase(FIRST, SECOND, `${SECOND}x`);
  await expect.poll(async () => (await changeResult()).text).toMatch(/differ/);
  expect((await changeResult()).code).toBe(null);
  await changePassphrase(FIRST, SECOND);
  await expect.poll(async () => (await changeResult()).text, { timeout: 60_000 }).toMatch(/^Passphrase changed/);
  expect((await changeResult()).code).toBe(null);
  await expectNoLeak(page, requests, consoleLog);

  // The old passphrase no longer opens it; the new one does, with the memory still there.
  await page.reload();
  await expect.poll(() => statusCount(page)).toBe('not open');
  await expectRefused(page, VAULT, FIRST, 'WRONG_KEY');
  await submitOpen(page, VAULT, SECOND);
  await expect.poll(() => statusCount(page), { timeout: 60_000 }).toBe('1 memory');
  await expect.poll(() => page.textContent('#status-encryption')).toBe('encrypted at rest');
  expect(await searchTexts(page, 'boathouse key')).toEqual([MEMORY_TEXT]);
  await page.screenshot({ path: `${SHOTS}/demo-encryption-open.png` });

  // Back to the plain default database: opened without a passphrase, and remembered as such.
  await submitOpen(page, 'engram-demo', null);
  await expect.poll(() => page.textContent('#status-encryption'), { timeout: 60_000 }).toBe('not encrypted');
  expect(await page.isHidden('#passphrase-form')).toBe(true);
  await page.reload();
  await expect.poll(() => statusCount(page), { timeout: 60_000 }).toMatch(/^\d+ memor/);
  expect(await page.inputValue('#db-name')).toBe('engram-demo');

  await expectNoLeak(page, requests, consoleLog);
  expect(requests.foreign()).toEqual([]);
  expect(problems).toEqual([]);
  await page.close();
});
