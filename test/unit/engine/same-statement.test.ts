/**
 * Which memory add may hide on its own (supersede 'same', the default): only one that says the same thing, in the
 * same project, scope and kind, never a pinned one. Distinct notes that embed alike (a flight number, a locker, a
 * PIN) stay visible and findable with the built-in model; the old cosine folding is opt-in ('similar') and even
 * then never crosses other numbers, names or negations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbedder } from '../../../src/embedder/index.js';
import { createEngine } from '../../../src/engine/engine.js';
import { statementKey, sameDetails } from '../../../src/lexical/statement.js';
import { openNodeStore } from '../../../src/store/node/file-store.js';
import type { Embedder, MemoryInput } from '../../../src/types.js';
import { runs } from '../helpers/tier.js';

/** Twenty pairs of everyday notes, each pair differing in an identifier, a number or a name, with a query naming the detail of each note and one both answer. */
const PAIRS: { a: string; b: string; qa: string; qb: string; both: string }[] = [
  { a: 'Flight LH1234 departs at 09:40 from gate B12', b: 'Flight LH5678 departs at 11:15 from gate C3', qa: 'flight LH1234 gate', qb: 'flight LH5678 gate', both: 'flight departs from gate' },
  { a: 'Locker 5 at the gym opens with the code word ember', b: 'Locker 7 at the gym opens with the code word garnet', qa: 'locker 5 code word', qb: 'locker 7 code word', both: 'locker code word at the gym' },
  { a: 'My bank PIN is 4821', b: 'My bank PIN is 9917', qa: 'PIN 4821', qb: 'PIN 9917', both: 'bank PIN' },
  { a: 'Hotel confirmation number is HX-20931 for the Lisbon trip', b: 'Hotel confirmation number is HX-77410 for the Porto trip', qa: 'hotel confirmation Lisbon', qb: 'hotel confirmation Porto', both: 'hotel confirmation number' },
  { a: 'The staging server IP is 10.0.3.17', b: 'The production server IP is 10.0.9.42', qa: 'staging server IP', qb: 'production server IP', both: 'server IP address' },
  { a: 'Dentist appointment with Dr Alvarez on March 3 at 14:00', b: 'Dentist appointment with Dr Okafor on March 9 at 10:30', qa: 'dentist Alvarez', qb: 'dentist Okafor', both: 'dentist appointment' },
  { a: 'The wifi password at the cabin is pinecone42', b: 'The wifi password at the office is harbour77', qa: 'cabin wifi password', qb: 'office wifi password', both: 'wifi password' },
  { a: 'Car parked on level 2, spot 214', b: 'Car parked on level 5, spot 518', qa: 'parked spot 214', qb: 'parked spot 518', both: 'where is the car parked' },
  { a: 'Invoice 3391 from Acme is due on the 15th', b: 'Invoice 4470 from Globex is due on the 28th', qa: 'invoice Acme', qb: 'invoice Globex', both: 'invoice due' },
  { a: 'Train to Berlin leaves from platform 4 at 7:05', b: 'Train to Munich leaves from platform 11 at 8:20', qa: 'train Berlin platform', qb: 'train Munich platform', both: 'train platform' },
  { a: 'Order 88213 ships with tracking code 1Z999AA1', b: 'Order 90045 ships with tracking code 1Z444BB2', qa: 'order 88213 tracking', qb: 'order 90045 tracking', both: 'order tracking code' },
  { a: 'Maya is allergic to peanuts', b: 'Liam is allergic to shellfish', qa: 'Maya allergy', qb: 'Liam allergy', both: 'who is allergic' },
  { a: 'The team standup is at 9:30 in room Aurora', b: 'The design review is at 15:00 in room Borealis', qa: 'standup room', qb: 'design review room', both: 'meeting room' },
  { a: 'Passport number X1234567 expires in 2029', b: 'Passport number Y7654321 expires in 2031', qa: 'passport X1234567', qb: 'passport Y7654321', both: 'passport expires' },
  { a: 'Grandma Rosa likes tulips', b: 'Grandma Edith likes orchids', qa: 'Rosa flowers', qb: 'Edith flowers', both: 'which flowers does grandma like' },
  { a: 'The spare key is with neighbour Tom at number 12', b: 'The spare key is with neighbour Priya at number 18', qa: 'spare key Tom', qb: 'spare key Priya', both: 'spare key neighbour' },
  { a: 'Rent of 1200 euros is paid on the 1st', b: 'Rent of 950 euros is paid on the 5th', qa: 'rent 1200', qb: 'rent 950', both: 'rent paid' },
  { a: 'The printer on floor 3 is model HP4050', b: 'The printer on floor 6 is model HP5200', qa: 'printer floor 3', qb: 'printer floor 6', both: 'printer model' },
  { a: 'Vaccination booster scheduled for June 12', b: 'Vaccination booster scheduled for October 20', qa: 'booster June', qb: 'booster October', both: 'vaccination booster' },
  { a: 'Bike lock combination is 3-7-1-9', b: 'Shed lock combination is 8-2-6-4', qa: 'bike lock combination', qb: 'shed lock combination', both: 'lock combination' },
];

