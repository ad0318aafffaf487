import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { Sequencer } from './test/sequencer.js';

// Every project shares one pool (one group, so each names the same maxWorkers, at least 3 even on two cores).
// test/browser/slots.ts lets two browser, engines or consumers files run at once (one browser file kept about one of
// two cores busy), and test/sequencer.ts spreads the unit files between them: two workers run browser files and the
// third runs unit files until it meets the next browser file, which waits there, imported, for a slot (so no file's
// start-up is on the clock). A fourth worker ran unit files beside two browser files and made the run slower.
const SHARED_WORKERS = Math.max(3, availableParallelism() - 1);

// `vitest --mode fast` (npm run test:fast) is the inner-loop tier: property tests run fewer cases and heavy campaigns
// are left to `npm test` (test/unit/helpers/tier.ts).
export default defineConfig(({ mode }) => ({
  test: {
    sequence: { sequencer: Sequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // The public types (test/types/*.test-d.ts) are checked by tsc in the same run: with the whole project, or
          // in the fast tier only with what they import.
          typecheck: {
            enabled: true,
            include: ['test/types/**/*.test-d.ts'],
            tsconfig: mode === 'fast' ? './test/types/tsconfig.json' : './tsconfig.json',
          },
          environment: 'node',
          maxWorkers: SHARED_WORKERS,
          env: mode === 'fast' ? { ENGRAM_FAST: '1' } : {},
          setupFiles: ['test/unit/helpers/fast-check-setup.ts'],
          testTimeout: 30_000,
        },
      },
      {
        // Node-side tests that drive real Chromium (Playwright) against a Vite server started in globalSetup.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/browser/global-setup.ts'],
          // Two browser files at a time (slots.ts), beside the unit files (see SHARED_WORKERS).
          setupFiles: ['test/browser/slots.ts'],
          maxWorkers: SHARED_WORKERS,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        // Firefox (WebDriver BiDi) and WebKitGTK (WebKitWebDriver) through test/browser/engines.ts: the store spec,
        // createMemory's essentials and the demo; ENGRAM_ENGINES=chromium skips them (scripts/browsers.ts).
        test: {
          name: 'engines',
          include: ['test/engines/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/browser/global-setup.ts'],
          // In the same two slots as the Chromium files (slots.ts), queued after the long ones (test/sequencer.ts).
          setupFiles: ['test/browser/slots.ts'],
          maxWorkers: SHARED_WORKERS,
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        // Example apps installed from the `npm pack` tarball, built with their own tools, driven in real Chromium.
        test: {
          name: 'consumers',
          include: ['test/consumers/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/consumers/global-setup.ts'],
          // In the same two slots, and one consumers file at a time (they share the example apps' folders), spread
          // over the last part of the queue (test/sequencer.ts) while the examples install and build meanwhile.
          setupFiles: ['test/browser/slots.ts'],
          maxWorkers: SHARED_WORKERS,
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
}));
