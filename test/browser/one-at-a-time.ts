/**
 * Setup file of the browser, engines and consumers projects: one of their test files runs at a time, across the
 * worker processes of the pool they share with the unit project (vitest.config.ts), so unit files run beside one
 * browser file; two browser files at once would overload two cores. A directory is the lock: mkdir is atomic, and
 * a holder that died (its pid gone) is taken over.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';

const lock = inject('browserLock');
const owner = join(lock, 'pid');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function tryAcquire(): boolean {
  try {
    mkdirSync(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    let holder = NaN;
    try {
      holder = Number(readFileSync(owner, 'utf8'));
    } catch {
      // Between the holder's mkdir and its pid write (still held), unless that was long ago (the holder died).
      const made = statSync(lock, { throwIfNoEntry: false });
      if (made && Date.now() - made.mtimeMs > 10_000) rmSync(lock, { recursive: true, force: true });
      return false;
    }
    if (Number.isFinite(holder) && !alive(holder)) rmSync(lock, { recursive: true, force: true });
    return false;
  }
  writeFileSync(owner, String(process.pid));
  return true;
}

function release(): void {
  try {
    if (Number(readFileSync(owner, 'utf8')) === process.pid) rmSync(lock, { recursive: true, force: true });
  } catch {
    // Not held.
  }
}

// In hooks, not at the top: a waiting file is already imported (its transform and playwright's load done) when
// the lock comes free. Registered before the file's own hooks, so the lock is taken before they run and given
// back after theirs (after hooks run in reverse): the file's browser is closed before the next file starts.
// Waiting may outlast hookTimeout: a whole other browser file runs meanwhile.
beforeAll(async () => {
  while (!tryAcquire()) await new Promise((resolve) => setTimeout(resolve, 100));
  process.once('exit', release);
}, 3_600_000);
afterAll(release);
