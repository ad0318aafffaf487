import { defineConfig, type Plugin } from 'vite';
import { demoBucket } from './scripts/demo-bucket.js';

/** Cross-origin isolation lets ONNX Runtime and SQLite use WASM threads and SharedArrayBuffer. */
export const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Vite answers a revalidation with a bare 304, without the isolation headers, and WebKit then refuses the cached
 * module script (cross-origin isolated page): a second worker of the same script failed to load ("the script failed to load"), so
 * close() and a new createMemory in one page did not work there. Never revalidating keeps every answer a full one.
 */
function noRevalidation(): Plugin {
  const strip = (req: { headers: Record<string, unknown> }, _res: unknown, next: () => void) => {
    delete req.headers['if-none-match'];
    delete req.headers['if-modified-since'];
    next();
  };
  return {
    name: 'engram-no-revalidation',
    configureServer: (server) => void server.middlewares.use(strip),
    configurePreviewServer: (server) => void server.middlewares.use(strip),
  };
}

/**
 * `npm run demo` opens a browser only where there is a desktop to show it (xdg-open without one fails with a
 * stack trace); otherwise the demo's address is printed.
 */
const hasDesktop = !process.env.CI && (process.platform === 'darwin' || process.platform === 'win32' || !!(process.env.DISPLAY || process.env.WAYLAND_DISPLAY));

/** The demo lives in demo/; the bare origin sends people there. */
function rootToDemo(): Plugin {
  return {
    name: 'engram-root-to-demo',
    configureServer(server) {
      if (!hasDesktop) {
        server.httpServer?.once('listening', () =>
          setImmediate(() => {
            const url = server.resolvedUrls?.local[0];
            if (url) server.config.logger.info(`  demo: ${url}demo/ (no desktop here: open it in a browser)`);
          }),
        );
      }
      server.middlewares.use((req, res, next) => {
        if (req.url === '/' || req.url === '/index.html') {
          res.statusCode = 302;
          res.setHeader('Location', '/demo/');
          res.end();
          return;
        }
        next();
      });
    },
  };
}

export default defineConfig({
  root: '.',
  plugins: [noRevalidation(), rootToDemo(), demoBucket()],
  server: { headers: isolationHeaders, open: hasDesktop ? '/demo/' : false },
  preview: { headers: isolationHeaders },
  worker: { format: 'es' },
  optimizeDeps: {
    // Every page but the examples', which import the packed package by name (engram/react), unresolvable here:
    // one unresolvable import fails the whole scan and Vite then pre-bundles nothing.
    entries: ['**/*.html', '!examples/**'],
    // Pre-bundled up front: discovering them mid-session makes Vite re-optimise and reload open pages.
    include: ['comlink', 'minisearch', 'react', 'react-dom/client', '@testing-library/react'],
    // Their WASM must load relative to the module, not from a pre-bundled copy.
    exclude: ['@journeyapps/wa-sqlite', 'onnxruntime-web', '@huggingface/transformers'],
  },
  build: { target: 'es2022' },
});
