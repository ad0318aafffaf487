/**
 * Fuzz and crash campaigns through `createMemory` in real Chromium, on OPFS:
 * 1. a model-based fuzzer: random operations, hostile values among them, checked against a plain model of what
 *    must be stored;
 * 2. a crash loop: the worker terminated or the page reloaded in the middle of writes;
 * 3. four tabs writing at once while tabs (the leader among them) close at random, and a hostile page posts
 *    malformed and forged messages on the tabs' channel.
 * Short by default; ENGRAM_CAMPAIGN=long runs the sizes the notes quote. Each prints its seed
 * (ENGRAM_CAMPAIGN_SEED replays it) and writes its figures to test-results/campaign-*.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { launchPersistent, recordRequests, tempProfileDir } from './harness.js';
import { openLab } from './pages/memory-lab.js';
import { HOSTILE_KINDS, runOp, type Op, type Outcome } from './campaign/page-ops.js';
import { campaignSeed, LONG, Random, words } from './campaign/random.js';

const profile = tempProfileDir();
let context: BrowserContext;
let requests: ReturnType<typeof recordRequests>;

beforeAll(async () => {
  context = await launchPersistent(profile.dir, { webgpu: false });
  requests = recordRequests(context);
});

afterAll(async () => {
  await context?.close();
  profile.dispose();
});

/** A call with no answer in this long is a hang (the library's own timeouts are at most 120 s). */
const HANG_MS = 150_000;
const CAMPAIGN_MS = LONG ? 4 * 3_600_000 : 900_000;

function report(name: string, figures: Record<string, unknown>): void {
  console.log(`[campaign ${name}] ${JSON.stringify(figures)}`);
  mkdirSync('test-results', { recursive: true });
  writeFileSync(`test-results/campaign-${name}.json`, `${JSON.stringify(figures, null, 2)}\n`);
}

/** Refusals by code; a refusal without a code is a defect, and so is a hang. */
class Tally {
  readonly refusals: Record<string, number> = {};
  readonly uncoded: string[] = [];
  readonly hangs: string[] = [];

  note(what: string, outcome: Outcome): void {
    if (outcome.ok) return;
    if (outcome.timedOut) this.hangs.push(what);
    else if (outcome.code) this.refusals[outcome.code] = (this.refusals[outcome.code] ?? 0) + 1;
    else this.uncoded.push(`${what}: ${outcome.message}`);
  }
}

