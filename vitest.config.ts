import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { Sequencer } from './test/sequencer.js';

// Every project shares one pool (one group, so each names the same maxWorkers, at least 3 even on two cores): unit
// files run in one worker while a browser file, which mostly waits on timers, storage and the browser, runs in
// another, and a third holds the next browser file, imported and waiting for the lock (with two workers, both ran
// unit files once the first browser file ended, and the lock lay idle 140 s; now 45 s).
// test/browser/one-at-a-time.ts lets one browser, engines or consumers file run at a time (the next one waits
// imported, so no file's start-up is on the clock), and test/sequencer.ts queues them: two long browser files, the
// unit files, the other browser files, engines, consumers.
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
          // One browser file at a time (the lock), beside the unit files (see SHARED_WORKERS).
          setupFiles: ['test/browser/one-at-a-time.ts'],
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
          // One file at a time with the Chromium suites (the lock), queued after them (test/sequencer.ts).
          setupFiles: ['test/browser/one-at-a-time.ts'],
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
          // One file at a time with the browser and engines projects (the lock), queued after them
          // (test/sequencer.ts): two browser suites and npm installs at once overload two cores.
          setupFiles: ['test/browser/one-at-a-time.ts'],
          maxWorkers: SHARED_WORKERS,
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
}));
