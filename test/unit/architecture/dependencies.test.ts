/**
 * The layout's rule, checked on every run: in src/ and worker/, imports run only downward through the layers below,
 * and no file reaches itself through its imports (type-only imports count too: a circle of types is still a circle
 * to read).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';

const SRC = resolve(__dirname, '../../../src');
const ROOT = resolve(SRC, '..');
const WORKER = join(ROOT, 'worker');

/** Each part of src/ and its layer: a file may import its own part and the parts of lower layers, nothing else. */
const LAYERS: Record<string, number> = {
  'errors.ts': 0,
  'types.ts': 0,
  util: 1,
  store: 2,
  lexical: 2,
  vector: 2,
  llm: 2,
  embedder: 2,
  search: 3,
  // Sync of the change log: below the engine, which stages its writes through it and applies what it receives.
  sync: 3,
  engine: 4,
  // What the page and the worker share (the method table, the wire protocol): below both.
  contract: 5,
  // The page only: createMemory and the page's half of its hooks.
  client: 6,
  // Node-only code (better-sqlite3, node: modules), exported by node.ts alone.
  node: 5,
  // The engine's public API for any runtime, shared by index.ts and node.ts.
  'portable.ts': 7,
  'node.ts': 8,
  'advanced.ts': 7,
  'internals.ts': 7,
  // Framework adapters (engram/langchain, …): beside the other entries, so nothing below can reach a framework.
  adapters: 7,
  'index.ts': 8,
  // The worker (engram/worker, worker/): on the contract, the engine and the stores; beside client/, so it never
  // reaches page code. Nothing in src/ imports it.
  worker: 6,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every relative import and re-export of a file (static and dynamic), resolved to a file of src/ or beyond. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.filter((f) => f.fileName.startsWith('.')).map((f) => resolve(dirname(file), f.fileName.replace(/\.js$/, '.ts')));
}

const within = (dir: string, file: string) => !relative(dir, file).startsWith('..');
const part = (file: string) => (within(WORKER, file) ? 'worker' : relative(SRC, file).split('/')[0]!);
/** A file as the messages name it: from src/, or from the root for worker/. */
const label = (file: string) => (within(SRC, file) ? relative(SRC, file) : relative(ROOT, file));
const files = [...sourceFiles(SRC), ...sourceFiles(WORKER)];
const graph = new Map(files.map((file) => [file, importsOf(file)]));

test('every part of src/, and worker/, has a layer', () => {
  expect([...new Set(files.map(part))].filter((p) => LAYERS[p] === undefined)).toEqual([]);
});

/** Imports that run upward, or into worker/ from src/, or out of src/ (and, from the worker, out of worker/). */
function upwardImports(graph: ReadonlyMap<string, string[]>): string[] {
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = part(file);
      const reachable = within(SRC, target) || (from === 'worker' && within(WORKER, target));
      const to = reachable ? part(target) : null;
      if (to === null) upward.push(`${label(file)} imports ${label(target)}, outside src/`);
      else if (to !== from && !(LAYERS[to]! < LAYERS[from]!)) upward.push(`${label(file)} (${from}, layer ${LAYERS[from]}) imports ${label(target)} (${to}, layer ${LAYERS[to]})`);
    }
  }
  return upward;
}

