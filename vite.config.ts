import { defineConfig, type Plugin } from 'vite';

/** Cross-origin isolation lets ONNX Runtime and SQLite use WASM threads and SharedArrayBuffer. */
export const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/** The demo lives in demo/; the bare origin sends people there. */
function rootToDemo(): Plugin {
  return {
    name: 'engram-root-to-demo',
    configureServer(server) {
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
  plugins: [rootToDemo()],
  server: { headers: isolationHeaders, open: process.env.CI ? false : '/demo/' },
  preview: { headers: isolationHeaders },
  worker: { format: 'es' },
  optimizeDeps: {
    // Pre-bundled up front: discovering them mid-session makes Vite re-optimise and reload open pages.
    include: ['comlink', 'minisearch'],
    // Their WASM must load relative to the module, not from a pre-bundled copy.
    exclude: ['@journeyapps/wa-sqlite', 'onnxruntime-web', '@huggingface/transformers'],
  },
  build: { target: 'es2022' },
});
