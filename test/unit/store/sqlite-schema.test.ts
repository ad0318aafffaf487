/** Schema migrations on a real SQLite file (Node's store shares the browser's schema). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, openNodeStore } from '../../../src/node.js';
import { SCHEMA_VERSION } from '../../../src/store/sqlite-schema.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('migration to schema 5', () => {
  it("gives formation's earlier facts and summaries their kind, and leaves every other memory as it was", async () => {
    const path = join(dir, 'memories.sqlite3');
    const before = await createEngine({ store: await openNodeStore({ path }) });
    await before.import([
      { id: 'fact', text: 'The user lives in Porto', meta: { formation: 'fact' } },
      { id: 'summary', text: "Grandma's garden", meta: { formation: 'summary' } },
      { id: 'own', text: 'a note of the app', kind: 'note', meta: { formation: 'fact' } },
      { id: 'other', text: 'a plain memory', meta: { formation: 'draft' } },
      { id: 'plain', text: 'no meta at all' },
    ]);
    await before.close();
    // As a database written before the kinds: user_version 4, formation's memories without a kind.
    const raw = new Database(path);
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    raw.exec('ALTER TABLE state DROP COLUMN vector_counter');
    raw.pragma('user_version = 4');
    raw.close();

    const after = await createEngine({ store: await openNodeStore({ path }) });
    const kinds = Object.fromEntries((await after.export()).map((r) => [r.id, r.kind]));
    expect(kinds).toEqual({ fact: 'fact', summary: 'summary', own: 'note', other: undefined, plain: undefined });
    expect((await after.search('Porto', { touch: false, filter: { kinds: ['fact'] } })).hits.map((h) => h.id)).toEqual(['fact']);
    await after.close();
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    check.close();
  });
});
