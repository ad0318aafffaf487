/** examples/node: a plain `node` script (no tsx, no bundler) imports `engram/node` from the installed tarball. */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { installExample, sh } from './harness.js';

describe('Node script from the packed tarball', () => {
  test('builds an engine with the built-in model, adds and answers a hybrid search', async () => {
    const app = await installExample('node');
    const output = await sh('node', ['index.js', 'which flowers does grandma like?'], app);
    const result = JSON.parse(output.slice(output.indexOf('{'))) as { mode: string; embedder: string; hits: string[] };
    expect(result.mode).toBe('hybrid');
    expect(result.embedder).toMatch(/^engram-glove-100d@q8/);
    expect(result.hits[0]).toMatch(/tulips/);
  });

  test('a second run finds what the first stored in its database file (openNodeStore, better-sqlite3)', async () => {
    const app = await installExample('node');
    const env = { ENGRAM_DB: join(app, 'persist.sqlite3') };
    const run = async () => {
      const output = await sh('node', ['index.js', 'when is the quarterly report due?'], app, env);
      return JSON.parse(output.slice(output.indexOf('{'))) as { stored: number; hits: string[] };
    };
    expect((await run()).stored).toBe(3);
    const second = await run();
    expect(second.stored).toBe(3);
    expect(second.hits[0]).toMatch(/quarterly report/);
  });

  test('the Node entry reaches no worker or client module, statically or on demand', async () => {
    const app = await installExample('node');
    const reached = importGraph(join(app, 'node_modules/engram/dist/src/node.js')).map((file) => file.slice(file.indexOf('/dist/') + 1));
    expect(reached).toContain('dist/src/engine/engine.js');
    expect(reached.filter((file) => file.startsWith('dist/worker/') || file.startsWith('dist/src/client/'))).toEqual([]);
  });
});

/** Every module of the package a file imports, directly or through others, with `import … from` or `import()`. */
function importGraph(entry: string): string[] {
  const seen = new Set<string>([entry]);
  for (const file of seen) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:from\s*|import\s*\(\s*)['"](\.[^'"]+)['"]/g)) {
      seen.add(resolve(dirname(file), specifier!));
    }
  }
  return [...seen];
}
