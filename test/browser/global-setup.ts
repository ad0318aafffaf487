import { createServer, type ViteDevServer } from 'vite';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    baseURL: string;
  }
}

let server: ViteDevServer | undefined;

/** One Vite dev server (the project's own vite.config.ts) for every browser test file. */
export async function setup(project: TestProject): Promise<void> {
  server = await createServer({
    configFile: new URL('../../vite.config.ts', import.meta.url).pathname,
    server: { port: 0, host: '127.0.0.1', open: false },
    logLevel: 'warn',
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('vite server has no port');
  project.provide('baseURL', `http://127.0.0.1:${address.port}`);
}

export async function teardown(): Promise<void> {
  await server?.close();
}
