import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { browserLockPath } from '../browser/lock-path.js';
import { claimAndBuild, claimAndInstall, installedMarker, REPO, sh, writeWhole } from './harness.js';

let workDir: string | undefined;
let packing: Promise<unknown> | undefined;
let stopping = false;

/**
 * One `npm pack` (its prepack runs the build) for every consumer test; the examples install that tarball. The pack
 * runs in the background while the other projects' files run (consumers come last, test/sequencer.ts): `packed` is
 * the file it writes when done, `{ tarball }` or `{ error }`, which harness.ts waits for.
 */
export async function setup(project: TestProject): Promise<void> {
  workDir = mkdtempSync(join(tmpdir(), 'engram-consumers-'));
  const packed = join(workDir, 'packed.json');
  project.provide('engramPacked', packed);
  const apps = join(workDir, 'apps');
  const prebuilds = await nativePrebuilds(join(workDir, 'prebuilds'));
  const tarball = process.env.ENGRAM_TARBALL ? Promise.resolve(process.env.ENGRAM_TARBALL) : pack(join(workDir, 'pack'));
  // Then the examples' npm installs, one at a time, also in the background (mostly network and disk), each followed
  // by its `npm run build` if it has one, which every test of its output shares: a test that needs one first
  // installs or builds it itself (harness.ts, claimAndInstall and claimAndBuild).
  packing = tarball.then(
    async (tarball) => {
      writeWhole(packed, JSON.stringify({ tarball }));
      for (const name of readdirSync(join(REPO, 'examples')).filter((name) => existsSync(join(REPO, 'examples', name, 'package.json')))) {
        if (stopping) break;
        await claimAndInstall(name, apps, async () => tarball, prebuilds);
        // A test may be installing it instead: its build waits for that.
        while (!existsSync(installedMarker(join(apps, name))) && !stopping) await new Promise((resolve) => setTimeout(resolve, 200));
        if (stopping) break;
        await claimAndBuild(name, apps);
      }
    },
    (error: unknown) => writeWhole(packed, JSON.stringify({ error: error instanceof Error ? error.message : String(error) })),
  );
  project.provide('consumersDir', apps);
  project.provide('nativePrebuilds', prebuilds);
  // Two files at a time with the browser and engines projects, one consumers file at a time (test/browser/slots.ts).
  project.provide('browserLock', browserLockPath());
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
  // A focused run may end before every example is installed: no new install starts, the one under way finishes.
  stopping = true;
  await packing;
  if (workDir && !process.env.KEEP_CONSUMERS) rmSync(workDir, { recursive: true, force: true });
}
