/** The one error catalogue. Codes are stable: callers may switch on them. */
export const ErrorCode = {
  INVALID_INPUT: 'INVALID_INPUT',
  DUPLICATE_ID: 'DUPLICATE_ID',
  NOT_FOUND: 'NOT_FOUND',
  DIMENSION_MISMATCH: 'DIMENSION_MISMATCH',
  EMBEDDER_FAILED: 'EMBEDDER_FAILED',
  MODEL_NOT_FOUND: 'MODEL_NOT_FOUND',
  MODEL_INVALID: 'MODEL_INVALID',
  STORE_FAILED: 'STORE_FAILED',
  /**
   * The database file is damaged (SQLite found a malformed page, or an encrypted page failed its check): `details.quickCheck`
   * holds what SQLite's quick_check found; `salvageMemory` reads what is left.
   */
  STORE_CORRUPT: 'STORE_CORRUPT',
  QUOTA_EXCEEDED: 'QUOTA_EXCEEDED',
  SCHEMA_TOO_NEW: 'SCHEMA_TOO_NEW',
  SNAPSHOT_INVALID: 'SNAPSHOT_INVALID',
  WORKER_FAILED: 'WORKER_FAILED',
  CLOSED: 'CLOSED',
  /** A Memory call (or opening one) got no answer in time: see `MemoryOptions.callTimeoutMs` / `writeTimeoutMs`. */
  TIMEOUT: 'TIMEOUT',
  /**
   * A call was aborted through its `signal` (or its Memory call timed out) before it wrote anything: nothing of that
   * call was stored. `details.method` names it. A write whose atomic commit had begun completes and resolves instead.
   */
  ABORTED: 'ABORTED',
  /** The passphrase or key does not unlock this encrypted database (nothing was changed). */
  WRONG_KEY: 'WRONG_KEY',
  /** A new passphrase (creating an encrypted database, or `changePassphrase`'s `next`) shorter than 8 characters. */
  WEAK_PASSPHRASE: 'WEAK_PASSPHRASE',
  /** The database is encrypted and was opened without `encryption`. */
  KEY_REQUIRED: 'KEY_REQUIRED',
  /** An encrypted Memory locked itself after `lockAfterIdleMs` without calls: `memory.unlock(passphrase)` opens it again. */
  LOCKED: 'LOCKED',
  /** `encryption` was given for a database that exists unencrypted (or `changePassphrase` on one): see docs/worker.md. */
  NOT_ENCRYPTED: 'NOT_ENCRYPTED',
  /**
   * The database file is open in another process, or in a store of this one not closed yet (engram/node's
   * `openNodeStore` holds it until `close()`): `details.holder` is `'another process'` or `'this process'`.
   */
  STORE_LOCKED: 'STORE_LOCKED',
  /** Sync storage did not answer or refused a request (docs/sync.md); entries stay queued and go on the next sync. */
  SYNC_FAILED: 'SYNC_FAILED',
  /** A sync object failed its check (changed, moved, replayed, cut) or the key record is damaged: nothing from that round was applied. */
  SYNC_TAMPERED: 'SYNC_TAMPERED',
  /**
   * A sync entry's clock is later than now plus the allowed drift (`SyncOptions.maxClockDriftMs`, docs/sync.md
   * Clocks): that entry was not applied, so one far-ahead clock cannot drag every device's clock with it.
   */
  SYNC_CLOCK: 'SYNC_CLOCK',
  /**
   * A call that runs only in the tab holding the database (`rotateSyncKey`: its secret never travels to another tab)
   * was made in a tab that forwards to another one (`status().leader` is false).
   */
  NOT_LEADER: 'NOT_LEADER',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const PREFIX = 'Engram: ';

export class EngramError extends Error {
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message.startsWith(PREFIX) ? message : PREFIX + message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EngramError';
    this.code = code;
    if (options.details) this.details = options.details;
  }
}

/**
 * Whether `value` is an EngramError, of `code` when given: codes keep across the worker boundary.
 *
 * @example
 * ```ts
 * try {
 *   await memory.add({ id: 'a', text: 'again' });
 * } catch (error) {
 *   if (isEngramError(error, ErrorCode.DUPLICATE_ID)) await memory.update('a', { text: 'again' });
 *   else throw error;
 * }
 * ```
 */
export function isEngramError(value: unknown, code?: ErrorCode): value is EngramError {
  return value instanceof EngramError && (code === undefined || value.code === code);
}

/** Wraps anything thrown by a dependency, keeping an EngramError as it is. */
export function toEngramError(error: unknown, code: ErrorCode, message: string): EngramError {
  if (error instanceof EngramError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new EngramError(code, `${message}: ${reason}`, { cause: error });
}

/** Plain, structured-clone-safe form, used across the worker boundary. */
export interface SerializedEngramError {
  name: string;
  code: ErrorCode;
  message: string;
  stack?: string;
  details?: Record<string, unknown>;
}

/** `stack: false` leaves the stack out (it names internal files): how errors cross Engram's own boundaries by default. */
export function serializeError(error: EngramError, options: { stack?: boolean } = {}): SerializedEngramError {
  const plain: SerializedEngramError = { name: error.name, code: error.code, message: error.message, details: error.details };
  if (options.stack !== false && error.stack) plain.stack = error.stack;
  return plain;
}

export function deserializeError(data: SerializedEngramError): EngramError {
  const error = new EngramError(data.code, data.message, { details: data.details });
  if (data.stack) error.stack = data.stack;
  return error;
}

export function invalidInput(message: string, details?: Record<string, unknown>): EngramError {
  return new EngramError(ErrorCode.INVALID_INPUT, message, { details });
}
