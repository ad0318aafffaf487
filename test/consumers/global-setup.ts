import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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