let embedder: Embedder;
beforeAll(async () => {
  embedder = await createEmbedder();
});

describe('statement keys', () => {
  it('equal after case, punctuation, whitespace and stop words; numbers, identifiers and negations kept', () => {
    expect(statementKey('The meeting  moved to Tuesday.')).toBe(statementKey('the meeting moved to tuesday'));
    expect(statementKey('The user is allergic to penicillin')).not.toBe(statementKey('The user is not allergic to penicillin'));
    expect(statementKey("The user isn't allergic to penicillin")).toBe(statementKey('The user is not allergic to penicillin'));
    expect(statementKey('My bank PIN is 4821')).not.toBe(statementKey('My bank PIN is 9917'));
    expect(statementKey('gate B12')).not.toBe(statementKey('gate C3'));
    expect(statementKey('the and of')).toBe('');
    expect(statementKey('not the')).toBe('');
    expect(statementKey('orchard note a: pears ripen')).not.toBe(statementKey('orchard note d: pears ripen'));
    expect(statementKey('I like C++')).not.toBe(statementKey('I like C#'));
  });

  it('details: numbers, names and negations', () => {
    expect(sameDetails('Flight LH1234 at gate B12', 'flight LH1234 at gate B12!')).toBe(true);
    expect(sameDetails('Flight LH1234 departs at 09:40', 'Flight LH5678 departs at 09:40')).toBe(false);
    expect(sameDetails('The user lives in Porto', 'The user lives in Lisbon')).toBe(false);
    expect(sameDetails('She likes tea', 'She does not like tea')).toBe(false);
  });
});

describe('distinct notes are never hidden', () => {
  const notes = PAIRS.flatMap((p, i) => [{ id: `a${i}`, text: p.a }, { id: `b${i}`, text: p.b }]);

  for (const way of ['one per call', 'in a batch'] as const) {
    it(`none of 40 is superseded, added ${way}; a query naming the detail finds its note first; one both answer returns both`, async () => {
      let t = Date.UTC(2026, 0, 1);
      const engine = await createEngine({ embedder, clock: () => (t += 60_000) });
      if (way === 'one per call') for (const note of notes) await engine.add(note);
      else await engine.add(notes);
      expect((await engine.export()).filter((r) => r.supersededBy !== undefined)).toEqual([]);
      let first = 0;
      for (const [i, p] of PAIRS.entries()) {
        if ((await engine.search(p.qa, { touch: false })).hits[0]?.id === `a${i}`) first++;
        if ((await engine.search(p.qb, { touch: false })).hits[0]?.id === `b${i}`) first++;
        const both = (await engine.search(p.both, { k: 5, touch: false })).hits.map((h) => h.id);
        expect(both, p.both).toEqual(expect.arrayContaining([`a${i}`, `b${i}`]));
      }
      expect(first / 40).toBeGreaterThanOrEqual(0.95);
      await engine.close();
    });
  }

  it("'similar' (the old folding, opt-in) still keeps notes apart that differ in a number, a name or a negation", async () => {
    let t = Date.UTC(2026, 0, 1);
    const engine = await createEngine({ embedder, supersede: 'similar', supersedeThreshold: 0.5, clock: () => (t += 60_000) });
    for (const note of notes) await engine.add(note);
    expect((await engine.export()).filter((r) => r.supersededBy !== undefined)).toEqual([]);
    const [older] = await engine.add({ text: 'The user is allergic to penicillin' });
    const [negated] = await engine.add({ text: 'The user is not allergic to penicillin' });
    const [again] = await engine.add({ text: 'the user is not allergic to penicillin!' });
    const byId = new Map((await engine.export()).map((r) => [r.id, r]));
    expect(byId.get(older!)!.supersededBy).toBeUndefined();
    expect(byId.get(negated!)!.supersededBy).toBe(again);
    await engine.close();
  });
});

