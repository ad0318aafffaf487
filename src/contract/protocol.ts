/**
 * What crosses the boundary between the page (create-memory.ts) and the worker (worker/index.ts), and between the
 * worker of one tab and the leader tab's worker (worker/leader.ts): the worker's API and options, the status, errors
 * as data and the Comlink transfer handler that keeps EngramError's code. The methods themselves are in methods.ts.
 */
import { transferHandlers, type TransferHandler } from 'comlink';
import type { EmbedderOptions } from '../embedder/index.js';
import { AGREEMENT } from '../embedder/device.js';
import type { ActiveDevice, DeviceChoice, DeviceReason } from '../embedder/options.js';
import { EngramError, ErrorCode, deserializeError, invalidInput, serializeError, type SerializedEngramError } from '../errors.js';
import type { SearchOptions } from '../search/options.js';
import type { RecordLimits } from '../engine/validate.js';
import type { EngineOptions } from '../engine/engine.js';
import type { LexicalOptions } from '../lexical/lexical-index.js';
import { describeValue } from '../util/describe.js';
import { checkKnownKeys } from '../util/keys.js';
import type { EncryptionOptions } from '../util/encryption.js';
import type { LearningOptions } from '../search/reinforce.js';
import type { S3TransportConfig } from '../sync/s3.js';
import type { SyncOptions, SyncStatus } from '../sync/sync.js';
import type { PageCompletion, PageReranker } from './remote-hooks.js';
import type { CallTimeouts, MethodName, WireArgs, WireResult } from './methods.js';
import type { Progress } from '../types.js';
import type { SalvageReport, StorageKind } from '../store/browser/types.js';

// Where a Memory's database lives and what a salvage reads: the browser store's own types (src/store/browser/types.ts).
export type { SalvageReport, StorageKind } from '../store/browser/types.js';

export interface MemoryStatus {
  storage: StorageKind;
  /** The browser promised not to evict this origin's storage (`navigator.storage.persisted()`). */
  persisted: boolean;
  /** Memories stored, as `Engine.stats().memories`. */
  memories: number;
  /** @deprecated The same as `memories` (the name `Engine.stats()` uses); kept for existing callers. */
  count: number;
  /** Id of the embedder in use; null while the model loads, when it failed, or when `embedder: null`. */
  embedder: string | null;
  /**
   * What runs the model and why (the embedder's `DeviceChoice`), with `minCosine` when WebGPU's calibration vectors
   * disagreed with WASM's, now or when the choice was remembered; null while no model is attached.
   */
  device: EmbedderDeviceStatus | null;
  /** Background (re-)embedding progress, or null when every memory has a vector for the current embedder. */
  indexing: Progress | null;
  /** How this open made the lexical index: from the stored snapshot, or rebuilt from every memory's text. */
  lexicalIndex: 'snapshot' | 'rebuilt';
  /**
   * This open found the database missing or empty although it had held memories (a sentinel kept outside it says
   * so): the browser evicted the origin's data or someone deleted it. False for 'memory', and false when the whole
   * origin was cleared (the sentinel goes with it; see src/store/browser/sentinel.ts).
   */
  evicted: boolean;
  /** The database is encrypted at rest (`MemoryOptions.encryption`). */
  encrypted: boolean;
  /**
   * The Memory locked itself after `lockAfterIdleMs` without calls: the database is closed and its key gone from
   * memory; every call but `status` and `unlock` rejects with LOCKED. The counts are those from just before the lock.
   */
  locked: boolean;
  /** Core memories (MemoryRecord.core). */
  core: number;
  /** Associations formed between memories retrieved together (docs/learning.md). */
  associations: number;
  /** Provenance links recorded with `link`. */
  links: number;
  /** The last background failure (model loading, re-indexing, access bookkeeping), or null. */
  error: { code: ErrorCode; message: string } | null;
  /**
   * Messages this tab's worker received on the tabs' channels and ignored because they were malformed or not part
   * of the protocol (another script of the origin posting there), since it started. Always 0 with storage 'memory'.
   */
  rejectedMessages: number;
  /**
   * This tab's worker holds the database (it runs the engine, and syncs); false in a tab that forwards its calls to
   * the tab that does. `rotateSyncKey` runs only where it is true (NOT_LEADER elsewhere). Always true with 'memory'.
   */
  leader: boolean;
  /**
   * What `Memory.ready` waits for: 'loading' until the model is attached and every memory has a vector for it
   * ('ready' at once with `embedder: null`), or the model's failure.
   */
  ready: 'loading' | 'ready' | { code: ErrorCode; message: string };
  /** Present when the Memory syncs (`MemoryOptions.sync`): last round, pending changes, last error. */
  sync?: SyncStatus;
}