/** Tarjan's strongly connected components: every component of more than one file (or a file importing itself) is a circle. */
function circlesOf(graph: ReadonlyMap<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(label(member));
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

test('imports run only downward, never into worker/ or out of src/', () => {
  expect(upwardImports(graph)).toEqual([]);
});

test('the worker reaches no page code: the contract, the engine and the stores only', () => {
  expect([...reachedFrom('../worker/index.ts')].map(label).filter((file) => file.startsWith('client/') || file.startsWith('adapters/'))).toEqual([]);
});

test('only the adapters reach the adapters: an app that imports no adapter bundles no framework', () => {
  const adapters = join(SRC, 'adapters') + '/';
  const reaching = [...graph].filter(([file, targets]) => !file.startsWith(adapters) && targets.some((t) => t.startsWith(adapters)));
  expect(reaching.map(([file]) => relative(SRC, file))).toEqual([]);
});

test('engram/langchain and engram/ai-sdk reach no client module: they run in Node beside createEngine', () => {
  for (const entry of ['adapters/langchain.ts', 'adapters/ai-sdk.ts']) {
    expect([...reachedFrom(entry)].map((file) => relative(SRC, file)).filter((file) => file.startsWith('client/'))).toEqual([]);
  }
});

/**
 * A value import of a Node module or of a Node-only package, static or dynamic (a `typeof import('node:fs')` type
 * loads nothing). The MCP SDK's stdio server reads process.stdin.
 */
const RUNTIME_NODE_IMPORT =
  /^\s*import (?!type )[^;]*?from '(?:node:[\w/]+|better-sqlite3|@modelcontextprotocol\/sdk[\w/.-]*)'|(?<!typeof )import\('(?:node:[\w/]+|better-sqlite3|@modelcontextprotocol\/sdk[\w/.-]*)'\)/m;

/** What `entry` reaches through its relative imports, itself included. */
function reachedFrom(entry: string): Set<string> {
  const reached = new Set([join(SRC, entry)]);
  for (const file of reached) for (const target of graph.get(file) ?? []) reached.add(target);
  return reached;
}

/** Node-only code: the MCP server and its parts, and the Node file store beside the other stores. */
const NODE_ONLY = ['node/', 'store/node/'];
const isNodeOnly = (file: string) => file === 'node.ts' || NODE_ONLY.some((dir) => file.startsWith(dir));

test('only src/node/ and src/store/node/ import Node modules, and no entry a bundler may take for a browser reaches them', () => {
  // The package entry once re-exported node.ts: one `node:fs` import and every page that imported Engram failed.
  const withNodeModules = files.filter((file) => !isNodeOnly(relative(SRC, file)))
    .filter((file) => RUNTIME_NODE_IMPORT.test(readFileSync(file, 'utf8')));
  expect(withNodeModules.map((file) => relative(SRC, file))).toEqual([]);
  const browserEntries = ['index.ts', 'advanced.ts', 'internals.ts', ...readdirSync(join(SRC, 'adapters')).map((name) => `adapters/${name}`), '../worker/index.ts'];
  for (const entry of browserEntries) {
    expect([...reachedFrom(entry)].map((file) => relative(SRC, file)).filter(isNodeOnly)).toEqual([]);
  }
});

test('no file of src/ or worker/ imports itself through a circle', () => {
  expect(circlesOf(graph)).toEqual([]);
});

test('the checks find a planted upward import and a planted circle', () => {
  // A check that read no imports would pass everything: plant both faults in a copy of the real graph.
  const at = (path: string) => join(SRC, path);
  const planted = new Map(graph);
  planted.set(at('util/time.ts'), [...(graph.get(at('util/time.ts')) ?? []), at('engine/engine.ts')]);
  expect(upwardImports(planted)).toEqual([expect.stringContaining('util/time.ts (util, layer 1) imports engine/engine.ts (engine, layer 4)')]);
  expect(circlesOf(planted).some((c) => c.includes('util/time.ts') && c.includes('engine/engine.ts'))).toBe(true);
  planted.set(at('search/legs.ts'), [...(graph.get(at('search/legs.ts')) ?? []), at('worker/host.ts').replace('/src/worker/', '/worker/')]);
  expect(upwardImports(planted)).toContainEqual(expect.stringContaining('outside src/'));
  // The worker reaching page code, as seven worker files once imported src/client/.
  const host = join(WORKER, 'host.ts');
  planted.set(host, [...(graph.get(host) ?? []), at('client/create-memory.ts')]);
  expect(upwardImports(planted)).toContainEqual('worker/host.ts (worker, layer 6) imports client/create-memory.ts (client, layer 6)');
});
