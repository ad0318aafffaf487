// Shared by the cross-engine tests: which engines run (ENGRAM_ENGINES, scripts/browsers.ts) and the dev server.
import { afterAll, beforeAll, inject } from 'vitest';
import { selectedEngines, type EngineName } from '../../scripts/browsers.js';
import { launchEngine, type EnginePage } from '../browser/engines.js';

/** Of `wanted`, the engines this run includes (Chromium's full suite lives in test/browser). */
export function enginesToRun(wanted: readonly EngineName[] = ['firefox', 'webkit']): EngineName[] {
  const selected = selectedEngines();
  return wanted.filter((engine) => selected.includes(engine));
}

export function baseURL(): string {
  return inject('baseURL');
}

/** Storage backends each engine offers: WebKitGTK has no OPFS sync access handles. */
export const BACKENDS: Record<EngineName, ('opfs' | 'idb')[]> = { chromium: ['opfs', 'idb'], firefox: ['opfs', 'idb'], webkit: ['idb'] };

/** Polls `check` (run in the page) until it returns a truthy value. */
export async function waitInPage(page: EnginePage, check: string, timeoutMs = 30_000): Promise<void> {
  const ok = await page.evaluate<boolean>(
    `const end = Date.now() + ${timeoutMs}; while (Date.now() < end) { if (${check}) return true; await new Promise((r) => setTimeout(r, 50)); } return false;`,
    timeoutMs + 5000,
  );
  if (!ok) throw new Error(`${page.engine}: ${check} did not hold within ${timeoutMs} ms`);
}

/** In-page: the text of the first element `selector` matches, or ''. */
export const textOf = (selector: string) => `(document.querySelector(${JSON.stringify(selector)})?.textContent ?? '')`;

/** A page of `engine` for the tests of the enclosing describe block: launched before them, closed after. */
export function usePage(engine: EngineName): { readonly page: EnginePage } {
  const held = {} as { page: EnginePage };
  beforeAll(async () => {
    held.page = await launchEngine(engine);
  });
  afterAll(async () => {
    await held.page?.close();
  });
  return held;
}
