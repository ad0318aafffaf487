import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, searchForWorkspaceRoot, type InlineConfig, type Plugin, type ViteDevServer } from 'vite';

/**
 * Lets the browser keep the modules it fetched. A Vite dev server asks it to revalidate every module on every load
 * (no-cache): each new Engram worker then re-requests its ~120 modules, and the tests start hundreds of workers. With
 * watching off nothing changes under a URL, so the cached copy is the served one.
 */
function keepModules(): Plugin {
  return {
    name: 'engram-test-keep-modules',
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        const path = (req.url ?? '').split('?')[0]!;
        if (req.method === 'GET' && /\.(ts|tsx|js|mjs)$/.test(path)) {
          const setHeader = res.setHeader.bind(res);
          res.setHeader = (name, value) => setHeader(name, name.toLowerCase() === 'cache-control' && value === 'no-cache' ? 'max-age=3600' : value);
        }
        next();
      });
    },
  };
}

/**
 * The project's own vite.config.ts on a free loopback port: what tests and benchmarks serve pages from.
 * `frozen` turns off file watching and hot reload, for long runs while others edit the tree; `keepModules` (frozen
 * only) lets the browser cache the modules (see keepModules()).
 */
export async function startViteServer(
  options: { frozen?: boolean; keepModules?: boolean; config?: Omit<InlineConfig, 'configFile' | 'server'> } = {},
): Promise<{ server: ViteDevServer; baseURL: string }> {
  const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
  // A worktree's symlinked node_modules is another checkout's: its own dependency cache, not theirs.
  const shared = lstatSync(`${root}/node_modules`).isSymbolicLink();
  const server = await createServer({
    logLevel: 'warn',
    ...(shared ? { cacheDir: join(tmpdir(), `engram-vite-cache-${basename(root)}`) } : {}),
    ...options.config,
    ...(options.frozen && options.keepModules ? { plugins: [...(options.config?.plugins ?? []), keepModules()] } : {}),
    configFile: new URL('../../vite.config.ts', import.meta.url).pathname,
    server: {
      port: 0,
      host: '127.0.0.1',
      open: false,
      // A git worktree may symlink node_modules and models from elsewhere: Vite serves their files by their real path.
      fs: { allow: [searchForWorkspaceRoot(root), ...['node_modules', 'models'].filter((dir) => existsSync(`${root}/${dir}`)).map((dir) => realpathSync(`${root}/${dir}`))] },
      ...(options.frozen ? { hmr: false, watch: null } : {}),
    },
  });
  await server.listen();
  const address = server.httpServer?.address();
  if (!address || typeof address === 'string') throw new Error('vite server has no port');
  return { server, baseURL: `http://127.0.0.1:${address.port}` };
}
