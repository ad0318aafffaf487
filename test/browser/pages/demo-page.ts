// Node-side helpers shared by the demo's tests.
import { expect } from 'vitest';
import type { Page } from 'playwright-core';

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
