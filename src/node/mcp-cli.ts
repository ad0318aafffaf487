#!/usr/bin/env node
/**
 * `engram-mcp --db <file>`: Engram's MCP server over stdio. Stdout carries the protocol only: everything else,
 * logs included, goes to stderr.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createEmbedder } from '../embedder/index.js';
import { EngineLease } from './engine-lease.js';

const USAGE = `Usage: engram-mcp --db <file> [--no-model] [--idle-ms <ms>] [--lock-timeout-ms <ms>]

  --db <file>             The database file (created when missing). Several servers may share it.
  --no-model              Lexical search only: do not load the built-in model.
  --idle-ms <ms>          Release the file after this long without a call (default 1000).
  --lock-timeout-ms <ms>  How long a call waits while another server holds the file (default 30000).`;

// A library that logs with console.log would write into the protocol stream.
console.log = console.info = console.debug = console.error;

function fail(message: string): never {
  console.error(`engram-mcp: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function milliseconds(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isFinite(ms) || ms < 0) fail(`${flag} takes a number of milliseconds, got "${value}"`);
  return ms;
}

/** The package's version, from the package.json above this file (dist/src/node/ when installed, src/node/ in the repository). */
function version(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'engram' && manifest.version) return manifest.version;
    } catch {
      // no package.json here: look further up
    }
  }
  return '0.0.0';
}

let args;
try {
  args = parseArgs({
    options: {
      db: { type: 'string' },
      'no-model': { type: 'boolean' },
      'idle-ms': { type: 'string' },
      'lock-timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }).values;
} catch (error) {
  fail((error as Error).message);
}
if (args.help) {
  console.error(USAGE);
  process.exit(0);
}
if (!args.db) fail('--db <file> is required');

// Loading the model starts first: it runs while the SDK loads (a second or so) and the client connects.
const embedder = args['no-model']
  ? Promise.resolve(null)
  : createEmbedder().catch((error: unknown) => {
      console.error('engram-mcp: the built-in model did not load; searching by keywords only.', error);
      return null;
    });

let sdk: typeof import('./mcp-server.js');
let transports: typeof import('@modelcontextprotocol/sdk/server/stdio.js');
try {
  [sdk, transports] = await Promise.all([import('./mcp-server.js'), import('@modelcontextprotocol/sdk/server/stdio.js')]);
} catch (error) {
  console.error('engram-mcp needs the optional peer dependencies @modelcontextprotocol/sdk and zod: npm install @modelcontextprotocol/sdk zod');
  console.error(error);
  process.exit(1);
}

const lease = new EngineLease({
  path: args.db,
  embedder,
  idleMs: milliseconds(args['idle-ms'], '--idle-ms'),
  lockTimeoutMs: milliseconds(args['lock-timeout-ms'], '--lock-timeout-ms'),
  onError: (error) => console.error('engram-mcp:', error),
});
const server = sdk.createMcpServer(lease, version());

let stopping: Promise<void> | undefined;
/** Finishes the calls under way and releases the file before exiting. */
function stop(): Promise<void> {
  stopping ??= (async () => {
    try {
      await lease.end();
    } catch (error) {
      console.error('engram-mcp: closing the database failed', error);
      process.exitCode = 1;
    }
    await server.close().catch(() => undefined);
    process.exit();
  })();
  return stopping;
}
process.stdin.once('end', () => void stop());
process.stdin.once('close', () => void stop());
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

await server.connect(new transports.StdioServerTransport());
console.error(`engram-mcp: serving ${args.db}`);
