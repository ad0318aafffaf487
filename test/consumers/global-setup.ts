import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { REPO, sh } from './harness.js';

let workDir: string | undefined;

/** One `npm pack` (its prepack runs the build) for every consumer test; the examples install that tarball. */
export async function setup(project: TestProject): Promise<void> {
  workDir = mkdtempSync(join(tmpdir(), 'engram-consumers-'));
  project.provide('engramTarball', process.env.ENGRAM_TARBALL ?? (await pack(join(workDir, 'pack'))));
  project.provide('consumersDir', join(workDir, 'apps'));
  project.provide('nativePrebuilds', await nativePrebuilds(join(workDir, 'prebuilds')));
}

/**
 * The repository's own better-sqlite3 build (npm ci compiled it from the same version) as a local prebuild for
 * prebuild-install, so the examples that depend on it unpack it rather than compile SQLite again: two minutes per
 * example here, where its download host cannot be reached. Another version in an example still compiles.
 */
async function nativePrebuilds(dir: string): Promise<string> {
  mkdirSync(dir);
  const root = join(REPO, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await sh('tar', ['-czf', join(dir, name), 'build/Release/better_sqlite3.node'], root);
  return dir;
}

/** ENGRAM_TARBALL (a tarball packed before) skips this, for quick reruns while the tree is not changing. */
async function pack(packDir: string): Promise<string> {
  mkdirSync(packDir);
  await sh('npm', ['pack', '--pack-destination', packDir, '--loglevel=error'], REPO);
  const [tarball] = readdirSync(packDir).filter((file) => file.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball in ${packDir}`);
  return join(packDir, tarball);
}

export async function teardown(): Promise<void> {
  if (workDir && !process.env.KEEP_CONSUMERS) rmSync(workDir, { recursive: true, force: true });
}