describe('model-based fuzzer', () => {
  test('random operations with hostile values: every refusal coded, nothing acknowledged lost, every live memory found', { timeout: CAMPAIGN_MS }, async () => {
    const seed = campaignSeed();
    const random = new Random(seed);
    const operations = LONG ? 5000 : 400;
    const name = `fuzz-${seed}`;
    const page = await openLab(context);
    const tally = new Tally();
    /** What must be stored: id → text (null when a hostile value made it unknowable) and pinned. */
    const model = new Map<string, { text: string | null; pinned: boolean }>();
    const unexpected: string[] = [];
    let serial = 0;
    const token = () => `fz${seed.toString(36)}x${serial++}`;
    const validText = () => {
      const unique = token();
      return { unique, text: `${words(random, random.int(1, 6))} ${unique} ${words(random, random.int(0, 6))}` };
    };
    const live = () => [...model.keys()];
    const checkable = () => [...model.entries()].filter(([, entry]) => entry.text !== null).map(([id]) => id);
    const slow: string[] = [];
    const run = async (op: Op) => {
      const started = Date.now();
      const outcome = await runOp(page, 'f', name, op, HANG_MS);
      if (Date.now() - started > 2000) slow.push(`${'kind' in op ? `${op.op} ${op.kind}` : op.op}: ${Date.now() - started} ms`);
      tally.note('kind' in op ? `${op.op} ${op.kind}` : op.op, outcome);
      return outcome;
    };
    const must = async (op: Op, why: string): Promise<unknown> => {
      const outcome = await run(op);
      if (!outcome.ok) unexpected.push(`${why}: ${outcome.message}`);
      return outcome.ok ? outcome.value : undefined;
    };

    const verify = async (stage: string) => {
      expect(await must({ op: 'count' }, `${stage} count`), `${stage}: count`).toBe(model.size);
      for (const id of random.sample(checkable(), 12)) {
        const record = (await must({ op: 'get', id }, `${stage} get`)) as { text: string; pinned: boolean } | null;
        expect(record, `${stage}: ${id} was acknowledged`).not.toBeNull();
        expect(record?.text).toBe(model.get(id)?.text);
        expect(record?.pinned).toBe(model.get(id)?.pinned);
      }
      for (const id of random.sample(checkable(), 8)) {
        const unique = /fz[0-9a-z]+x\d+/.exec(model.get(id)!.text!)![0];
        const hits = (await must({ op: 'search', query: unique, options: { k: 10 } }, `${stage} search`)) as string[];
        expect(hits, `${stage}: search for ${unique} finds ${id}`).toContain(id);
      }
    };

    await must({ op: 'reopen' }, 'open');
    for (let i = 0; i < operations; i++) {
      const roll = random.next();
      const ids = live();
      if (roll < 0.3 || ids.length < 5) {
        const items = Array.from({ length: random.int(1, 4) }, () => {
          const { text } = validText();
          return { text, tags: random.sample(['home', 'work', 'ops', 'family'], random.int(0, 2)), ...(random.chance(0.3) ? { project: random.pick(['infra', 'garden']) } : {}) };
        });
        const added = (await must({ op: 'add', items }, 'valid add')) as string[] | undefined;
        added?.forEach((id, index) => model.set(id, { text: items[index]!.text, pinned: false }));
      } else if (roll < 0.4) {
        const outcome = await run({ op: 'add-hostile', kind: random.pick(HOSTILE_KINDS), token: token() });
        if (outcome.ok) for (const id of outcome.value as string[]) model.set(id, { text: null, pinned: false });
      } else if (roll < 0.5) {
        const id = random.pick(ids);
        const { text } = validText();
        if ((await run({ op: 'update', id, text })).ok) model.set(id, { ...model.get(id)!, text });
        else unexpected.push(`valid update of ${id} refused`);
      } else if (roll < 0.55) {
        const id = random.pick(ids);
        if ((await run({ op: 'update-hostile', id, kind: random.pick(HOSTILE_KINDS), token: token() })).ok) model.set(id, { ...model.get(id)!, text: null });
      } else if (roll < 0.63) {
        const gone = random.sample(ids, random.int(1, 3));
        const removed = await must({ op: 'remove', ids: [...gone, `missing-${serial++}`] }, 'remove');
        if (removed !== undefined) gone.forEach((id) => model.delete(id));
      } else if (roll < 0.68) {
        const id = random.pick(ids);
        const pinned = random.chance(0.5);
        if ((await must({ op: 'pin', id, pinned }, 'pin')) !== undefined) model.set(id, { ...model.get(id)!, pinned });
      } else if (roll < 0.72) {
        const items = Array.from({ length: random.int(1, 5) }, () => ({ id: `im-${seed}-${serial++}`, text: validText().text, tags: [] }));
        if ((await must({ op: 'import', items }, 'import')) !== undefined) for (const item of items) model.set(item.id, { text: item.text, pinned: false });
      } else if (roll < 0.92) {
        const options = { k: random.int(1, 20), ...(random.chance(0.2) ? { project: 'infra' } : {}), ...(random.chance(0.2) ? { fusion: 'rrf' } : {}) };
        await must({ op: 'search', query: words(random, random.int(1, 4)), options }, 'valid search');
      } else if (roll < 0.96) {
        await run({ op: 'search', query: random.chance(0.5) ? 'garden \ud800' : 'x'.repeat(random.int(1, 50_000)), options: 'hostile' });
      } else {
        await must({ op: 'get', id: random.pick(ids) }, 'get');
      }
      if (i % 50 === 49) await verify(`after op ${i + 1}`);
      if (i % 150 === 149) {
        await must({ op: 'reopen' }, 'reopen');
        await verify(`after reopen at op ${i + 1}`);
      }
    }
    await must({ op: 'reopen' }, 'final reopen');
    await verify('final');
    const exported = (await must({ op: 'export' }, 'export')) as { id: string }[];
    const missing = [...model.keys()].filter((id) => !exported.some((record) => record.id === id));
    report('fuzz', { seed, operations, live: model.size, refusals: tally.refusals, uncoded: tally.uncoded.length, hangs: tally.hangs.length, lost: missing.length, unexpected: unexpected.length, slow });
    expect(unexpected, 'valid operations refused').toEqual([]);
    expect(tally.uncoded, 'refusals without a code').toEqual([]);
    expect(tally.hangs, 'calls with no answer').toEqual([]);
    expect(missing, 'acknowledged memories missing').toEqual([]);
    expect(exported.length).toBe(model.size);
    await page.close();
  });
});