export interface EmbedderDeviceStatus {
  device: ActiveDevice;
  reason: DeviceReason;
  minCosine?: number;
}

/** The status's `device`: a disagreement keeps its cosine even when remembered (the reason then says 'remembered'). */
export function deviceStatus(choice: DeviceChoice): EmbedderDeviceStatus {
  const disagreed = choice.minCosine !== undefined && !(choice.minCosine >= AGREEMENT);
  return { device: choice.device, reason: choice.reason, ...(disagreed ? { minCosine: choice.minCosine } : {}) };
}

// The Memory API's table and what is derived from it live in methods.ts (the worker's half, with the allowlist and the
// writes, in dispatch.ts).
export { timeoutFor, type CallTimeouts, type MethodName, type WireArgs, type WireResult } from './methods.js';

/** Default of `MemoryOptions.callTimeoutMs`. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** Default of `MemoryOptions.writeTimeoutMs`. */
export const DEFAULT_WRITE_TIMEOUT_MS = 120_000;
/** Default of `MemoryOptions.openTimeoutMs`. */
export const DEFAULT_OPEN_TIMEOUT_MS = 120_000;

export function timeoutError(method: string, ms: number, where: string): EngramError {
  return new EngramError(ErrorCode.TIMEOUT, `${method}() got no answer from ${where} within ${ms} ms`, { details: { method, timeoutMs: ms } });
}

/** Search options that can cross a thread: everything but the in-process `boost` hook. */
export type RemoteSearchOptions = Omit<SearchOptions, 'boost'>;

/**
 * The engine options a Memory forwards to the engine of the tab that opens the database, as they cross (plain data).
 * `MemoryOptions`, `WorkerOpenOptions` and the host's `HostOptions` each extend this, and the page, the worker and
 * the host copy exactly the keys of `FORWARDED_OPTIONS` (`forwardedOptions`): forwarding another engine option is
 * one field here and one entry there. That tab applies its own to every tab sharing the database, as it does its model.
 */
export interface ForwardedOptions {
  /**
   * The engine's record limits (text length, tags, labels, meta size and depth, records per call); each default is
   * in `defaultRecordLimits`. Default `{}`: the defaults.
   */
  limits: Partial<RecordLimits>;
  /** The constants of learning from use (`LearningOptions`, docs/learning.md). Default `{}`. */
  learning: Partial<LearningOptions>;
  /**
   * The lexical leg's scoring (`LexicalOptions.matchedTermsFactor`). Default `{}`: the engine's, which decides by the
   * collection (docs/quality.md).
   */
  lexical: Pick<LexicalOptions, 'matchedTermsFactor'>;
  /**
   * Opt-in background consolidation (`EngineOptions.consolidation`): `{ idleMs, options? }` runs `consolidate(options)`
   * once no write has come for `idleMs`, in the tab that holds the database, with that tab's own setting. Default `false`.
   */
  consolidation: EngineOptions['consolidation'];
  /**
   * End-to-end encrypted sync with the user's other devices through an S3-compatible bucket (docs/sync.md), in the
   * background; `memory.syncNow()` runs a round, `status().sync` reports. The transport is plain data (an S3
   * config) because it crosses to the worker. Default none.
   */
  sync: MemorySyncOptions | null;
}

/**
 * Each forwarded option (its type makes a missing or extra key a compile error), with the check the page runs
 * before it is posted; the engine checks the rest when it opens.
 */
export const FORWARDED_OPTIONS: { readonly [K in keyof ForwardedOptions]: { readonly check?: (value: NonNullable<ForwardedOptions[K]>) => void } } = {
  limits: {},
  learning: {},
  lexical: { check: checkMemoryLexical },
  consolidation: {},
  sync: { check: checkMemorySync },
};

export const FORWARDED_OPTION_KEYS = Object.freeze(Object.keys(FORWARDED_OPTIONS)) as readonly (keyof ForwardedOptions)[];

/** Forwarded options without nulls: what `createEngine` takes as they are (test/types checks that it does). */
export type SetForwardedOptions = { [K in keyof ForwardedOptions]?: Exclude<ForwardedOptions[K], null> };

/**
 * The forwarded options `from` sets, as the engine takes them: each key of FORWARDED_OPTIONS whose value is neither
 * undefined, null nor false (the engine's default for each of them).
 */
export function forwardedOptions(from: Partial<ForwardedOptions>): SetForwardedOptions {
  const out: Record<string, unknown> = {};
  for (const key of FORWARDED_OPTION_KEYS) {
    const value = from[key];
    if (value !== undefined && value !== null && value !== false) out[key] = value;
  }
  return out as SetForwardedOptions;
}

