/**
 * The idle lock of an encrypted database (`MemoryOptions.lockAfterIdleMs`, docs/worker.md "Idle lock"), around the
 * host of the tab that holds the database. Every tab's calls pass through here, so idle means no call from any tab.
 * Locking closes the host (snapshot saved, background work stopped, store closed, its data key zeroed); until
 * `unlock` opens it again with a data key, every call but `status` rejects with LOCKED.
 */
import { EngramError, ErrorCode } from '../src/errors.js';
import type { MemoryStatus, StorageKind } from '../src/contract/protocol.js';
import { isPoll } from '../src/contract/dispatch.js';
import type { Progress } from '../src/types.js';
import type { Host } from './host.js';

/** Opens the host: with the worker's own passphrase or key (null), or with a data key (which it then owns). */
export type OpenHost = (dataKey: Uint8Array | null) => Promise<Host>;

export function lockedError(): EngramError {
  return new EngramError(ErrorCode.LOCKED, 'this memory locked itself after being idle: call unlock(passphrase) to open it again');
}

export class LockingHost implements Host {
  private host: Host | null = null;
  private locking: Promise<void> | null = null;
  private opening: Promise<void> | null = null;
  /** Calls running now (status aside): the lock waits for none. */
  private active = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The status from just before the lock, answered (as locked) while locked. */
  private lastStatus: MemoryStatus | null = null;
  private readonly listeners: (() => void)[] = [];
  private closed = false;

  /**
   * `idleMs` null: never locks by itself, but may start locked (`locked`: this tab took the database over after a
   * lock had made it forget its passphrase).
   */
  static async open(openHost: OpenHost, idleMs: number | null, storage: StorageKind, locked: boolean): Promise<LockingHost> {
    const lockable = new LockingHost(openHost, idleMs, storage);
    if (!locked) {
      lockable.host = await openHost(null);
      lockable.arm();
    }
    return lockable;
  }

  private constructor(
    private readonly openHost: OpenHost,
    private readonly idleMs: number | null,
    private readonly storage: StorageKind,
  ) {}

  get locked(): boolean {
    return this.host === null;
  }

  /** `listener` runs each time the host locks. */
  onLock(listener: () => void): void {
    this.listeners.push(listener);
  }

  async call(method: string, args: unknown[], onProgress?: (progress: Progress) => void, retry?: boolean, signal?: AbortSignal): Promise<unknown> {
    const host = this.locking ? null : this.host;
    if (isPoll(method)) return host ? host.call(method, []) : this.lockedStatus();
    if (!host) throw lockedError();
    this.active++;
    clearTimeout(this.timer);
    try {
      return await host.call(method, args, onProgress, retry, signal);
    } finally {
      this.active--;
      this.arm();
    }
  }

  /** Opens the host again with `dataKey` (taken over: the store zeroes it when it closes); nothing if open. */
  async unlock(dataKey: Uint8Array): Promise<void> {
    await this.locking;
    await this.opening?.catch(() => undefined);
    if (this.closed) throw new EngramError(ErrorCode.CLOSED, 'this memory is closed');
    if (this.host) {
      dataKey.fill(0);
      return;
    }
    this.opening = this.openHost(dataKey).then((host) => {
      this.host = host;
      this.arm();
    });
    try {
      await this.opening;
    } catch (error) {
      dataKey.fill(0);
      throw error;
    } finally {
      this.opening = null;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.locking;
    await this.opening?.catch(() => undefined);
    const host = this.host;
    this.host = null;
    await host?.close();
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.idleMs === null || this.active > 0 || !this.host || this.closed) return;
    this.timer = setTimeout(() => void this.lock(), this.idleMs);
  }

  private async lock(): Promise<void> {
    const host = this.host;
    if (!host || this.locking || this.opening || this.active > 0 || this.closed) return;
    this.locking = (async () => {
      this.lastStatus = (await host.call('status', []).catch(() => null)) as MemoryStatus | null;
      // A failed close still leaves the store closed or unusable; the next unlock opens a new one.
      await host.close().catch(() => undefined);
      this.host = null;
      for (const listener of this.listeners) listener();
    })();
    try {
      await this.locking;
    } finally {
      this.locking = null;
    }
  }

  private lockedStatus(): MemoryStatus {
    const last = this.lastStatus;
    return {
      storage: this.storage,
      persisted: last?.persisted ?? false,
      memories: last?.memories ?? 0,
      count: last?.memories ?? 0,
      embedder: null,
      device: null,
      indexing: null,
      lexicalIndex: last?.lexicalIndex ?? 'rebuilt',
      evicted: last?.evicted ?? false,
      encrypted: true,
      locked: true,
      core: last?.core ?? 0,
      associations: last?.associations ?? 0,
      links: last?.links ?? 0,
      error: null,
      rejectedMessages: 0,
      leader: true, // this host is the holder's; leader.ts sets a follower's own
      ready: last?.ready ?? 'loading',
    };
  }
}
