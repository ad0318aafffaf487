/**
 * The store spec (test/spec/store-spec.ts) on every backend Firefox and WebKit offer, plain and encrypted, run
 * inside the store lab page's worker as test/browser/store.test.ts runs it in Chromium.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { storeSpec } from '../spec/store-spec.js';
import { launchEngine, type EnginePage } from '../browser/engines.js';
import type { SpecResult } from '../browser/pages/store-lab-worker.js';
import { BACKENDS, baseURL, enginesToRun, waitInPage } from './support.js';

const engines = enginesToRun();
if (engines.length === 0) test.skip('no engine selected (ENGRAM_ENGINES)', () => {});

describe.each(engines)('%s', (engine) => {
  let page: EnginePage;
  beforeAll(async () => {
    page = await launchEngine(engine);
    await page.open(`${baseURL()}/test/browser/pages/store-lab.html`);
    await waitInPage(page, 'window.lab !== undefined');
  });
  afterAll(async () => {
    await page?.close();
  });

  describe.each(BACKENDS[engine].flatMap((backend) => [[backend, false], [backend, true]] as const))('store spec on SQLite/%s (encrypted: %s)', (backend, encrypted) => {
    let results: SpecResult[] = [];
    beforeAll(async () => {
      results = await page.evaluate<SpecResult[]>(`return window.lab.runSpec(${JSON.stringify(backend)}, ${encrypted});`, 170_000);
      // WebKitGTK stalls some cases for seconds: a worker's WebAssembly compile waits behind JavaScriptCore's tier-up
      // of hot SQLite code (none with JSC_useOMGJIT=false). Say where.
      const slow = results.filter((r) => r.ms > 5000).map((r) => `${r.name.slice(0, 60)}…: ${Math.round(r.ms / 1000)} s`);
      if (slow.length > 0) console.log(`${engine}, ${backend}${encrypted ? ', encrypted' : ''}: slow cases: ${slow.join('; ')}`);
    });

    test('every spec case ran', () => {
      expect(results.map((r) => r.name)).toEqual(storeSpec.map((c) => c.name));
    });

    test.each(storeSpec.map((c) => c.name))('%s', (name) => {
      const result = results.find((r) => r.name === name);
      expect(result?.error ?? null, result?.error ?? '').toBeNull();
    });
  });

  test('no console errors', () => {
    expect(page.consoleErrors()).toEqual([]);
  });
});
