import { defineConfig } from 'vite';

// Four entry points: two extension pages, Chrome's service worker and Firefox's event page script. The manifest
// (public/manifest.json) names the two background scripts by path, so they keep fixed names; the rest is hashed.
export default defineConfig({
  // Recommended, not required: an ES-module worker loads transformers.js and ONNX Runtime as chunks of their own,
  // when the model loads. Vite's default ('iife') also works, with all of it in one worker file.
  worker: { format: 'es' },
  build: {
    rolldownOptions: {
      input: {
        popup: 'popup.html',
        offscreen: 'offscreen.html',
        background: 'src/background.ts',
        'event-page': 'src/event-page.ts',
      },
      output: {
        entryFileNames: (chunk) =>
          chunk.name === 'background' || chunk.name === 'event-page' ? `${chunk.name}.js` : 'assets/[name]-[hash].js',
      },
    },
  },
});