/** The page's check of each forwarded option it was given. */
export function checkForwardedOptions(from: Partial<ForwardedOptions>): void {
  for (const key of FORWARDED_OPTION_KEYS) {
    const value = from[key];
    const check = FORWARDED_OPTIONS[key].check as ((value: unknown) => void) | undefined;
    if (value !== undefined && value !== null) check?.(value);
  }
}

/** The lexical options a Memory takes: plain data only (the stemmer and term processing stay the engine's). */
function checkMemoryLexical(lexical: unknown): void {
  if (typeof lexical !== 'object' || lexical === null || Array.isArray(lexical)) throw invalidInput(`lexical must be an object, got ${describeValue(lexical)}`);
  checkKnownKeys(lexical, ['matchedTermsFactor'], { prefix: 'lexical.' });
  const value = (lexical as { matchedTermsFactor?: unknown }).matchedTermsFactor;
  if (value !== undefined && typeof value !== 'boolean' && value !== 'auto') throw invalidInput(`lexical.matchedTermsFactor must be a boolean or 'auto', got ${describeValue(value)}`);
}

/** The worker's options, as `createMemory` resolved them (plain data). */
export interface WorkerOpenOptions extends Partial<ForwardedOptions> {
  name: string;
  storage: 'auto' | StorageKind;
  /** Options for `createEmbedder` (its `onProgress` travels separately), or null for lexical search only. */
  embedder: WireEmbedderOptions | null;
  search: Partial<RemoteSearchOptions>;
  timeouts: CallTimeouts;
  /** Errors keep their stacks across the boundaries (`MemoryOptions.debug`). */
  debug: boolean;
  /** `MemoryOptions.encryption`: stays in the worker that receives it, never sent to another tab. */
  encryption: EncryptionOptions | null;
  /** `MemoryOptions.lockAfterIdleMs`, or null: applied by the tab that opens the database. */
  lockAfterIdleMs?: number | null;
}

/** Sync options that can cross to the worker: the transport as plain data (an S3 config). */
export type MemorySyncOptions = Omit<SyncOptions, 'transport'> & { transport: S3TransportConfig };

/** INVALID_INPUT unless `options` can cross to the worker (the engine checks the rest when it opens). */
export function checkMemorySync(options: unknown): void {
  const transport = (options as Partial<MemorySyncOptions> | null)?.transport as { kind?: unknown } | undefined;
  if (typeof options !== 'object' || options === null || typeof transport !== 'object' || transport === null || transport.kind !== 's3') {
    throw invalidInput("sync must be { transport: { kind: 's3', endpoint, bucket, accessKeyId, secretAccessKey }, passphrase | key }: a transport object cannot cross to the worker");
  }
}

// Encryption at rest: its options and their check sit below the stores, which read them (src/util/encryption.ts).
export { checkEncryption, type EncryptionOptions } from '../util/encryption.js';

export type WireEmbedderOptions = Omit<EmbedderOptions, 'onProgress'>;

/** What worker/index.ts exposes through Comlink. */
export interface WorkerApi {
  /**
   * Opens the store (or joins the tab that has it open). Resolves when searches can be answered. `llm` and
   * `reranker` are the page's hooks (`MemoryOptions.llm` / `reranker`) as Comlink proxies (src/contract/remote-hooks.ts);
   * the worker releases them when it closes.
   */
  open(options: WorkerOpenOptions, onModelProgress?: EmbedderOptions['onProgress'], llm?: PageCompletion, reranker?: PageReranker): Promise<void>;
  /** `callId`: the page's number for this call, which `abort` names (one Memory never reuses one while it runs). */
  call<M extends MethodName>(method: M, args: WireArgs<M>, onProgress?: (progress: Progress) => void, callId?: number): Promise<WireResult<M>>;
  /**
   * Aborts the call of `callId` (its `signal` aborted, or its timeout passed on the page): the worker aborts its
   * signal, which stops the call where it still can, and the call answers as it ends (ABORTED, or its value when it
   * was past its commit). Unknown ids are ignored: the call has been answered. An id on the call's own port rather
   * than a MessagePort per call: it arrives after the call it names (one port keeps order), no port is opened and
   * closed per call, and the same id travels on between tabs (worker/leader.ts), where a port cannot.
   */
  abort(callId: number): Promise<void>;
  status(): Promise<MemoryStatus>;
  /** Re-wraps the database's key for a new passphrase, in this worker (the passphrases never travel to another tab). */
  changePassphrase(current: string, next: string): Promise<void>;
  /**
   * Opens a Memory that locked itself after idle (`lockAfterIdleMs`) with its passphrase or key, checked in this worker
   * (WRONG_KEY): the secret never leaves it (another tab holding the database gets the data key, see worker/leader.ts).
   */
  unlock(secret: EncryptionOptions): Promise<void>;
  /** `salvageMemory`: reads a damaged database, in a worker that never opens one. */
  salvage(options: { name: string; storage: 'auto' | 'opfs' | 'idb'; encryption: EncryptionOptions | null }): Promise<SalvageReport>;
  close(): Promise<void>;
}

