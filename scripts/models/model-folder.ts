/**
 * Writing a model folder atomically, with a manifest that lets `ensure-model` tell a complete, current build
 * from a missing, partial or stale one without rebuilding.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Relative path inside the model folder → content. */
export type ModelFiles = Record<string, string | Uint8Array>;

export const MANIFEST_FILE = 'engram-build.json';

export interface Manifest {
  /** Hash of the recipe (builder sources and inputs): a different recipe means the folder is stale. */
  recipe: string;
  /** Hash over every model file's path and content: equal builds have equal build hashes. */
  buildHash: string;
  files: Record<string, { bytes: number; sha256: string }>;
}

export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export function describeFiles(files: ModelFiles, recipe: string): Manifest {
  const entries = Object.keys(files)
    .sort()
    .map((path) => {
      const content = files[path] as string | Uint8Array;
      const bytes = typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength;
      return [path, { bytes, sha256: sha256(content) }] as const;
    });
  const buildHash = sha256(entries.map(([path, file]) => `${path}\t${file.sha256}\n`).join(''));
  return { recipe, buildHash, files: Object.fromEntries(entries) };
}

/**
 * Writes into a sibling temp folder and renames it into place, so an interrupted build never leaves a folder
 * that looks complete. The manifest is written last inside the temp folder.
 */
export function writeModelFolder(dir: string, files: ModelFiles, recipe: string): Manifest {
  const manifest = describeFiles(files, recipe);
  const temp = `${dir}.tmp-${process.pid}`;
  rmSync(temp, { recursive: true, force: true });
  for (const [path, content] of Object.entries(files)) {
    const target = join(temp, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  writeFileSync(join(temp, MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(temp, dir);
  return manifest;
}

/** Why a folder needs (re)building, or null when it is complete and built by this recipe. */
export function staleReason(dir: string, recipe: string): string | null {
  const manifestPath = join(dir, MANIFEST_FILE);
  if (!existsSync(manifestPath)) return 'missing';
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  } catch {
    return 'unreadable manifest';
  }
  if (manifest.recipe !== recipe) return 'built by another recipe';
  for (const [path, expected] of Object.entries(manifest.files)) {
    const file = join(dir, path);
    if (!existsSync(file)) return `${path} missing`;
    if (sha256(readFileSync(file)) !== expected.sha256) return `${path} changed`;
  }
  return null;
}

/** A recipe hash from the builder's own source files plus any extra inputs (e.g. the word-vector package version). */
export function recipeHash(sourceFiles: string[], extra: string[] = []): string {
  return sha256([...sourceFiles.map((file) => readFileSync(file, 'utf8')), ...extra].join('\0'));
}
