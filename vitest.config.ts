import { defineConfig } from 'vitest/config';

// `vitest --mode fast` (npm run test:fast) is the inner-loop tier: property tests run fewer cases and heavy campaigns
// are left to `npm test` (test/unit/helpers/tier.ts).
export default defineConfig(({ mode }) => ({
  test: {
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
          fileParallelism: false,
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
          fileParallelism: false,
          // After the Chromium suites: two browser suites at once overload two cores.
          sequence: { groupOrder: 1 },
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
          fileParallelism: false,
          // After the unit, browser and engines projects: two browser suites and npm installs at once overload two cores.
          sequence: { groupOrder: 2 },
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
}));
