import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { storeSpec } from '../spec/store-spec.js';
import { baseURL, launchPersistent, leaveRoom, openBlankPage, tempProfileDir } from './harness.js';
import type { SpecResult, StoreLab } from './pages/store-lab-worker.js';

// The SQLite store (src/store/browser/browser-store.ts) in real Chromium: real OPFS and IndexedDB, real wa-sqlite.
// A persistent profile, because incognito OPFS is an in-memory emulation (and ~100× slower).
const profile = tempProfileDir();
let context: BrowserContext;
let page: Page;

declare global {
  interface Window {
    lab: import('comlink').Remote<StoreLab>;
  }
}

beforeAll(async () => {
  context = await launchPersistent(profile.dir);
  page = await openBlankPage(context, '/test/browser/pages/store-lab.html');
  await page.waitForFunction(() => window.lab !== undefined);
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

describe.each([
  ['opfs', false],
  ['idb', false],
  ['opfs', true],
  ['idb', true],
] as const)('store spec on SQLite/%s (encrypted: %s)', (backend, encrypted) => {
  let results: SpecResult[] = [];
  beforeAll(async () => {
    results = await page.evaluate(([b, e]) => window.lab.runSpec(b, e), [backend, encrypted] as const);
  });

  test('every spec case ran', () => {
    expect(results.map((r) => r.name)).toEqual(storeSpec.map((c) => c.name));
  });

  test.each(storeSpec.map((c) => c.name))('%s', (name) => {
    const result = results.find((r) => r.name === name);
    expect(result?.error ?? null, result?.error ?? '').toBeNull();
  });
});

test('25,000 records and vectors (several load chunks) come back whole and in order', async () => {
  const n = 25_000;
  const outcome = await page.evaluate((n) => window.lab.largeRoundTrip('opfs', n), n);
  expect(outcome).toEqual({ records: n, distinctRecords: n, inInsertionOrder: true, vectors: n, distinctVectors: n, wrongVectors: 0 });
});

test.each(['opfs', 'idb'] as const)('a version 1 database is migrated on open, keeping records, vectors and the counter (%s)', async (backend) => {
  const outcome = await page.evaluate((b) => window.lab.migrateFromVersion1(b), backend);
  expect(outcome).toEqual({
    records: ['b:second:false:', 'a:first:true:t'],
    vectors: { a: [1, 2], b: [3, 4] },
    counter: 7,
    after: { a: [1, 2], b: [5, 6], m3: [7, 8] },
    other: [5],
    version: outcome.expectedVersion,
    expectedVersion: 6,
    vectorRows: 4,
  });
});

test.each(['opfs', 'idb'] as const)('a version 2 database gains the quality and learning columns on open; old memories have none, new scores persist (%s)', async (backend) => {
  const outcome = await page.evaluate((b) => window.lab.migrateFromVersion2(b), backend);
  expect(outcome).toEqual({
    loaded: [
      { id: 'b', hasQuality: false, priority: 1, pinned: false, project: null, accessCount: 0 },
      { id: 'a', hasQuality: false, priority: 1.5, pinned: true, project: 'p', accessCount: 4 },
    ],
    counter: 7,
    vectorIds: ['a'],
    version: 6,
    expectedVersion: 6,
    addedColumns: ['quality', 'core', 'stability', 'sessions'],
    refused: 'INVALID_INPUT',
    afterReopen: { a: 0.25, b: 'absent', c: 0 },
  });
});

test.each(['opfs', 'idb'] as const)('a database from a newer Engram is refused with SCHEMA_TOO_NEW and left untouched (%s)', async (backend) => {
  const outcome = await page.evaluate((b) => window.lab.openNewerSchema(b), backend);
  expect(outcome.code, outcome.message).toBe('SCHEMA_TOO_NEW');
  expect(outcome).toMatchObject({ version: 99, rows: 1 });
});

test.each(['opfs', 'idb'] as const)('a full disk surfaces as QUOTA_EXCEEDED and the data stored before stays readable (%s)', async (backend) => {
  const cdp = await context.newCDPSession(page);
  // Quota counts everything the origin stores, so each run gets the room it uses plus a few batches' worth
  // (fewer for IndexedDB, whose VFS writes large pages slowly).
  await leaveRoom(page, cdp, (backend === 'opfs' ? 20 : 4) * 2 ** 20, { indexedDB: backend === 'idb' });
  try {
    const outcome = await page.evaluate((b) => window.lab.fillUntilQuota(b), backend);
    expect(outcome.code, outcome.message).toBe('QUOTA_EXCEEDED');
    expect(outcome.stored).toBeGreaterThan(2);
    // Nothing of the failed write, everything before it.
    expect(outcome.after).toEqual({ count: outcome.stored, ids: outcome.stored, meta: `batch ${(outcome.stored - 2) / 10 - 1}`, lastIntact: true });
    expect(outcome.countAfterReopen).toBe(outcome.stored + (outcome.small === 'ok' ? 1 : 0));
  } finally {
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL()).origin });
  }
});

test.each(['opfs', 'idb'] as const)('a removed memory\'s text is gone from the stored bytes, the rest kept (%s)', async (backend) => {
  const outcome = await page.evaluate((b) => window.lab.removedTextGone(b), backend);
  expect(outcome).toEqual({ secretBefore: true, keptBefore: true, secretAfter: false, keptAfter: true, count: 301 });
});
