/**
 * What an app ships and a first visit downloads, measured on a production Vite build of a one-line app that does
 * `import { createMemory } from 'engram'` against the built `dist/`. Sizes are raw and gzip (level 9).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Rollup } from 'vite';

export type Part = 'client' | 'worker' | 'wasm' | 'model' | 'fallback' | 'encryption' | 'formation' | 'sync';

export interface SizedFile {
  file: string;
  part: Part;
  bytes: number;
  gzip: number;
}

export interface Sizes {
  files: SizedFile[];
  totals: Record<Part, { bytes: number; gzip: number }>;
  /** Everything but the fallback, encryption, formation and sync: what a first visit with OPFS downloads before its first hybrid search. */
  firstVisit: { bytes: number; gzip: number };
}

/** Files only the IndexedDB and access-handle-pool backends load; a browser with OPFS never fetches them. */
const FALLBACK = /(?:^|\/)(?:IDBBatchAtomicVFS|AccessHandlePoolVFS|wa-sqlite-async)-/;
/** SQLite3 Multiple Ciphers builds: loaded only for an encrypted database (`createMemory({ encryption })`). */
const ENCRYPTION = /(?:^|\/)mc-wa-sqlite/;
/** chrono-node and its adapter: imported by the first `remember` (util/relative-dates.ts). */
const FORMATION = /(?:^|\/)chrono-dates-/;
/** The change log, envelopes and S3 client: imported when an engine with `sync` opens (sync/sync-parts.ts). */
const SYNC = /(?:^|\/)sync-parts-/;

function partOf(output: Rollup.OutputChunk | Rollup.OutputAsset): Part {
  if (output.type === 'chunk') return 'client';
  if (ENCRYPTION.test(output.fileName)) return 'encryption';
  if (FORMATION.test(output.fileName)) return 'formation';
  if (SYNC.test(output.fileName)) return 'sync';
  if (FALLBACK.test(output.fileName)) return 'fallback';
  if (output.fileName.endsWith('.wasm')) return 'wasm';
  if (/\.(?:onnx|json)$/.test(output.fileName)) return 'model';
  return 'worker';
}

export async function measureSizes(dist: string): Promise<Sizes> {
  const app = mkdtempSync(join(tmpdir(), 'engram-sizes-'));
  try {
    writeFileSync(join(app, 'index.html'), '<script type="module" src="./main.js"></script>\n');
    writeFileSync(join(app, 'main.js'), `import { createMemory } from ${JSON.stringify(join(dist, 'src/index.js'))};\nglobalThis.memory = createMemory();\n`);
    const result = (await build({
      root: app,
      configFile: false,
      logLevel: 'warn',
      worker: { format: 'es' },
      build: { write: false, target: 'es2022', outDir: join(app, 'out') },
    })) as Rollup.RollupOutput;
    const files = result.output
      .filter((output) => !output.fileName.endsWith('.html'))
      .map((output): SizedFile => {
        const content = output.type === 'chunk' ? output.code : output.source;
        const bytes = typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength;
        return { file: output.fileName, part: partOf(output), bytes, gzip: gzipSync(content, { level: 9 }).byteLength };
      })
      .sort((a, b) => b.gzip - a.gzip);
    const sum = (list: SizedFile[]) => ({ bytes: list.reduce((s, f) => s + f.bytes, 0), gzip: list.reduce((s, f) => s + f.gzip, 0) });
    const parts: Part[] = ['client', 'worker', 'wasm', 'model', 'fallback', 'encryption', 'formation', 'sync'];
    const totals = Object.fromEntries(parts.map((part) => [part, sum(files.filter((f) => f.part === part))])) as Sizes['totals'];
    const later: Part[] = ['fallback', 'encryption', 'formation', 'sync'];
    return { files, totals, firstVisit: sum(files.filter((f) => !later.includes(f.part))) };
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}

/** The adapter entries (package.json `exports`), each with the peer dependencies it imports. */
export const ADAPTERS = { langchain: ['@langchain/core'], 'ai-sdk': ['ai', 'zod'], react: ['react'] } as const;

export interface AdapterSize {
  entry: string;
  peers: string[];
  bytes: number;
  gzip: number;
}

/**
 * What each adapter adds to an app, minified: its own modules only. Its framework is the app's, and the Engram
 * modules it imports (errors, `createMemory` for the React hooks) are the ones the app loads with Engram anyway.
 */
export async function measureAdapters(dist: string): Promise<AdapterSize[]> {
  const adapters = join(dist, 'src/adapters') + '/';
  const sizes: AdapterSize[] = [];
  for (const [name, peers] of Object.entries(ADAPTERS)) {
    const result = (await build({
      configFile: false,
      logLevel: 'warn',
      build: {
        write: false,
        target: 'es2022',
        lib: { entry: join(adapters, `${name}.js`), formats: ['es'] },
        rollupOptions: {
          external: (source, importer) => !source.startsWith('.') ? !source.startsWith(adapters) : !resolve(dirname(importer ?? adapters), source).startsWith(adapters),
        },
      },
    })) as Rollup.RollupOutput[] | Rollup.RollupOutput;
    const output = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output).filter((o): o is Rollup.OutputChunk => o.type === 'chunk');
    const code = output.map((chunk) => chunk.code).join('\n');
    sizes.push({ entry: `engram/${name}`, peers: [...peers], bytes: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).byteLength });
  }
  return sizes;
}

/** The README's adapter table: each entry's own size and its peer dependencies' ranges from package.json. */
export function renderAdapterSizes(sizes: AdapterSize[], peerRanges: Record<string, string>): string {
  return [
    '| Entry | Peer dependencies (optional) | gzip | size |',
    '|---|---|---:|---:|',
    // A range's `||` would split the table's cells.
    ...sizes.map((s) => `| \`${s.entry}\` | ${s.peers.map((peer) => `\`${peer}\` ${(peerRanges[peer] ?? '?').replace(/\s*\|\|\s*/g, ' or ')}`).join(', ')} | ${human(s.gzip)} | ${human(s.bytes)} |`),
    '',
  ].join('\n');
}

function human(bytes: number): string {
  return bytes < 1_000_000 ? `${(bytes / 1000).toFixed(1)} kB` : `${(bytes / 1_000_000).toFixed(2)} MB`;
}

/** The README's table. */
export function renderSizes(sizes: Sizes): string {
  const row = (label: string, part: { bytes: number; gzip: number }) => `| ${label} | ${human(part.gzip)} | ${human(part.bytes)} |`;
  return [
    '| What | gzip | size |',
    '|---|---:|---:|',
    row('Main-thread client (`createMemory`)', sizes.totals.client),
    row('Worker JS (engine, SQLite glue, transformers.js, ONNX Runtime)', sizes.totals.worker),
    row('WASM (SQLite, ONNX Runtime)', sizes.totals.wasm),
    row('Built-in model (q8 weights, tokenizer)', sizes.totals.model),
    row('**First visit, in all**', sizes.firstVisit),
    row('Only without OPFS (IndexedDB fallback)', sizes.totals.fallback),
    row('Only for an encrypted database (SQLite3 Multiple Ciphers)', sizes.totals.encryption),
    row('Only once `remember` runs (chrono-node, relative dates)', sizes.totals.formation),
    row('Only with `sync` (change log, envelopes, S3 client)', sizes.totals.sync),
    '',
  ].join('\n');
}
