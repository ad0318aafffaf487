/**
 * engram-mcp, spawned as a real process and driven by the MCP SDK's own client over stdio: memories outlive a
 * SIGKILL and a restart; two servers on one file (one of them killed mid-way) lose no acknowledged write and leave a
 * file that passes SQLite's integrity check.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, openNodeStore } from '../../../src/node.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-mcp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = new URL('../../../src/node/mcp-cli.ts', import.meta.url).pathname;

interface Server {
  client: Client;
  pid: number;
  stderr: () => string;
}

async function start(path: string, ...flags: string[]): Promise<Server> {
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', CLI, '--db', path, ...flags], stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid!, stderr: () => stderr };
}

/** SIGKILL: no close, no flush, the lock dropped by the OS. */
async function kill(server: Server): Promise<void> {
  const closed = new Promise<void>((done) => (server.client.onclose = done));
  process.kill(server.pid, 'SIGKILL');
  await closed;
}

async function call(server: Server, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await server.client.callTool({ name, arguments: args })) as CallToolResult;
}

const text = (result: CallToolResult, index = 0) => (result.content[index] as { type: 'text'; text: string }).text;

async function ok<T>(server: Server, name: string, args: Record<string, unknown>, index = 0): Promise<T> {
  const result = await call(server, name, args);
  if (result.isError) throw new Error(`${name} failed: ${text(result)}\n${server.stderr()}`);
  return JSON.parse(text(result, index)) as T;
}

interface Recalled {
  mode: string;
  context: { tokens: number; ids: string[] };
  hits: { id: string; text: string; pinned: boolean; explain: { bm25Rank: number | null; vecRank: number | null } }[];
}