/**
 * How deep arguments may nest to cross to the worker. Chromium drops a message nested about 1,200 levels deep
 * without an error on either side (the call would only end in TIMEOUT); the engine's own limit on meta is far
 * below this (`limits.maxMetaDepth`, 32), so only inputs it would refuse anyway are refused here.
 */
export const MAX_WIRE_DEPTH = 256;

/** INVALID_INPUT for arguments nested deeper than MAX_WIRE_DEPTH, checked before they are posted. */
export function checkWireDepth(method: string, args: readonly unknown[]): void {
  const stack: [unknown, number][] = args.map((arg) => [arg, 1]);
  const seen = new Set<object>();
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    if (depth > MAX_WIRE_DEPTH) throw invalidInput(`the arguments of ${method}() nest more than ${MAX_WIRE_DEPTH} levels deep`);
    seen.add(value);
    const children = value instanceof Map ? [...value.keys(), ...value.values()] : value instanceof Set ? [...value] : Object.values(value);
    for (const child of children) stack.push([child, depth + 1]);
  }
}

/** What every call on a closed Memory rejects with, on either side of the boundary. */
export function closedError(): EngramError {
  return new EngramError(ErrorCode.CLOSED, 'this memory is closed');
}

/** Errors as plain data: an EngramError keeps its code and details, anything else its name and message. */
export type WireError = { engram: SerializedEngramError } | { name: string; message: string; stack?: string };

/** Whether errors this realm sends keep their stacks (the worker sets it from `MemoryOptions.debug`). */
let sendStacks = false;

/** Stacks name internal files: they cross only when the app opted in (`createMemory({ debug: true })`). */
export function setErrorStacks(enabled: boolean): void {
  sendStacks = enabled;
}

export function toWireError(error: unknown, stack = sendStacks): WireError {
  if (error instanceof EngramError) return { engram: serializeError(error, { stack }) };
  if (error instanceof Error) return { name: error.name, message: error.message, ...(stack && error.stack ? { stack: error.stack } : {}) };
  return { name: 'Error', message: String(error) };
}

/** True for what `toWireError` makes: how a message from another tab is checked before `fromWireError` reads it. */
export function isWireError(value: unknown): value is WireError {
  if (typeof value !== 'object' || value === null) return false;
  if ('engram' in value) {
    const engram = (value as { engram: unknown }).engram;
    if (typeof engram !== 'object' || engram === null) return false;
    const { code, message } = engram as { code?: unknown; message?: unknown };
    return typeof code === 'string' && code in ErrorCode && typeof message === 'string';
  }
  const { name, message } = value as { name?: unknown; message?: unknown };
  return typeof name === 'string' && typeof message === 'string';
}

export function fromWireError(wire: WireError): Error {
  if ('engram' in wire) return deserializeError(wire.engram);
  const error = new Error(wire.message);
  error.name = wire.name;
  if (wire.stack) error.stack = wire.stack;
  return error;
}

/**
 * Comlink sends a thrown error as name, message and stack only; this keeps an EngramError an EngramError with its
 * code on the other side. Both realms (page and worker) install it. It wraps Comlink's own handler and stays
 * compatible with it both ways, so other Comlink endpoints of the page (the app's own workers) are unaffected.
 */
export function installErrorTransfer(): void {
  const base = transferHandlers.get('throw') as TransferHandler<{ value: unknown }, unknown> | undefined;
  if (!base || (base as { engram?: true }).engram) return;
  const handler: TransferHandler<{ value: unknown }, unknown> & { engram: true } = {
    engram: true,
    canHandle: (value): value is { value: unknown } => base.canHandle(value),
    serialize: (thrown) => {
      const [plain, transfers] = base.serialize(thrown);
      // Comlink's own form carries the stack too: drop it unless stacks were asked for.
      const value = (plain as { value?: unknown }).value;
      const bare = !sendStacks && typeof value === 'object' && value !== null && 'stack' in value ? { ...(plain as object), value: { ...value, stack: undefined } } : plain;
      return [{ ...(bare as object), wire: toWireError(thrown.value) }, transfers];
    },
    deserialize: (serialized) => {
      if (typeof serialized === 'object' && serialized !== null && 'wire' in serialized) throw fromWireError((serialized as { wire: WireError }).wire);
      return base.deserialize(serialized);
    },
  };
  transferHandlers.set('throw', handler as TransferHandler<unknown, unknown>);
}
