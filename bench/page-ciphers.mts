/**
 * `npx tsx bench/page-ciphers.mts`: what each SQLite3 Multiple Ciphers page cipher costs in WebAssembly, against no
 * cipher: 20,000 rows of a 300-character text and a 384-d float32 vector (1,536 bytes), written in transactions of
 * 1,000 in WAL mode with 16 KB pages, then read back whole after a reopen. In Node (the same V8 as Chromium) over
 * wa-sqlite's MemoryVFS, so only SQLite and the cipher are timed. Medians of 3; docs/worker.md quotes the result.
 */
import SQLiteESMFactory from '@journeyapps/wa-sqlite/dist/mc-wa-sqlite.mjs';
import * as SQLite from '@journeyapps/wa-sqlite';
import { MemoryVFS } from '@journeyapps/wa-sqlite/src/examples/MemoryVFS.js';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
const module = await SQLiteESMFactory({ wasmBinary: readFileSync('node_modules/@journeyapps/wa-sqlite/dist/mc-wa-sqlite.wasm') });
const sqlite3 = SQLite.Factory(module);
// wa-sqlite's bundled declaration of MemoryVFS predates its static `create`.
const vfs = await (MemoryVFS as unknown as { create(name: string, module: unknown): Promise<SQLiteVFS> }).create('mem', module);
sqlite3.vfs_register(vfs, true);
(module as { ccall(...args: unknown[]): number }).ccall('sqlite3mc_vfs_create', 'number', ['string', 'number'], ['mem', 0]);
const N = 20000;
const text = 'x'.repeat(300);
const blob = new Uint8Array(1536).map((_, i) => i);
async function run(cipher: string | null, tag: string) {
  const name = `db-${tag}-${Math.random()}`;
  const db = await sqlite3.open_v2(name, SQLite.SQLITE_OPEN_CREATE | SQLite.SQLITE_OPEN_READWRITE, 'multipleciphers-mem');
  if (cipher) await sqlite3.exec(db, `PRAGMA cipher='${cipher}'; PRAGMA key = "x'${'ab'.repeat(32)}'"`);
  await sqlite3.exec(db, `PRAGMA page_size=16384; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA cache_size=-16000; CREATE TABLE t(id INTEGER PRIMARY KEY, x TEXT, v BLOB)`);
  let t = performance.now();
  for (let start = 0; start < N; start += 1000) {
    await sqlite3.exec(db, 'BEGIN');
    for await (const stmt of sqlite3.statements(db, 'INSERT INTO t(x, v) VALUES (?, ?)')) {
      for (let i = 0; i < 1000; i++) { sqlite3.bind_collection(stmt, [text + i, blob]); await sqlite3.step(stmt); await sqlite3.reset(stmt); }
    }
    await sqlite3.exec(db, 'COMMIT');
  }
  await sqlite3.exec(db, 'PRAGMA wal_checkpoint(TRUNCATE)');
  const write = performance.now() - t;
  await sqlite3.close(db);
  const db2 = await sqlite3.open_v2(name, SQLite.SQLITE_OPEN_READWRITE, 'multipleciphers-mem');
  if (cipher) await sqlite3.exec(db2, `PRAGMA cipher='${cipher}'; PRAGMA key = "x'${'ab'.repeat(32)}'"`);
  await sqlite3.exec(db2, 'PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-16000');
  t = performance.now();
  let bytes = 0;
  await sqlite3.exec(db2, 'SELECT x, v FROM t', (row: SQLiteCompatibleType[]) => { bytes += String(row[0]).length + (row[1] as Uint8Array).length; });
  const read = performance.now() - t;
  await sqlite3.close(db2);
  return { write, read };
}
const ciphers: [string | null, string][] = [[null, 'plain'], ['chacha20', 'chacha20'], ['sqlcipher', 'sqlcipher'], ['aes256cbc', 'aes256cbc'], ['aegis', 'aegis']];
const results: Record<string, { write: number[]; read: number[] }> = {};
for (let r = 0; r < 3; r++) for (const [c, tag] of ciphers) {
  try { const x = await run(c, tag); (results[tag] ??= { write: [], read: [] }).write.push(x.write); results[tag]!.read.push(x.read); } catch (e) { console.log(tag, String(e)); }
}
const med = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
for (const [tag, r] of Object.entries(results)) console.log(tag, 'write', med(r.write).toFixed(0), 'ms; read all', med(r.read).toFixed(0), 'ms');
console.log('load', loadavg().map((x) => x.toFixed(1)).join(' '));
