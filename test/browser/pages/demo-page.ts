// Node-side helpers shared by the demo's tests.
import { mkdirSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { baseURL, launchPersistent, recordRequests, tempProfileDir } from '../harness.js';
import { startScriptedEndpoint, type ScriptedAnswer, type ScriptedEndpoint } from '../scripted-endpoint.js';

/**
 * Waits until a search newer than `after` has rendered and no further search follows within 400 ms. `explain`
 * says what the page reported, for a render that never finishes.
 */
export async function settled(page: Page, after: number, explain?: () => string): Promise<number> {
  const generation = () => page.$eval('#hits', (el) => Number((el as HTMLElement).dataset.generation ?? 0));
  await expect.poll(generation, { timeout: 60_000, ...(explain ? { message: `no search rendered; ${explain()}` } : {}) }).toBeGreaterThan(after);
  let last = await generation();
  for (;;) {
    await page.waitForTimeout(400);
    const now = await generation();
    if (now === last) return now;
    last = now;
  }
}

export interface DemoSession {
  /** The scripted endpoint, started before the file's first test. */
  endpoint(): ScriptedEndpoint;
  /** A new tab on the demo at 1280×900, once the page has opened its database; dialogs are accepted. */
  openPage(): Promise<{ page: Page; requests: ReturnType<typeof recordRequests> }>;
}

/**
 * A demo test file's lifecycle with a scripted endpoint answering `answer`: one persistent profile and one endpoint
 * for the file, and each test's pages closed after it, passed or failed: the demo's tabs share one database, and the
 * tab that opened it lends its language model to the others, so a page left open would answer the next test's calls.
 */
export function demoSession(shots: string, answer: (prompt: string) => ScriptedAnswer): DemoSession {
  let profile: ReturnType<typeof tempProfileDir> | undefined;
  let context: BrowserContext | undefined;
  let endpoint: ScriptedEndpoint | undefined;
  const openPages = new Set<Page>();
  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    profile = tempProfileDir();
    context = await launchPersistent(profile.dir);
    endpoint = await startScriptedEndpoint(answer);
  });
  afterEach(async () => {
    for (const page of openPages) await page.close();
    openPages.clear();
  });
  afterAll(async () => {
    await context?.close();
    profile?.dispose();
    await endpoint?.close();
  });
  return {
    endpoint: () => endpoint!,
    async openPage() {
      const page = await context!.newPage();
      openPages.add(page);
      await page.setViewportSize({ width: 1280, height: 900 });
      const requests = recordRequests(page);
      page.on('dialog', (dialog) => void dialog.accept());
      page.on('pageerror', (error) => console.error('[demo page error]', error.message));
      await page.goto(`${baseURL()}/demo/`);
      await expect.poll(() => page.textContent('#status-count'), { timeout: 60_000 }).toMatch(/^\d+ memor/);
      return { page, requests };
    },
  };
}
