/** The Node file store: the shared store spec on a real file, and two real processes on one file. */
import { fork } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isEngramError } from '../../../src/errors.js';
import { createEngine, openNodeStore } from '../../../src/node.js';
import { storeSpec } from '../../spec/store-spec.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-node-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(dir, `db-${++files}`, 'memories.sqlite3');

describe('store spec: openNodeStore()', () => {
  for (const c of storeSpec) {
    it(c.name, async () => {
      const path = freshPath();
      await c.run(() => openNodeStore({ path }));
    });
  }
});

/** A child process that opens `path`, adds `count` memories one write each and reports every acknowledged id. */
function child(path: string, count: number, holdMs = 0): Promise<{ acked: string[]; error: { code: string; message: string } | null }> {
  const script = new URL('./helpers/writer.ts', import.meta.url).pathname;
  const proc = fork(script, [path, String(count), String(holdMs)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const acked: string[] = [];
  return new Promise((resolveChild, reject) => {
    let error: { code: string; message: string } | null = null;
    proc.on('message', (message: { ack?: string; error?: { code: string; message: string } }) => {
      if (message.ack) acked.push(message.ack);
      if (message.error) error = message.error;
    });
    proc.on('error', reject);
    proc.on('exit', () => resolveChild({ acked, error }));
  });
}

describe('two processes on one file', () => {
  it('the second gets STORE_LOCKED while the first writes; every acknowledged write is there afterwards', async () => {
    const path = freshPath();
    // The first holds the file 3 s after its writes; the second starts meanwhile.
    const first = child(path, 200, 3000);
    await new Promise((r) => setTimeout(r, 1500));
    const second = await child(path, 50);
    const firstResult = await first;
    expect(firstResult.error).toBeNull();
    expect(firstResult.acked).toHaveLength(200);
    expect(second.error?.code).toBe('STORE_LOCKED');
    expect(second.acked).toEqual([]);
    // Once the first has closed, the next process opens it and adds its own.
    const third = await child(path, 50);
    expect(third.error).toBeNull();
    const store = await openNodeStore({ path });
    const engine = await createEngine({ store });
    const ids = new Set((await engine.export()).map((r) => r.id));
    await engine.close();
    for (const id of [...firstResult.acked, ...third.acked]) expect(ids.has(id)).toBe(true);
    expect(ids.size).toBe(250);
  }, 60_000);

  it('a process killed mid-writes leaves a file that opens with every acknowledged write', async () => {
    const path = freshPath();
    const script = new URL('./helpers/writer.ts', import.meta.url).pathname;
    const proc = fork(script, [path, '100000', '0'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const acked: string[] = [];
    await new Promise<void>((resolveKill) => {
      proc.on('message', (message: { ack?: string }) => {
        if (message.ack) acked.push(message.ack);
        if (acked.length === 100) {
          proc.kill('SIGKILL');
          resolveKill();
        }
      });
    });
    await new Promise((r) => proc.once('exit', r));
    const engine = await createEngine({ store: await openNodeStore({ path }) });
    const ids = new Set((await engine.export()).map((r) => r.id));
    await engine.close();
    for (const id of acked) expect(ids.has(id)).toBe(true);
  }, 60_000);
});

describe('openNodeStore', () => {
  it('refuses encryption with INVALID_INPUT rather than storing in clear unasked', async () => {
    const path = freshPath();
    const error = await openNodeStore({ path, encryption: { passphrase: 'x' } } as never).catch((e: unknown) => e);
    expect(isEngramError(error, 'INVALID_INPUT')).toBe(true);
    expect(existsSync(path)).toBe(false);
  });

  it('in one process, a second open of an open file (by any spelling) is STORE_LOCKED saying so; after close it opens', async () => {
    const path = freshPath();
    const first = await openNodeStore({ path });
    const link = join(dir, `link-${files}`);
    symlinkSync(dirname(path), link);
    for (const again of [path, join(link, 'memories.sqlite3'), join(dirname(path), '.', 'memories.sqlite3')]) {
      const error = await openNodeStore({ path: again }).catch((e: unknown) => e);
      expect(isEngramError(error, 'STORE_LOCKED')).toBe(true);
      expect((error as Error).message).toContain('already open in this process');
      expect((error as { details?: unknown }).details).toMatchObject({ holder: 'this process' });
    }
    await first.close();
    await first.close(); // a second close does not free the path of the next store
    const second = await openNodeStore({ path });
    await expect(openNodeStore({ path })).rejects.toMatchObject({ code: 'STORE_LOCKED' });
    await second.close();
    await (await openNodeStore({ path })).close();
  });
});

describe('file permissions: the memories are in clear, so only the owner reads them', () => {
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('with umask 0: the folder it creates is 0700; the database, its WAL and every other file in it 0600, open and after close', async () => {
    const previous = process.umask(0);
    try {
      const path = freshPath();
      const engine = await createEngine({ store: await openNodeStore({ path }) });
      for (let i = 0; i < 20; i++) await engine.add({ text: `private note ${i}` });
      expect(modeOf(dirname(path))).toBe(0o700);
      expect(existsSync(`${path}-wal`)).toBe(true);
      const files = readdirSync(dirname(path));
      expect(files).toContain('memories.sqlite3-wal');
      for (const file of files) expect([file, modeOf(join(dirname(path), file))]).toEqual([file, 0o600]);
      await engine.close();
      for (const file of readdirSync(dirname(path))) expect([file, modeOf(join(dirname(path), file))]).toEqual([file, 0o600]);
    } finally {
      process.umask(previous);
    }
  });

  it('a database an earlier version left readable by others (0644) is made 0600 when opened, and its new WAL too', async () => {
    const path = freshPath();
    await (await openNodeStore({ path })).close();
    chmodSync(path, 0o644);
    const engine = await createEngine({ store: await openNodeStore({ path }) });
    await engine.add({ text: 'written after the fix' });
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    await engine.close();
  });

  it('an existing folder keeps its mode (it may be a home or a shared data folder)', async () => {
    const folder = join(dir, `shared-${++files}`);
    await (await openNodeStore({ path: join(folder, 'first.sqlite3') })).close();
    chmodSync(folder, 0o755);
    await (await openNodeStore({ path: join(folder, 'second.sqlite3') })).close();
    expect(modeOf(folder)).toBe(0o755);
    expect(modeOf(join(folder, 'second.sqlite3'))).toBe(0o600);
  });
});
