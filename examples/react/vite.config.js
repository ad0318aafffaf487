import { defineConfig } from 'vite';

export default defineConfig({
  // Engram's worker loads its parts on demand, which needs ES-module workers.
  worker: { format: 'es' },
});
