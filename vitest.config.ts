import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // The public types (test/types/*.test-d.ts) are checked by tsc in the same run.
          typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
          environment: 'node',
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
        // Example apps installed from the `npm pack` tarball, built with their own tools, driven in real Chromium.
        test: {
          name: 'consumers',
          include: ['test/consumers/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/consumers/global-setup.ts'],
          fileParallelism: false,
          // After the unit and browser projects: two Chromium suites and npm installs at once overload two cores.
          sequence: { groupOrder: 1 },
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
