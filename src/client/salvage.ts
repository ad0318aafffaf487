/**
 * `salvageMemory`: reads what is left of a damaged database in a worker of its own (src/store/browser/salvage-read.ts), for when
 * `createMemory` refuses it with STORE_CORRUPT.
 */
import * as Comlink from 'comlink';
import { invalidInput } from '../errors.js';
import { spawnWorker, withTimeout, workerCrash, type MemoryOptions } from './create-memory.js';
import { checkEncryption, DEFAULT_OPEN_TIMEOUT_MS, installErrorTransfer, type SalvageReport, type WorkerApi } from '../contract/protocol.js';

export type { SalvageReport } from '../contract/protocol.js';

export interface SalvageOptions {
  /** The database's name, as given to `createMemory`. Default `'engram'`. */
  name?: string;
  /** Where it lives, as given to `createMemory`. Default `'auto'`. */
  storage?: 'auto' | 'opfs' | 'idb';
  /** Its `encryption`, as given to `createMemory`. Default none. */
  encryption?: MemoryOptions['encryption'];
  /** As `MemoryOptions.worker`: a worker running `engram/worker`, used for this salvage only and not terminated. */
  worker?: Worker;
  /** As `MemoryOptions.trustedTypes`. */
  trustedTypes?: MemoryOptions['trustedTypes'];
  /** Milliseconds the salvage may take before it rejects with TIMEOUT. Default 120,000. */
  timeoutMs?: number;
}

/**
 * Reads every memory of a damaged database that can still be read, without opening it as a Memory: for a database
 * that `createMemory` refuses with STORE_CORRUPT. Nothing is written. No tab may hold the database meanwhile
 * (STORE_FAILED if one does). An encrypted page that fails its check is read as it decrypts.
 *
 * @example
 * ```ts
 * import { createMemory, isEngramError, ErrorCode, salvageMemory } from 'engram';
 *
 * try {
 *   await createMemory({ name: 'notes' });
 * } catch (error) {
 *   if (!isEngramError(error, ErrorCode.STORE_CORRUPT)) throw error;
 *   const { records, lost } = await salvageMemory({ name: 'notes' });
 *   const fresh = await createMemory({ name: 'notes-restored' });
 *   await fresh.import(records); // `lost`: rowid ranges that could not be read
 * }
 * ```
 */
export async function salvageMemory(options: SalvageOptions = {}): Promise<SalvageReport> {
  installErrorTransfer();
  const { name = 'engram', storage = 'auto', encryption = null, timeoutMs = DEFAULT_OPEN_TIMEOUT_MS } = options;
  if (encryption !== null) checkEncryption(encryption);
  if (typeof timeoutMs !== 'number' || !(timeoutMs > 0) || timeoutMs > 2 ** 31 - 1) throw invalidInput(`timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  const worker = options.worker ?? spawnWorker(name, options.trustedTypes);
  const remote = Comlink.wrap<WorkerApi>(worker);
  const crashed = workerCrash(worker);
  try {
    return await withTimeout(() => Promise.race([remote.salvage({ name, storage, encryption }), crashed]), 'salvage', timeoutMs);
  } finally {
    remote[Comlink.releaseProxy]();
    if (!options.worker) worker.terminate();
  }
}