describe('engram-mcp over stdio', () => {
  it('remembers, is killed, restarts and recalls; pin, timeline, why, forget and the resources', async () => {
    const path = join(dir, 'restart', 'memories.sqlite3');
    const first = await start(path);
    expect((await first.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['forget', 'forgotten', 'pin', 'recall', 'remember', 'restore', 'timeline', 'why']);
    const grandma = (await ok<{ id: string }>(first, 'remember', { text: 'Grandma likes tulips and orchids in her garden', tags: ['family'] })).id;
    const staging = (await ok<{ id: string }>(first, 'remember', { text: 'The staging server moved to eu-west-2 in March', project: 'infra' })).id;
    await kill(first);

    const began = performance.now();
    const second = await start(path);
    const recall = await call(second, 'recall', { query: 'which flowers does grandma like?', k: 1 });
    const restartMs = performance.now() - began;
    expect(recall.isError).toBeFalsy();
    expect(text(recall)).toMatch(/^\[\d{4}-\d{2}-\d{2}\] Grandma likes tulips and orchids in her garden$/);
    const recalled = JSON.parse(text(recall, 1)) as Recalled;
    expect(recalled.hits.map((hit) => hit.id)).toEqual([grandma]);
    expect(recalled.context.ids).toEqual([grandma]);
    // The built-in model answered too: hybrid, with a vector rank in the explain.
    expect(recalled.mode).toBe('hybrid');
    expect(recalled.hits[0]!.explain.vecRank).toBe(1);
    console.info(`restart to first recall answered: ${restartMs.toFixed(0)} ms`);

    // A hard filter keeps other projects out; the project boost would not.
    const infraOnly = await ok<Recalled>(second, 'recall', { query: 'grandma tulips', filter: { projects: ['infra'] } }, 1);
    expect(infraOnly.hits.every((hit) => hit.id === staging)).toBe(true);

    expect(await ok(second, 'pin', { id: staging })).toMatchObject({ id: staging, pinned: true });
    const pinned = await second.client.readResource({ uri: 'engram://memories/pinned' });
    expect(JSON.parse((pinned.contents[0] as { text: string }).text)).toEqual([expect.objectContaining({ id: staging, pinned: true })]);
    const recent = await second.client.readResource({ uri: 'engram://memories/recent' });
    expect(JSON.parse((recent.contents[0] as { text: string }).text).map((m: { id: string }) => m.id).sort()).toEqual([grandma, staging].sort());
    expect((await second.client.listResources()).resources.map((r) => r.uri).sort()).toEqual(['engram://memories/pinned', 'engram://memories/recent']);

    const timeline = await ok<{ by: string; before: { id: string }[]; anchor: { id: string }; after: { id: string }[] }>(second, 'timeline', { id: staging });
    expect(timeline).toMatchObject({ by: 'time', anchor: { id: staging }, before: [{ id: grandma }], after: [] });
    expect(await ok(second, 'why', { id: grandma })).toMatchObject({ root: { id: grandma }, edges: [], truncated: false });

    // Engram's error code reaches the client in a tool error.
    const unknown = await call(second, 'pin', { id: 'no-such-memory' });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^NOT_FOUND: /);

    expect(await ok(second, 'forget', { ids: [grandma, 'no-such-memory'] })).toEqual({ removed: 1, restorableDays: 30 });
    expect((await ok<{ id: string }[]>(second, 'forgotten', {})).map((m) => m.id)).toEqual([grandma]);
    await second.client.close();

    // A clean close released the file: another process opens it and finds what the server left.
    const engine = await createEngine({ store: await openNodeStore({ path }) });
    expect((await engine.export()).map((r) => [r.id, r.pinned])).toEqual([[staging, true]]);
    await engine.close();
  }, 120_000);

  it('two servers on one file, one killed mid-way and restarted: every acknowledged write is there, the file intact', async () => {
    const path = join(dir, 'two', 'memories.sqlite3');
    // --idle-ms 0: each server releases the file after every call, so the two take turns all along.
    const flags = ['--idle-ms', '0'];
    const acked: { by: 'a' | 'b'; id: string }[] = [];
    const PER_CLIENT = 40;
    let a = await start(path, ...flags);
    const b = await start(path, ...flags);
    // Both models loaded before the writes start, so neither server is still starting while the other writes.
    await Promise.all([a, b].map((server) => ok(server, 'recall', { query: 'warm up' }, 1)));
    let killedAt = -1;
    let unacknowledged = 0;
    const writes = async (by: 'a' | 'b', server: () => Server) => {
      for (let i = 0; i < PER_CLIENT; i++) {
        const args = { text: `note ${by}${i}: the build ${by} step ${i} uses cache key ${by}-${i * 7919}` };
        if (by === 'a' && i === PER_CLIENT / 2) {
          // Killed with a write under way: it may or may not be stored, and is not acknowledged unless answered.
          const underWay = call(a, 'remember', args).catch(() => null);
          await new Promise((r) => setTimeout(r, 5));
          await kill(a);
          const answer = await underWay;
          if (answer && !answer.isError) acked.push({ by, id: (JSON.parse(text(answer)) as { id: string }).id });
          else unacknowledged++;
          killedAt = acked.length;
          a = await start(path, ...flags);
          continue;
        }
        acked.push({ by, id: (await ok<{ id: string }>(server(), 'remember', args)).id });
      }
    };
    const began = performance.now();
    await Promise.all([writes('a', () => a), writes('b', () => b)]);
    console.info(`${acked.length} writes acknowledged in ${(performance.now() - began).toFixed(0)} ms, in this order: ${acked.map((w) => w.by).join('')} (A killed after ${killedAt})`);
    await Promise.all([a.client.close(), b.client.close()]);

    // They took turns before the kill, and the file changed hands again after it.
    const order = acked.map((write) => write.by).join('');
    expect(order.slice(0, killedAt)).toMatch(/ab|ba/);
    expect(order.slice(killedAt)).toMatch(/ab|ba/);
    expect(acked).toHaveLength(2 * PER_CLIENT - unacknowledged);

    const db = new Database(path);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
    const engine = await createEngine({ store: await openNodeStore({ path }) });
    const stored = new Set((await engine.export()).map((r) => r.id));
    await engine.close();
    expect(acked.filter((write) => !stored.has(write.id))).toEqual([]);
    // The unanswered write is either stored whole or not at all.
    expect(stored.size - acked.length).toBeLessThanOrEqual(unacknowledged);
  }, 180_000);

  it('a call waits while another server holds the file, and fails with STORE_LOCKED after --lock-timeout-ms', async () => {
    const path = join(dir, 'locked', 'memories.sqlite3');
    const holder = await openNodeStore({ path });
    const server = await start(path, '--no-model', '--lock-timeout-ms', '500');
    const locked = await call(server, 'remember', { text: 'written while the file is held' });
    expect(locked.isError).toBe(true);
    expect(text(locked)).toMatch(/^STORE_LOCKED: /);
    // Released while the next call waits: it goes through.
    const waiting = call(server, 'remember', { text: 'written once the file is free' });
    await new Promise((r) => setTimeout(r, 200));
    await holder.close();
    expect((await waiting).isError).toBeFalsy();
    await server.client.close();
  }, 60_000);
});