describe('crash loop', () => {
  test('workers terminated and pages reloaded mid-write: acknowledged writes kept, no batch half-stored, index agrees', { timeout: CAMPAIGN_MS }, async () => {
    const seed = campaignSeed();
    const random = new Random(seed);
    const cycles = LONG ? 60 : 12;
    const name = `crash-loop-${seed}`;
    let page = await openLab(context);
    /** batch number → its size, for batches whose add resolved. */
    const acknowledged = new Map<number, number>();
    const figures = { kills: 0, reloads: 0, cut: 0, wholeUnacknowledged: 0, lostAcknowledged: 0, halfStored: 0 };
    for (let cycle = 0; cycle < cycles; cycle++) {
      const size = random.int(20, 400);
      const items = Array.from({ length: size }, (_, i) => ({ id: `b${cycle}-${i}`, text: `crash batch cb${seed.toString(36)}y${cycle} item ci${cycle}z${i} ${words(random, 3)}` }));
      const delay = random.int(0, 150);
      const reload = random.chance(0.3);
      const write = page.evaluate(
        async ([name, items, delay, reload]) => {
          const worker = new Worker(new URL('/worker/index.ts', location.origin), { type: 'module' });
          const memory = await window.engram.createMemory({ name, worker, embedder: null });
          return new Promise<boolean>((resolve) => {
            memory.add(items).then(
              () => resolve(true),
              () => resolve(false),
            );
            if (!reload) setTimeout(() => (worker.terminate(), resolve(false)), delay);
          });
        },
        [name, items, delay, reload] as const,
      );
      let stored: boolean;
      if (reload) {
        await page.waitForTimeout(delay + 50);
        stored = await Promise.race([write, page.reload().then(() => false)]).catch(() => false);
        figures.reloads++;
        await page.waitForFunction(() => window.engram !== undefined);
      } else {
        stored = await write;
        figures.kills++;
      }
      if (stored) acknowledged.set(cycle, size);

      // Reopened with the library's own worker: what is stored, and does the index agree?
      const check = await page.evaluate(
        async ([name, cycle, token]) => {
          const memory = await window.engram.createMemory({ name, embedder: null });
          const ids = new Set((await memory.export()).map((record) => record.id));
          const hits = (await memory.search(token, { k: 5 })).hits.length;
          const count = await memory.count();
          await memory.close();
          const ofBatch = (batch: number) => [...ids].filter((id) => id.startsWith(`b${batch}-`)).length;
          return { count, perBatch: Array.from({ length: cycle + 1 }, (_, batch) => ofBatch(batch)), hits };
        },
        [name, cycle, `cb${seed.toString(36)}y${cycle}`] as const,
      );
      const thisBatch = check.perBatch[cycle]!;
      if (thisBatch !== 0 && thisBatch !== size) figures.halfStored++;
      if (stored && thisBatch !== size) figures.lostAcknowledged++;
      if (!stored && thisBatch === size) figures.wholeUnacknowledged++;
      if (!stored && thisBatch === 0) figures.cut++;
      // A batch that landed stays landed: keep it in the expectations from now on.
      if (thisBatch === size) acknowledged.set(cycle, size);
      for (const [batch, batchSize] of acknowledged) expect(check.perBatch[batch], `batch ${batch} after cycle ${cycle}`).toBe(batchSize);
      expect(check.count).toBe([...acknowledged.values()].reduce((sum, n) => sum + n, 0));
      expect(check.hits, `the index finds batch ${cycle}`).toBe(thisBatch === 0 ? 0 : 5);
    }
    report('crash', { seed, cycles, ...figures });
    expect(figures.halfStored).toBe(0);
    expect(figures.lostAcknowledged).toBe(0);
    await page.close();
  });
});

