import { rmSync } from 'node:fs';
import type { ViteDevServer } from 'vite';
import { browserLockPath } from './lock-path.js';
import { startViteServer } from './vite-server.js';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    baseURL: string;
    /** The directory of slots.ts's locks. */
    browserLock: string;
  }
}

let server: ViteDevServer | undefined;
let lock: string | undefined;

/** One Vite dev server (the project's own vite.config.ts) for every browser test file. */
export async function setup(project: TestProject): Promise<void> {
  // Frozen (no file watching, no hot reload): an edit elsewhere in the tree must not reload a page mid-test.
  const started = await startViteServer({ frozen: true, keepModules: true });
  server = started.server;
  project.provide('baseURL', started.baseURL);
  lock = browserLockPath();
  project.provide('browserLock', lock);
}

export async function teardown(): Promise<void> {
  await server?.close();
  if (lock) rmSync(lock, { recursive: true, force: true });
}
