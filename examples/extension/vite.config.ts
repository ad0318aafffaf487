import { defineConfig } from 'vite';

// Three entry points: two extension pages and the service worker. The manifest (public/manifest.json) names the
// service worker by path, so that one file keeps a fixed name; everything else is hashed under assets/.
export default defineConfig({
  // Recommended, not required: an ES-module worker loads transformers.js and ONNX Runtime as chunks of their own,
  // when the model loads. Vite's default ('iife') also works, with all of it in one worker file.
  worker: { format: 'es' },
  build: {
    rolldownOptions: {
      input: { popup: 'popup.html', offscreen: 'offscreen.html', background: 'src/background.ts' },
      output: {
        entryFileNames: (chunk) => (chunk.name === 'background' ? 'background.js' : 'assets/[name]-[hash].js'),
      },
    },
  },
});
