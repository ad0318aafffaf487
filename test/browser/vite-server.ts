import { lstatSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, searchForWorkspaceRoot, type InlineConfig, type ViteDevServer } from 'vite';

/**
 * The project's own vite.config.ts on a free loopback port: what tests and benchmarks serve pages from.
 * `frozen` turns off file watching and hot reload, for long runs while others edit the tree.
 */
export async function startViteServer(
  options: { frozen?: boolean; config?: Omit<InlineConfig, 'configFile' | 'server'> } = {},
): Promise<{ server: ViteDevServer; baseURL: string }> {
  const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
  // A worktree's symlinked node_modules is another checkout's: its own dependency cache, not theirs.
  const shared = lstatSync(`${root}/node_modules`).isSymbolicLink();
  const server = await createServer({
    logLevel: 'warn',
    ...(shared ? { cacheDir: join(tmpdir(), `engram-vite-cache-${basename(root)}`) } : {}),
    ...options.config,
    configFile: new URL('../../vite.config.ts', import.meta.url).pathname,
    server: {
      port: 0,
      host: '127.0.0.1',
      open: false,
      // A git worktree may symlink node_modules from elsewhere: Vite serves its files by their real path.
      fs: { allow: [searchForWorkspaceRoot(root), realpathSync(`${root}/node_modules`)] },
      ...(options.frozen ? { hmr: false, watch: null } : {}),
    },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('vite server has no port');
  return { server, baseURL: `http://127.0.0.1:${address.port}` };
}
