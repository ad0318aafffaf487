import { createServer, type InlineConfig, type ViteDevServer } from 'vite';

/**
 * The project's own vite.config.ts on a free loopback port: what tests and benchmarks serve pages from.
 * `frozen` turns off file watching and hot reload, for long runs while others edit the tree.
 */
export async function startViteServer(
  options: { frozen?: boolean; config?: Omit<InlineConfig, 'configFile' | 'server'> } = {},
): Promise<{ server: ViteDevServer; baseURL: string }> {
  const server = await createServer({
    logLevel: 'warn',
    ...options.config,
    configFile: new URL('../../vite.config.ts', import.meta.url).pathname,
    server: { port: 0, host: '127.0.0.1', open: false, ...(options.frozen ? { hmr: false, watch: null } : {}) },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('vite server has no port');
  return { server, baseURL: `http://127.0.0.1:${address.port}` };
}