describe('what add may hide', () => {
  it('the same statement in the same project: the older is hidden, visibly, and deep recall finds it', async () => {
    let t = 1_000;
    const engine = await createEngine({ embedder, clock: () => (t += 1_000) });
    const [old] = await engine.add({ text: 'The staging server is on Hetzner.', project: 'infra' });
    const [fresh] = await engine.add({ text: 'the staging server is on hetzner', project: 'infra' });
    expect((await engine.get(old!))!.supersededBy).toBe(fresh);
    expect((await engine.search('staging server', { touch: false })).hits.map((h) => h.id)).toEqual([fresh]);
    // Deep recall reaches it (raw: the search's own duplicate drop would keep one of two that say the same).
    const deep = await engine.search('staging server', { deepRecall: true, raw: true, touch: false });
    expect(deep.hits.find((h) => h.id === old)?.explain.superseded).toBe(true);
    await engine.close();
  });

  it('"not allergic" never hides "allergic"; a pinned memory and another project are never hidden', async () => {
    let t = 1_000;
    const engine = await createEngine({ embedder, clock: () => (t += 1_000) });
    const [pinned] = await engine.add({ text: 'The user is allergic to penicillin', project: 'health', pinned: true });
    const [negation] = await engine.add({ text: 'The user is not allergic to penicillin', project: 'scratch' });
    const [sameOtherProject] = await engine.add({ text: 'The user is allergic to penicillin', project: 'scratch' });
    const [samePinned] = await engine.add({ text: 'the user is allergic to penicillin.', project: 'health' });
    const [otherScope] = await engine.add({ text: 'The user is allergic to penicillin', project: 'health', scope: 'family' });
    const live = (await engine.export()).filter((r) => r.supersededBy === undefined).map((r) => r.id);
    expect(live.sort()).toEqual([pinned, negation, sameOtherProject, samePinned, otherScope].map(String).sort());
    await engine.close();
  });

  it('equals the naive definition over random batches (projects, scopes, kinds, pins, ties)', async () => {
    const words = ['server', 'Staging', 'ip', 'not', 'the', 'is', '42'];
    const memory = fc.record({
      text: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
      day: fc.integer({ min: 0, max: 3 }),
      project: fc.constantFrom(undefined, 'a', 'b'),
      scope: fc.constantFrom(undefined, 's'),
      kind: fc.constantFrom(undefined, 'turn'),
      pinned: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(memory, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }), async (batches) => {
        let n = 0;
        const inputs: MemoryInput[][] = batches.map((batch) =>
          batch.map((m) => ({ id: `m${n++}`, text: m.text, createdAt: Date.UTC(2024, 0, 1) + m.day * 1000, pinned: m.pinned, ...(m.project ? { project: m.project } : {}), ...(m.scope ? { scope: m.scope } : {}), ...(m.kind ? { kind: m.kind } : {}) })),
        );
        // The definition: each new memory in order against the newest live memory of its group stored before it or earlier in its batch.
        type Row = MemoryInput & { supersededBy?: string };
        const rows: Row[] = [];
        for (const batch of inputs) {
          for (const input of batch) {
            const row: Row = { ...input };
            const key = statementKey(row.text);
            if (key) {
              const group = (r: Row) => JSON.stringify([r.project ?? null, r.scope ?? null, r.kind ?? null, statementKey(r.text)]);
              const holders = rows.filter((r) => r.supersededBy === undefined && group(r) === group(row));
              // The newest live holder (stored before this batch by createdAt, then batch order).
              const holder = holders.reduce<Row | undefined>((best, r) => (!best || (r.createdAt as number) >= (best.createdAt as number) ? r : best), undefined);
              if (holder) {
                const [older, newer] = (holder.createdAt as number) <= (row.createdAt as number) ? [holder, row] : [row, holder];
                if (!older.pinned) older.supersededBy = newer.id;
              }
            }
            rows.push(row);
          }
        }
        const engine = await createEngine();
        for (const batch of inputs) await engine.add(batch);
        const actual = new Map((await engine.export()).map((r) => [r.id, r.supersededBy]));
        expect(actual).toEqual(new Map(rows.map((r) => [r.id, r.supersededBy])));
        await engine.close();
      }),
      { numRuns: runs(100) },
    );
  });
});

describe('upgrade: memories the old rule hid become live again', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'engram-supersede-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('on open, once: unless what hides it says the same thing or carries a model or app decision (a provenance link)', async () => {
    const file = join(dir, 'old.db');
    // A database written under the old rule: marks as it made them ('similar' keeps them, as an app that asks for it).
    const old = await createEngine({ store: await openNodeStore({ path: file }), supersede: 'similar' });
    await old.import([
      { id: 'flight1', text: 'Flight LH1234 departs at 09:40 from gate B12', createdAt: 1_000, supersededBy: 'flight2' },
      { id: 'flight2', text: 'Flight LH5678 departs at 11:15 from gate C3', createdAt: 2_000 },
      { id: 'dup1', text: 'The meeting moved to Tuesday.', createdAt: 1_000, supersededBy: 'dup2' },
      { id: 'dup2', text: 'the meeting moved to tuesday', createdAt: 2_000 },
      { id: 'lisbon', text: 'The user lives in Lisbon', createdAt: 1_000, supersededBy: 'porto', kind: 'fact' },
      { id: 'porto', text: 'The user lives in Porto', createdAt: 2_000, kind: 'fact' },
      { id: 'turn', text: 'I moved to Porto last month', createdAt: 2_000, kind: 'turn' },
    ]);
    await old.link('porto', 'turn', 'derives_from');
    await old.close();

    const upgraded = await createEngine({ store: await openNodeStore({ path: file }) });
    const marks = new Map((await upgraded.export()).map((r) => [r.id, r.supersededBy]));
    expect(marks.get('flight1')).toBeUndefined();
    expect(marks.get('dup1')).toBe('dup2');
    expect(marks.get('lisbon')).toBe('porto');
    // Once: a mark made after the upgrade (by an app) stays on the next open.
    await upgraded.import([{ id: 'flight1', text: 'Flight LH1234 departs at 09:40 from gate B12', createdAt: 1_000, supersededBy: 'flight2' }]);
    await upgraded.close();
    const again = await createEngine({ store: await openNodeStore({ path: file }) });
    expect((await again.get('flight1'))!.supersededBy).toBe('flight2');
    await again.close();
  });
});