describe('four tabs and a hostile page', () => {
  test('tabs write at once while tabs (the leader among them) close at random: no lost write, no hang, no tab stuck', { timeout: CAMPAIGN_MS }, async () => {
    const seed = campaignSeed();
    const random = new Random(seed);
    const name = `tabs-${seed}`;
    const rounds = LONG ? 40 : 8;
    const open = async (): Promise<Page> => {
      const page = await openLab(context);
      await page.evaluate(async (name) => {
        window.memories.t = await window.engram.createMemory({ name, embedder: null });
      }, name);
      return page;
    };
    const tabs = await Promise.all([open(), open(), open(), open()]);
    const hostile = await openLab(context);
    await hostile.evaluate((name) => {
      const channel = new BroadcastChannel(`engram:opfs:${name}`);
      const forged = [
        null,
        42,
        'call',
        {},
        { t: 'call' },
        { t: 'leader' },
        { t: 'leader', leader: 'nobody' },
        { t: 'leaving', leader: 'nobody' },
        { t: 'done', to: 'x', seq: 1, value: 1 },
        { t: 'call', from: 'evil', to: 'x', seq: 1, method: 'commit', args: [], retry: false },
        { t: 'call', from: 'evil', to: 'x', seq: 2, method: 'close', args: [], retry: false },
      ];
      let i = 0;
      setInterval(() => channel.postMessage(forged[i++ % forged.length]), 20);
    }, name);

    const acknowledged: string[][] = [];
    const figures = { batches: 0, closedTabs: 0, refusals: {} as Record<string, number>, hangs: 0, lost: 0, halfStored: 0 };
    let serial = 0;
    for (let round = 0; round < rounds; round++) {
      const writes = tabs.map(async (tab) => {
        const batch = `t${round}-${serial++}`;
        const ids = Array.from({ length: 20 }, (_, i) => `${batch}-${i}`);
        const outcome = await runOp(tab, 't', name, { op: 'add', items: ids.map((id) => ({ id, text: `tab write ${id}`, tags: [] })) }, HANG_MS).catch(() => null);
        figures.batches++;
        if (outcome?.ok) acknowledged.push(ids);
        else if (outcome && !outcome.ok) {
          if (outcome.timedOut) figures.hangs++;
          else figures.refusals[outcome.code ?? 'uncoded'] = (figures.refusals[outcome.code ?? 'uncoded'] ?? 0) + 1;
        }
      });
      // Close one tab at random while they write (the first one opened is the leader until it goes).
      await new Promise((resolve) => setTimeout(resolve, random.int(0, 100)));
      const victim = random.int(0, tabs.length - 1);
      await tabs[victim]!.close();
      figures.closedTabs++;
      await Promise.all(writes);
      tabs[victim] = await open();
    }

    // Every tab still answers, and the store holds every acknowledged write, whole.
    for (const tab of tabs) {
      const count = await runOp(tab, 't', name, { op: 'count' }, HANG_MS);
      expect(count.ok, 'a tab answers after the campaign').toBe(true);
    }
    const exported = await runOp(tabs[0]!, 't', name, { op: 'export' }, HANG_MS);
    expect(exported.ok).toBe(true);
    const stored = new Set((exported.ok ? (exported.value as { id: string }[]) : []).map((record) => record.id));
    const lost: string[] = [];
    for (const ids of acknowledged) {
      const present = ids.filter((id) => stored.has(id)).length;
      if (present !== ids.length) lost.push(`${ids[0]}: ${present} of ${ids.length} stored`);
    }
    figures.lost = lost.length;
    const batches = new Map<string, number>();
    for (const id of stored) batches.set(id.slice(0, id.lastIndexOf('-')), (batches.get(id.slice(0, id.lastIndexOf('-'))) ?? 0) + 1);
    figures.halfStored = [...batches.values()].filter((n) => n !== 20).length;
    report('tabs', { seed, rounds, acknowledged: acknowledged.length, ...figures });
    expect(lost, 'acknowledged batches missing').toEqual([]);
    expect(figures.halfStored).toBe(0);
    expect(figures.hangs).toBe(0);
    expect(figures.refusals.uncoded ?? 0).toBe(0);
    for (const tab of tabs) await tab.close();
    await hostile.close();
  });
});

test('no request left the page origin', () => {
  expect(requests.foreign()).toEqual([]);
});
