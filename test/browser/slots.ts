/**
 * Setup file of the browser, engines and consumers projects: at most SLOTS of their test files run at once, across
 * the worker processes of the pool they share with the unit project (vitest.config.ts). A browser file mostly waits
 * on one thread (a worker, the renderer, a timer, the disk): alone, one kept about one of two cores busy, so two at
 * once fill both. Files of one SERIAL group also run one at a time among themselves; ALONE files run with no other.
 * Directories are the locks: mkdir is atomic, and a holder that died (its pid gone) is taken over.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject } from 'vitest';

/** How many browser files may run at once (ENGRAM_BROWSER_SLOTS, default 2). */
const SLOTS = Math.max(1, Number(process.env.ENGRAM_BROWSER_SLOTS) || 2);

/** The consumers share the example apps' directories: a build rewrites one app's sources for a while. */
const SERIAL: Record<string, RegExp> = { consumers: /\/test\/consumers\// };

/**
 * Files that take every slot. The extension tests watch the offscreen document's worker over CDP: beside another
 * browser file, on a machine loaded further, its requests for SQLite's WASM went unrecorded (most likely the worker
 * started before the watcher could hold it).
 */
const ALONE = [/\/test\/consumers\/extension(-firefox)?\.test\.ts$/];

const base = inject('browserLock');
const slot = (i: number) => join(base, `slot${i}`);
const group = (name: string) => join(base, `serial-${name}`);
/** Held while a file that runs alone gathers the slots: no other file takes one meanwhile. */
const gathering = join(base, 'alone');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid that holds `dir`: undefined when free, NaN between the holder's mkdir and its pid write. */
function holderOf(dir: string): number | undefined {
  try {
    return Number(readFileSync(join(dir, 'pid'), 'utf8'));
  } catch {
    return existsSync(dir) ? NaN : undefined;
  }
}

/** Whether this process now holds `dir` (made here, or already ours); a dead holder's dir is removed for the next try. */
function tryHold(dir: string): boolean {
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = holderOf(dir);
    if (holder === process.pid) return true;
    if (holder === undefined) return false;
    if (Number.isNaN(holder)) {
      // Still being taken, unless that began long ago (the holder died).
      const made = statSync(dir, { throwIfNoEntry: false });
      if (made && Date.now() - made.mtimeMs > 10_000) rmSync(dir, { recursive: true, force: true });
    } else if (!alive(holder)) {
      rmSync(dir, { recursive: true, force: true });
    }
    return false;
  }
  writeFileSync(join(dir, 'pid'), String(process.pid));
  return true;
}

function heldByOther(dir: string): boolean {
  const holder = holderOf(dir);
  return holder !== undefined && holder !== process.pid && (Number.isNaN(holder) || alive(holder));
}

function release(): void {
  for (const dir of [...Array.from({ length: SLOTS }, (_, i) => slot(i)), ...Object.keys(SERIAL).map(group), gathering]) {
    if (holderOf(dir) === process.pid) rmSync(dir, { recursive: true, force: true });
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 100));

async function acquire(path: string): Promise<void> {
  for (const [name, pattern] of Object.entries(SERIAL)) if (pattern.test(path)) while (!tryHold(group(name))) await pause();
  if (ALONE.some((pattern) => pattern.test(path))) {
    while (!tryHold(gathering)) await pause();
    for (let i = 0; i < SLOTS; i++) while (!tryHold(slot(i))) await pause();
    return;
  }
  for (;;) {
    if (!heldByOther(gathering)) for (let i = 0; i < SLOTS; i++) if (tryHold(slot(i))) return;
    await pause();
  }
}

// In hooks, not at the top: a waiting file is already imported (its transform and playwright's load done) when
// a slot comes free. Registered before the file's own hooks, so the slot is taken before they run and given back
// after theirs (after hooks run in reverse): the file's browser is closed before the next file starts.
// Waiting may outlast hookTimeout: other browser files run meanwhile.
beforeAll(async () => {
  await acquire(expect.getState().testPath ?? '');
  process.once('exit', release);
}, 3_600_000);
afterAll(release);
