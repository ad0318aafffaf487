/** What both sides of the tabs' protocol (leading.ts, following.ts) read of the group member they belong to (leader.ts). */
import type { CallTimeouts } from '../src/contract/protocol.js';
import type { Host } from './host.js';
import type { Keys } from './tab-keys.js';
import type { FromLeader, GroupMessage, ToLeader } from './tab-messages.js';

export interface GroupOptions {
  timeouts: CallTimeouts;
  /** Ask the leader for error stacks (`MemoryOptions.debug`). */
  debug: boolean;
  /**
   * The HMAC key of an encrypted database's tab proofs (src/store/browser/keyring.ts `tabProofKey`), or null for a plain one.
   * Asked by a leader once its database is open, by a follower before it joins; what it throws (WRONG_KEY,
   * KEY_REQUIRED, NOT_ENCRYPTED) ends the join. Default: a plain database.
   */
  auth?: () => Promise<CryptoKey | null>;
  /**
   * The database locked itself after idle (this worker's host did, or the leader said so): the worker forgets its
   * passphrase or key, so a takeover cannot open the database again without `unlock`.
   */
  onLocked?: () => void;
}

export interface Seat {
  readonly id: string;
  readonly keys: Keys;
  readonly lockName: string;
  readonly group: BroadcastChannel;
  readonly options: GroupOptions;
  /** This worker's host while it leads, else null. */
  readonly host: Host | null;
  readonly closed: boolean;
  /** The tab proof key (GroupOptions.auth), or null for a plain database. */
  auth(): Promise<CryptoKey | null>;
  post(channel: BroadcastChannel, message: GroupMessage | FromLeader | ToLeader): void;
  guarded(handle: () => void): void;
  /** Counts a message ignored or refused (`status().rejectedMessages`). */
  reject(): void;
  /** This worker cannot go on (it cannot join: no key, or not the database's): its calls fail with `error`. */
  fail(error: unknown): void;
  /** A leader welcomed this worker, or it leads, or failed: `join` stops waiting. */
  found(): void;
  /** A poll's answer, with this tab's own part. */
  withCount(method: string, value: unknown): unknown;
}
