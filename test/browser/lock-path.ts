import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * This run's directory of slots.ts's locks, the same for every project's global setup (one vitest process),
 * made here.
 */
export function browserLockPath(): string {
  const dir = join(tmpdir(), `engram-browser-lock-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
