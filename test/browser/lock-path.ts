import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** This run's lock for one-at-a-time.ts, the same for every project's global setup (one vitest process). */
export function browserLockPath(): string {
  return join(tmpdir(), `engram-browser-lock-${process.pid}`);
}
