// Node-side helpers shared by test/browser/memory*.test.ts and worker*.test.ts: typed access to the lab page.
import type { Page } from 'playwright-core';
import type * as Engram from '../../../src/index.js';
import { openBlankPage } from '../harness.js';

declare global {
  interface Window {
    engram: typeof Engram;
    Comlink: typeof import('comlink');
    /** Memories opened by a test, by a name of its choosing. */
    memories: Record<string, Engram.Memory>;
  }
}

export const LAB = '/test/browser/pages/memory-lab.html';

/** Opens the lab page (same origin as every other test page) and waits for the library to load. */
export async function openLab(context: Parameters<typeof openBlankPage>[0]): Promise<Page> {
  const page = await openBlankPage(context, LAB);
  await page.waitForFunction(() => window.engram !== undefined);
  return page;
}

/** Texts with a word unique to each memory (`tok<i>`) and one shared by a batch (`batch<tag>`). */
export function lines(tag: string, count: number, start = 0): { text: string; tags: string[] }[] {
  return Array.from({ length: count }, (_, i) => ({
    text: `note ${start + i} of batch${tag}: the tok${tag}x${start + i} detail about gardening and tomatoes`,
    tags: [tag],
  }));
}
