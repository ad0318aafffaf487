/**
 * engram-mcp's tools refuse arguments their schemas do not have, by name and with the one meant, as a tool error
 * (the MCP SDK's object schemas would drop them without a word). In process, over the SDK's in-memory transport.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, expect, it } from 'vitest';
import { EngineLease } from '../../../src/node/engine-lease.js';
import { createMcpServer } from '../../../src/node/mcp-server.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-mcp-args-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('refuses an unknown argument or filter field with INVALID_INPUT and the nearest valid name; stores nothing', async () => {
  const lease = new EngineLease({ path: join(dir, 'memories.db'), embedder: Promise.resolve(null) });
  const server = createMcpServer(lease, '0.0.0');
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;

  const cases: [string, Record<string, unknown>, string][] = [
    ['remember', { text: 'Staging moved to eu-west-2', tag: ['infra'] }, "unknown argument 'tag' (did you mean 'tags'?)"],
    ['recall', { query: 'staging', limit: 1 }, "unknown argument 'limit' (did you mean 'k'?)"],
    ['recall', { query: 'staging', filter: { project: ['infra'] } }, "unknown argument 'filter.project' (did you mean 'filter.projects'?)"],
    ['timeline', { id: 'x', befor: 2 }, "(did you mean 'before'?)"],
    // The engine's `signal` is an AbortSignal, which JSON cannot carry: not an argument of a tool.
    ['remember', { text: 'Staging moved to eu-west-2', signal: { aborted: true } }, "unknown argument 'signal'"],
  ];
  for (const [tool, args, message] of cases) {
    const result = await call(tool, args);
    expect(result.isError, message).toBe(true);
    expect(text(result)).toMatch(/^INVALID_INPUT: /);
    expect(text(result)).toContain(message);
  }
  expect(text(await call('recall', { query: 'staging' }))).toBe('No memory matches.');
  // The same calls with the right names run.
  expect((await call('remember', { text: 'Staging moved to eu-west-2', tags: ['infra'] })).isError).toBeFalsy();
  const recalled = await call('recall', { query: 'staging', k: 1, filter: { tags: ['infra'] } });
  expect(recalled.isError).toBeFalsy();
  expect(JSON.parse((recalled.content[1] as { text: string }).text).hits).toHaveLength(1);
  await client.close();
  await server.close();
  await lease.end();
});
