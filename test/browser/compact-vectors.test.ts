import { afterAll, beforeAll, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchPersistent, openBlankPage, tempProfileDir } from './harness.js';
import type { CompactLab } from './pages/compact-lab-worker.js';

// Compact vector memory (EngineOptions.vectorMemory) on the real SQLite/OPFS store: it survives a reload and answers
// as float32 does. A persistent profile: incognito OPFS is an in-memory emulation.
const profile = tempProfileDir();
let context: BrowserContext;
let page: Page;

/** The page's handle on the lab worker (not declared on Window: other browser tests give `lab` their own type). */
type LabWindow = { compactLab?: import('comlink').Remote<CompactLab> };

beforeAll(async () => {
  context = await launchPersistent(profile.dir);
  page = await openBlankPage(context, '/test/browser/pages/compact-lab.html');
  await page.waitForFunction(() => (window as unknown as LabWindow).compactLab !== undefined);
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

test('a compact engine reopened from OPFS answers as a float32 one (same ids, same exact scores)', async () => {
  const outcome = await page.evaluate(() => (window as unknown as LabWindow).compactLab!.reloadRoundTrip(3000));
  expect(outcome.count).toBe(3000);
  expect(outcome.compact.length).toBe(10);
  expect(outcome.compact.every((hits) => hits.length > 0)).toBe(true);
  expect(outcome.compact).toEqual(outcome.float);
}, 120_000);
