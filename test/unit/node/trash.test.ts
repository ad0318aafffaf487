/** engram-mcp's trash on a real database file: forget moves, restore brings back, the days run out, versions are checked. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Trash } from '../../../src/node/trash.js';
import { createEngine, openNodeStore } from '../../../src/node.js';
import { DAY_MS } from '../../../src/util/time.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-trash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const everything = () => true;

async function open() {
  const store = await openNodeStore({ path: join(dir, `trash-${++files}.sqlite3`) });
  const engine = await createEngine({ store });
  return { store, engine };
}

it('forget removes from the engine and keeps the record; restore brings it back as it was, once', async () => {
  const { store, engine } = await open();
  const trash = new Trash(30);
  const [tulips, other] = await engine.add([
    { text: 'Grandma likes tulips', tags: ['family'], project: 'home', createdAt: '2024-05-01', pinned: true },
    { text: 'The boiler is serviced in May' },
  ]);
  const before = await engine.get(tulips!);
  expect(await trash.forget(engine, store, [before!])).toBe(1);
  expect(await engine.get(tulips!)).toBeNull();
  expect((await engine.search('tulips')).hits).toEqual([]);
  expect((await trash.list(store, everything)).map((entry) => entry.record.id)).toEqual([tulips]);

  expect(await trash.restore(engine, store, [tulips!, other!, 'never-there'], everything)).toEqual({ restored: [tulips], notFound: [other, 'never-there'], alreadyStored: [] });
  const after = await engine.get(tulips!);
  expect(after).toMatchObject({ text: before!.text, tags: ['family'], project: 'home', createdAt: before!.createdAt, pinned: true });
  expect((await engine.search('tulips')).hits.map((hit) => hit.memory.id)).toEqual([tulips]);
  expect(await trash.list(store, everything)).toEqual([]);
  expect(await store.readMeta('mcp.trash')).toBeNull();
  await engine.close();
});

it('an entry is restorable for the days given, then purged (the file no longer holds its text)', async () => {
  const { store, engine } = await open();
  const trash = new Trash(7);
  const [id] = await engine.add({ text: 'a note to forget' });
  const t0 = Date.UTC(2026, 0, 1);
  await trash.forget(engine, store, [(await engine.get(id!))!], t0);
  expect(await trash.list(store, everything, t0 + 7 * DAY_MS)).toHaveLength(1);
  await trash.purge(store, t0 + 7 * DAY_MS + 1);
  expect(await store.readMeta('mcp.trash')).toBeNull();
  expect(await trash.restore(engine, store, [id!], everything, t0 + 7 * DAY_MS + 2)).toMatchObject({ restored: [], notFound: [id] });
  await engine.close();
});

it('an interrupted forget (the memory in both places) restores nothing over the stored memory', async () => {
  const { store, engine } = await open();
  const trash = new Trash(30);
  const [id] = await engine.add({ text: 'kept and trashed' });
  const record = (await engine.get(id!))!;
  await store.write({ meta: { 'mcp.trash': JSON.stringify({ version: 1, entries: [{ forgottenAt: Date.now(), record }] }) } });
  expect(await trash.restore(engine, store, [id!], everything)).toEqual({ restored: [], notFound: [], alreadyStored: [id] });
  expect(await engine.count()).toBe(1);
  await engine.close();
});

it('what the caller may not see is neither listed nor restored', async () => {
  const { store, engine } = await open();
  const trash = new Trash(30);
  const ids = await engine.add([{ text: 'infra note', project: 'infra' }, { text: 'theatre note', project: 'theatre' }]);
  await trash.forget(engine, store, await Promise.all(ids.map(async (id) => (await engine.get(id))!)));
  const infra = (record: { project?: string }) => record.project === 'infra';
  expect((await trash.list(store, infra)).map((entry) => entry.record.text)).toEqual(['infra note']);
  expect(await trash.restore(engine, store, [ids[1]!], infra)).toMatchObject({ restored: [], notFound: [ids[1]] });
  await engine.close();
});

it('a trash of a newer version is SCHEMA_TOO_NEW, a damaged one STORE_FAILED; neither is overwritten', async () => {
  const { store, engine } = await open();
  const trash = new Trash(30);
  const [id] = await engine.add({ text: 'stays' });
  const record = (await engine.get(id!))!;
  for (const [value, code] of [[JSON.stringify({ version: 2, entries: [] }), 'SCHEMA_TOO_NEW'], ['{not json', 'STORE_FAILED'], ['null', 'STORE_FAILED'], [JSON.stringify({ version: 1, entries: [{}] }), 'STORE_FAILED']] as const) {
    await store.write({ meta: { 'mcp.trash': value } });
    await expect(trash.forget(engine, store, [record])).rejects.toMatchObject({ code });
    expect(await store.readMeta('mcp.trash')).toBe(value);
    expect(await engine.count()).toBe(1);
  }
  expect(() => new Trash(-1)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  await engine.close();
});