/** engram-mcp run as a command (--forgotten, --restore): its JSON on stdout and its exit code. */
async function command(path: string, ...flags: string[]): Promise<{ code: number; out: unknown; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', CLI, '--db', path, ...flags]);
    return { code: 0, out: JSON.parse(stdout), stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, out: failed.stdout, stderr: failed.stderr };
  }
}

describe('engram-mcp confined: --project, --scope, --read-only', () => {
  it('--project infra --scope shared: reads only that project and scope, stamps its writes, and cannot reach the rest by id', async () => {
    const path = join(dir, 'confined', 'memories.sqlite3');
    const open = await start(path, '--no-model');
    const theatre = (await ok<{ id: string }>(open, 'remember', { text: 'Staging of the theatre play is hosted at the Old Vic', project: 'theatre' })).id;
    const personal = (await ok<{ id: string }>(open, 'remember', { text: 'The staging server password hint is in my notebook', project: 'infra' })).id;
    await open.client.close();

    const infra = await start(path, '--no-model', '--project', 'infra', '--scope', 'shared');
    const staging = (await ok<{ id: string }>(infra, 'remember', { text: 'The staging server is hosted in eu-west-2', tags: ['hosting'] })).id;
    // A boost would still return the theatre note for this query; the confinement does not.
    const hits = (await ok<Recalled>(infra, 'recall', { query: 'where is staging hosted?', k: 10 }, 1)).hits.map((hit) => hit.id);
    expect(hits).toEqual([staging]);
    // Not even by naming another project in the filter, or writing to one.
    const across = await call(infra, 'recall', { query: 'staging', filter: { projects: ['theatre'] } });
    expect(across.isError).toBe(true);
    expect(text(across)).toMatch(/^INVALID_INPUT: .*project "infra" only/);
    const elsewhere = await call(infra, 'remember', { text: 'written elsewhere', project: 'theatre' });
    expect(text(elsewhere)).toMatch(/^INVALID_INPUT: /);
    // By id, a memory outside is as unknown as one that does not exist.
    for (const outside of [theatre, personal]) {
      for (const [tool, args] of [['pin', { id: outside }], ['timeline', { id: outside }], ['why', { id: outside }]] as const) {
        const refused = await call(infra, tool, args);
        expect([tool, text(refused)]).toEqual([tool, `NOT_FOUND: Engram: no memory with id "${outside}"`]);
      }
    }
    expect(await ok(infra, 'forget', { ids: [theatre, personal] })).toMatchObject({ removed: 0 });
    // The timeline around its own memory leaves out the others' memories.
    expect(await ok(infra, 'timeline', { id: staging })).toMatchObject({ before: [], anchor: { id: staging }, after: [] });
    const recent = JSON.parse(((await infra.client.readResource({ uri: 'engram://memories/recent' })).contents[0] as { text: string }).text) as { id: string; project: string }[];
    expect(recent.map((m) => m.id)).toEqual([staging]);
    await infra.client.close();

    // What it wrote carries its project and scope; the rest is untouched.
    const engine = await createEngine({ store: await openNodeStore({ path }) });
    expect(await engine.get(staging)).toMatchObject({ project: 'infra', scope: 'shared', tags: ['hosting'] });
    expect((await engine.export()).map((r) => r.id).sort()).toEqual([theatre, personal, staging].sort());
    await engine.close();
  }, 120_000);

  it('--read-only offers no tool that writes, and a client calling one anyway changes nothing', async () => {
    const path = join(dir, 'read-only', 'memories.sqlite3');
    const writer = await start(path, '--no-model');
    const id = (await ok<{ id: string }>(writer, 'remember', { text: 'The lighthouse keeper feeds the cat at six' })).id;
    await writer.client.close();

    const reader = await start(path, '--no-model', '--read-only');
    expect((await reader.client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['forgotten', 'recall', 'timeline', 'why']);
    for (const [tool, args] of [['remember', { text: 'injected' }], ['forget', { ids: [id] }], ['pin', { id }], ['restore', { ids: [id] }]] as const) {
      const outcome = await call(reader, tool, args).catch((error: Error) => ({ isError: true, content: [{ type: 'text', text: error.message }] }) as CallToolResult);
      expect([tool, outcome.isError, text(outcome)]).toEqual([tool, true, expect.stringContaining(`Tool ${tool} not found`)]);
    }
    for (let i = 0; i < 3; i++) expect((await ok<Recalled>(reader, 'recall', { query: 'lighthouse cat' }, 1)).hits.map((hit) => hit.id)).toEqual([id]);
    await reader.client.close();
    const engine = await createEngine({ store: await openNodeStore({ path }) });
    // Not even an access count: its searches leave the file as they found it.
    expect((await engine.export()).map((r) => [r.id, r.pinned, r.accessCount])).toEqual([[id, false, 0]]);
    await engine.close();
  }, 120_000);

  it('a bad confinement is refused at start with the usage', async () => {
    const path = join(dir, 'bad-flags', 'memories.sqlite3');
    for (const flags of [['--scope', 'both'], ['--project', ' '], ['--trash-days', '-1'], ['--read-only', '--restore', 'x']]) {
      const outcome = await command(path, ...flags);
      expect([flags, outcome.code]).toEqual([flags, 2]);
      expect(outcome.stderr).toContain('Usage: engram-mcp');
    }
  }, 60_000);
});

describe('forget is recoverable', () => {
  it('a forgotten memory leaves recall at once; the user lists and restores it from the command line, and recall finds it again', async () => {
    const path = join(dir, 'trash', 'memories.sqlite3');
    const server = await start(path, '--no-model', '--trash-days', '14');
    const id = (await ok<{ id: string }>(server, 'remember', { text: 'The spare key is under the blue flowerpot', project: 'home' })).id;
    const other = (await ok<{ id: string }>(server, 'remember', { text: 'The garage code is 4711', project: 'garage' })).id;
    expect(await ok(server, 'forget', { ids: [id, other] })).toEqual({ removed: 2, restorableDays: 14 });
    expect((await ok<Recalled>(server, 'recall', { query: 'spare key flowerpot' }, 1)).hits).toEqual([]);
    await server.client.close();

    const listed = await command(path, '--forgotten', '--project', 'home');
    expect(listed.code).toBe(0);
    expect((listed.out as { record: { id: string } }[]).map((entry) => entry.record.id)).toEqual([id]);
    const restored = await command(path, '--restore', id, '--restore', 'not-forgotten', '--no-model');
    expect(restored).toMatchObject({ code: 0, out: { restored: [id], notFound: ['not-forgotten'], alreadyStored: [] } });

    const again = await start(path, '--no-model');
    expect((await ok<Recalled>(again, 'recall', { query: 'spare key flowerpot' }, 1)).hits.map((hit) => hit.id)).toEqual([id]);
    // The agent can restore too (the garage code), unless the server is read-only.
    expect(await ok(again, 'restore', { ids: [other] })).toEqual({ restored: [other], notFound: [], alreadyStored: [] });
    expect(await ok(again, 'forgotten', {})).toEqual([]);
    await again.client.close();
  }, 120_000);
});
