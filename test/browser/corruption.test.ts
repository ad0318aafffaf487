import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchPersistent, openBlankPage, tempProfileDir } from './harness.js';
import type { CorruptLab } from './pages/corrupt-lab-worker.js';

// A damaged database file (issue 30): a flipped bit in a page of the memories table, or a file cut short, on OPFS
// and IndexedDB, plain and encrypted. Reading it fails with STORE_CORRUPT (quick_check's findings in its details),
// and salvageMemory returns every memory not on the damaged pages, reporting the rows it lost; they re-import whole
// from an encrypted backup (sealBackup, openBackup).
const profile = tempProfileDir();
let context: BrowserContext;
let page: Page;

declare global {
  interface Window {
    corruptLab: import('comlink').Remote<CorruptLab>;
    engram: typeof import('../../src/index.js');
  }
}

beforeAll(async () => {
  context = await launchPersistent(profile.dir);
  page = await openBlankPage(context, '/test/browser/pages/corrupt-lab.html');
  await page.waitForFunction(() => window.corruptLab !== undefined && window.engram !== undefined);
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

const N = 400;
const TARGET = 200; // rowid of m199
let cases = 0;

interface Outcome {
  load: { step: string; code: string | null; details: Record<string, unknown> | null };
  memory: { code: string | null; quickCheck: unknown };
  salvage: { ids: string[]; wrongTexts: number; lost: { from: number; to: number | null }[]; quickCheck: string[] } | { code: string; message: string };
  reimported: number;
  /** The file's size before the damage, and where a cut left it. */
  file: { size: number; cutAt: number | null };
}

/** Damages a fresh database with `damage`, then loads it, opens it as a Memory and salvages it. */
async function damaged(backend: 'opfs' | 'idb', passphrase: string | null, damage: 'flip' | 'truncate'): Promise<Outcome> {
  const name = `bad-${backend}-${passphrase ? 'enc' : 'plain'}-${damage}-${cases++}`;
  const { leaf, size } = await page.evaluate(([b, n, p, count, t]) => window.corruptLab.create(b, n, p, count, t), [backend, name, passphrase, N, TARGET] as const);
  if (damage === 'flip') await page.evaluate(([b, n, o]) => window.corruptLab.flipBit(b, n, o), [backend, name, leaf.offset] as const);
  // Cut right after the page holding the target: the tables' root pages come first (pages 2–11, made when the schema
  // was), then the memories' leaves in rowid order, so the rows up to the target's page are left and the rest are gone.
  const cutAt = damage === 'truncate' ? leaf.offset + leaf.length : null;
  if (cutAt !== null) await page.evaluate(([b, n, s]) => window.corruptLab.truncate(b, n, s), [backend, name, cutAt] as const);
  const load: Outcome['load'] = await page.evaluate(([b, n, p]) => window.corruptLab.load(b, n, p) as Promise<Outcome['load']>, [backend, name, passphrase] as const);
  return page.evaluate(
    async ([b, n, p, count]) => {
      const { createMemory, salvageMemory, isEngramError, sealBackup, openBackup } = window.engram;
      const encryption = p === null ? null : { passphrase: p };
      let memory: Outcome['memory'] = { code: null, quickCheck: null };
      try {
        await (await createMemory({ name: n, storage: b, embedder: null, encryption, persist: false })).close();
      } catch (error) {
        memory = { code: isEngramError(error) ? error.code : String(error), quickCheck: isEngramError(error) ? error.details?.quickCheck : null };
      }
      let salvage: Outcome['salvage'];
      let reimported = -1;
      try {
        const report = await salvageMemory({ name: n, storage: b, encryption });
        const expected = new Map(Array.from({ length: count }, (_, i) => [`m${i}`, `memory ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(6)}${i}`]));
        salvage = {
          ids: report.records.map((r) => r.id),
          wrongTexts: report.records.filter((r) => expected.get(r.id) !== r.text).length,
          lost: report.lost,
          quickCheck: report.quickCheck,
        };
        const fresh = await createMemory({ name: `${n}-new`, storage: b, embedder: null, encryption, persist: false });
        // Through an encrypted backup file, as an app would keep what it salvaged.
        const file = await sealBackup(report.records, 'backup passphrase', { iterations: 100_000 });
        await fresh.import(await openBackup(file, 'backup passphrase'));
        reimported = await fresh.count();
        await fresh.close();
      } catch (error) {
        salvage = { code: isEngramError(error) ? error.code : String(error), message: String(error) };
      }
      return { memory, salvage, reimported };
    },
    [backend, name, passphrase, N] as const,
  ).then((rest) => ({ load, ...rest, file: { size, cutAt } }) as Outcome);
}

/** The rowids (id m<i> has rowid i + 1) missing from the salvage must be exactly those reported lost. */
function checkSalvage(outcome: Outcome, expectLost: (rowids: number[]) => void): void {
  expect(outcome.salvage, JSON.stringify(outcome.salvage)).not.toHaveProperty('code');
  const salvage = outcome.salvage as Exclude<Outcome['salvage'], { code: string }>;
  expect(salvage.wrongTexts).toBe(0);
  expect(new Set(salvage.ids).size).toBe(salvage.ids.length);
  const kept = new Set(salvage.ids.map((id) => Number(id.slice(1)) + 1));
  const missing = Array.from({ length: N }, (_, i) => i + 1).filter((rowid) => !kept.has(rowid));
  const inLost = (rowid: number) => salvage.lost.some((range) => rowid >= range.from && (range.to === null || rowid <= range.to));
  expect(missing.filter((rowid) => !inLost(rowid))).toEqual([]);
  expect([...kept].filter(inLost)).toEqual([]);
  expectLost(missing);
  expect(salvage.quickCheck.length).toBeGreaterThan(0);
  expect(outcome.reimported).toBe(salvage.ids.length);
}

function checkRefused(outcome: Outcome): void {
  expect(outcome.load, JSON.stringify(outcome.load)).toMatchObject({ code: 'STORE_CORRUPT' });
  const findings = outcome.load.details?.quickCheck as string[];
  expect(findings.length).toBeGreaterThan(0);
  expect(findings).not.toEqual(['ok']);
  expect(outcome.memory.code).toBe('STORE_CORRUPT');
  expect(outcome.memory.quickCheck).toEqual(findings);
}

describe.each([
  ['opfs', null],
  ['idb', null],
  ['opfs', 'correct horse battery staple'],
  ['idb', 'correct horse battery staple'],
] as const)('a damaged database on %s (passphrase: %s)', (backend, passphrase) => {
  test('a flipped bit in a page of the memories table: STORE_CORRUPT with quick_check findings; salvage keeps every other memory', async () => {
    const outcome = await damaged(backend, passphrase, 'flip');
    checkRefused(outcome);
    checkSalvage(outcome, (missing) => {
      // One leaf's rows, around the target, and nothing else.
      expect(missing).toContain(TARGET);
      expect(missing.length).toBeLessThan(N / 4);
      expect(missing.at(-1)! - missing[0]!).toBe(missing.length - 1);
    });
  });

  test('a file cut short: STORE_CORRUPT; salvage keeps the memories on the pages left', async () => {
    const outcome = await damaged(backend, passphrase, 'truncate');
    checkRefused(outcome);
    expect(outcome.file.cutAt).toBeLessThan(outcome.file.size);
    checkSalvage(outcome, (missing) => {
      // The target's page is the last one left: every row up to it comes back, every row after it is lost.
      expect(missing[0]).toBeGreaterThan(TARGET);
      expect(missing).toEqual(Array.from({ length: N - missing[0]! + 1 }, (_, i) => missing[0]! + i));
    });
  });
});

describe.each([null, 'correct horse battery staple'] as const)('a WAL cut short on OPFS (passphrase: %s)', (passphrase) => {
  test('a worker killed after three commits, its WAL cut inside the last one: the open keeps the commits before it, whole, with no error', async () => {
    const name = `wal-${passphrase ? 'enc' : 'plain'}-${cases++}`;
    // Three adds, then the worker is killed: its WAL is left, holding the three commits not yet checkpointed.
    await page.evaluate(
      async ([n, p]) => {
        const worker = new Worker(new URL('/worker/index.ts', location.origin), { type: 'module' });
        const memory = await window.engram.createMemory({ name: n, storage: 'opfs', embedder: null, worker, persist: false, encryption: p === null ? null : { passphrase: p } });
        for (let batch = 0; batch < 3; batch++) {
          await memory.add(Array.from({ length: 40 }, (_, i) => ({ id: `b${batch}-${i}`, text: `batch ${batch} memory ${i}: ${'lorem ipsum dolor sit amet '.repeat(8)}` })));
        }
        worker.terminate();
      },
      [name, passphrase] as const,
    );
    const wal = await page.evaluate((n) => window.corruptLab.walCommits(n), name);
    expect(wal.commitEnds.length).toBeGreaterThanOrEqual(3);
    const lastEnd = wal.commitEnds.at(-1)!;
    // Half of the last commit's last frame is gone, as if the crash came while it was written.
    await page.evaluate(([n, at]) => window.corruptLab.truncateWal(n, at), [name, lastEnd - Math.floor(wal.frameSize / 2)] as const);
    const outcome = await page.evaluate(
      async ([n, p]) => {
        try {
          const memory = await window.engram.createMemory({ name: n, storage: 'opfs', embedder: null, persist: false, encryption: p === null ? null : { passphrase: p } });
          const records = await memory.export();
          await memory.close();
          return { code: null, ids: records.map((r) => r.id), wrong: records.filter((r) => !r.text.startsWith(`batch ${r.id.slice(1, 2)} memory ${r.id.split('-')[1]}:`)).length };
        } catch (error) {
          return { code: window.engram.isEngramError(error) ? error.code : String(error), ids: [], wrong: 0 };
        }
      },
      [name, passphrase] as const,
    );
    expect(outcome.code).toBeNull();
    expect(outcome.wrong).toBe(0);
    // Whole batches only (each add is one transaction), in order: at least the first two, which committed before the cut.
    const batches = new Set(outcome.ids.map((id) => id.split('-')[0]));
    expect(outcome.ids.length).toBe(batches.size * 40);
    expect([...batches].sort()).toEqual(['b0', 'b1', 'b2'].slice(0, batches.size));
    expect(batches.size).toBeGreaterThanOrEqual(2);
  });
});

describe('an older copy of a page put back (a documented limit: docs/worker.md, "What it does not protect against")', () => {
  for (const backend of ['opfs', 'idb'] as const) {
    for (const passphrase of [null, 'correct horse battery staple'] as const) {
      test(`${backend}, ${passphrase ? 'encrypted' : 'plain'}: the open does not notice, and the page's older rows come back`, async () => {
        const name = `rollback-${backend}-${passphrase ? 'enc' : 'plain'}`;
        const { leaf } = await page.evaluate(([b, n, p, count, t]) => window.corruptLab.create(b, n, p, count, t), [backend, name, passphrase, N, TARGET] as const);
        const older = await page.evaluate(([b, n, o, l]) => window.corruptLab.readBytes(b, n, o, l).then((bytes) => [...bytes]), [backend, name, leaf.offset, leaf.length] as const);
        const original = `memory ${TARGET - 1}: `;
        const changed = (await page.evaluate(([b, n, p]) => window.corruptLab.texts(b, n, p), [backend, name, passphrase] as const))[`m${TARGET - 1}`]!.replace(original, 'CHANGED: ');
        await page.evaluate(([b, n, p, i, t]) => window.corruptLab.rewrite(b, n, p, i, t), [backend, name, passphrase, TARGET - 1, changed] as const);
        expect((await page.evaluate(([b, n, p]) => window.corruptLab.texts(b, n, p), [backend, name, passphrase] as const))[`m${TARGET - 1}`]).toBe(changed);

        await page.evaluate(([b, n, o, bytes]) => window.corruptLab.writeBytes(b, n, o, new Uint8Array(bytes)), [backend, name, leaf.offset, older] as const);
        const load = await page.evaluate(([b, n, p]) => window.corruptLab.load(b, n, p) as Promise<Outcome['load']>, [backend, name, passphrase] as const);
        expect(load.code).toBeNull();
        const after = await page.evaluate(([b, n, p]) => window.corruptLab.texts(b, n, p), [backend, name, passphrase] as const);
        // The page's tag (encrypted) proves it was written under the key, not that it is the latest write of it.
        expect(after[`m${TARGET - 1}`]!.startsWith(original)).toBe(true);
        expect(Object.keys(after)).toHaveLength(N);
      });
    }
  }
});
