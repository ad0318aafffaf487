#!/usr/bin/env node
/**
 * `engram-mcp --db <file>`: Engram's MCP server over stdio. Stdout carries the protocol only: everything else,
 * logs included, goes to stderr. With `--forgotten` or `--restore <id>` it serves nobody: it lists or restores
 * what `forget` put in the trash, prints JSON on stdout and exits (the user's way back from an agent's forget).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createEmbedder } from '../embedder/index.js';
import { isEngramError } from '../errors.js';
import { EngineLease } from './engine-lease.js';

const USAGE = `Usage: engram-mcp --db <file> [--project <name>] [--scope <scope>] [--read-only] [--trash-days <days>]
                  [--no-model] [--idle-ms <ms>] [--lock-timeout-ms <ms>]
       engram-mcp --db <file> --forgotten | --restore <id> [--restore <id>…] [--project <name>] [--scope <scope>]

  --db <file>             The database file (created when missing). Several servers may share it.
  --project <name>        The client reads this project's memories only, and its writes are filed under it.
  --scope <scope>         The client reads memories of this scope only ('personal' includes unscoped ones), and
                          its writes carry it.
  --read-only             No tool that writes (remember, forget, restore, pin) is offered.
  --trash-days <days>     How long forgotten memories can be restored before they are purged (default 30).
  --forgotten             Print the forgotten memories still restorable (JSON) and exit.
  --restore <id>          Restore a forgotten memory (repeatable), print what was restored (JSON) and exit.
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
      project: { type: 'string' },
      scope: { type: 'string' },
      'read-only': { type: 'boolean' },
      'trash-days': { type: 'string' },
      forgotten: { type: 'boolean' },
      restore: { type: 'string', multiple: true },
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
const trashDays = args['trash-days'] === undefined ? undefined : Number(args['trash-days']);
if (trashDays !== undefined && !(Number.isFinite(trashDays) && trashDays >= 0)) fail(`--trash-days takes a number of days ≥ 0, got "${args['trash-days']}"`);
const restoring = args.restore ?? [];
if (args.forgotten && restoring.length > 0) fail('--forgotten and --restore go one at a time');
if (args['read-only'] && restoring.length > 0) fail('--restore writes: it cannot run with --read-only');
const serverOptions: import('./mcp-server.js').McpServerOptions = { readOnly: args['read-only'] === true };
if (args.project !== undefined) serverOptions.project = args.project;
if (args.scope !== undefined) serverOptions.scope = args.scope;
if (trashDays !== undefined) serverOptions.trashDays = trashDays;
const command = args.forgotten || restoring.length > 0;

// Loading the model starts first: it runs while the SDK loads (a second or so) and the client connects.
const embedder = args['no-model'] || (command && restoring.length === 0)
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
let confined: InstanceType<typeof sdk.Confinement>;
try {
  confined = new sdk.Confinement(serverOptions);
} catch (error) {
  fail((error as Error).message.replace(/^Engram: engram-mcp: /, ''));
}

if (command) {
  // The user's commands: one call on the file, its answer as JSON on stdout.
  try {
    const result = await lease.use(async (engine, store) => {
      if (args.forgotten) return confined.trash.list(store, confined.visible);
      return confined.trash.restore(engine, store, restoring, confined.visible);
    }, { writes: restoring.length > 0 });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    await lease.end();
    process.exit(0);
  } catch (error) {
    console.error('engram-mcp:', isEngramError(error) ? `${error.code}: ${error.message}` : error);
    await lease.end().catch(() => undefined);
    process.exit(1);
  }
}

const server = sdk.createMcpServer(lease, version(), confined);

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
console.error(`engram-mcp: serving ${args.db}${serverOptions.project ? `, project ${serverOptions.project}` : ''}${serverOptions.scope ? `, scope ${serverOptions.scope}` : ''}${serverOptions.readOnly ? ', read-only' : ''}`);
// What was forgotten longer ago than the trash keeps goes now, not only at the next forget.
void lease.use((_engine, store) => confined.trash.purge(store)).catch((error: unknown) => console.error('engram-mcp: purging the trash failed', error));
