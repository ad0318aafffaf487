/**
 * An engine on a database file that other processes share (engram-mcp: one server per MCP client, several clients on
 * one file). The file store holds SQLite's exclusive lock while open, so the lease opens the engine for a burst of
 * calls and closes it, releasing the file, once idle; a process that finds the file held retries until it is free.
 */
import { EngramError, ErrorCode, isEngramError } from '../errors.js';
import { createEngine, type Engine, type EngineOptions } from '../engine/engine.js';
import { readSnapshot, saveSnapshot } from '../engine/lexical-persistence.js';
import type { Store } from '../store/store.js';
import type { Embedder } from '../types.js';
import { openNodeStore } from '../store/node/file-store.js';

export interface EngineLeaseOptions {
  /** The database file. */
  path: string;
  /** Loaded once and kept across re-opens (`engine.close()` leaves the embedder loaded); null: lexical only. */
  embedder: Promise<Embedder | null>;
  /** Close the engine (and release the file) after this long without a call. Default 1000. */
  idleMs?: number;
  /** Release the file after holding it this long, between two calls, so a process waiting on it gets a turn. Default 5000. */
  maxHoldMs?: number;
  /** How long a call waits for another process to release the file before failing with STORE_LOCKED. Default 30,000. */
  lockTimeoutMs?: number;
  /** Failures of background work (closing when idle). */
  onError?(error: unknown): void;
  /** Other engine options (search defaults, limits…). */
  engine?: Omit<EngineOptions, 'store' | 'embedder' | 'indexSnapshot'>;
}

/** A process waiting for the file retries every RETRY_MS or so (jittered, at most 1.5×). */
const RETRY_MS = 50;
/** Reopening waits this long after the last release: a waiting process retries meanwhile and gets its turn. */
const YIELD_MS = 2 * RETRY_MS;

const sleep = (ms: number) => (ms > 0 ? new Promise<void>((done) => setTimeout(done, ms)) : Promise.resolve());

export class EngineLease {
  private engine: Engine | null = null;
  private store: Store | null = null;
  private openedAt = 0;
  private releasedAt = 0;
  /** Changes to what the lexical index reads since open: the snapshot is saved on release only then. */
  private changed = false;
  /** Calls run one at a time: opening, closing and the calls between never interleave. */
  private tail: Promise<unknown> = Promise.resolve();
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private ended = false;
  private readonly idleMs: number;
  private readonly maxHoldMs: number;
  private readonly lockTimeoutMs: number;

  constructor(private readonly options: EngineLeaseOptions) {
    this.idleMs = options.idleMs ?? 1000;
    this.maxHoldMs = options.maxHoldMs ?? 5000;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
  }

  /**
   * Runs `body` on the open engine (and its store, for engram-mcp's own meta: the trash), opening it first when needed. `writes`: the call may add memories or change
   * their text or tags (the lexical snapshot is then saved on release). Resolves after the body: a write is
   * acknowledged once committed.
   */
  use<T>(body: (engine: Engine, store: Store) => Promise<T>, { writes = false } = {}): Promise<T> {
    return this.serial(async () => {
      if (this.ended) throw new EngramError(ErrorCode.CLOSED, 'the server is shutting down');
      clearTimeout(this.idleTimer);
      if (this.engine && Date.now() - this.openedAt >= this.maxHoldMs) await this.release();
      const engine = this.engine ?? (await this.acquire());
      try {
        return await body(engine, this.store!);
      } finally {
        if (writes) this.changed = true;
        this.idleTimer = setTimeout(() => void this.serial(() => this.release()).catch((error) => this.options.onError?.(error)), this.idleMs);
      }
    });
  }

  /** Waits for running calls, closes the engine and refuses later calls. */
  async end(): Promise<void> {
    this.ended = true;
    clearTimeout(this.idleTimer);
    await this.serial(() => this.release());
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async acquire(): Promise<Engine> {
    // Before the file is taken: loading the model must not hold it.
    const embedder = await this.options.embedder;
    await sleep(this.releasedAt + YIELD_MS - Date.now());
    const deadline = Date.now() + this.lockTimeoutMs;
    let store: Store;
    for (;;) {
      try {
        // Retried here rather than through SQLite's busy timeout, which blocks the thread (and the MCP messages) while it waits.
        store = await openNodeStore({ path: this.options.path });
        break;
      } catch (error) {
        if (!isEngramError(error, ErrorCode.STORE_LOCKED) || Date.now() >= deadline) throw error;
        await sleep(RETRY_MS * (0.5 + Math.random()));
      }
    }
    try {
      const indexSnapshot = await readSnapshot(store);
      this.engine = await createEngine({ ...this.options.engine, store, embedder, indexSnapshot });
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
    this.store = store;
    this.openedAt = Date.now();
    this.changed = this.engine.lexicalSource === 'rebuilt';
    return this.engine;
  }

  private async release(): Promise<void> {
    const { engine, store } = this;
    if (!engine || !store) return;
    this.engine = null;
    this.store = null;
    try {
      // The next open (here or in another process) restores the lexical index instead of re-indexing every text.
      if (this.changed) await saveSnapshot(engine, store);
    } finally {
      // Whatever failed (a flush on a full disk), the file must not stay locked by a process that no longer uses it.
      await engine.close().catch(async (error: unknown) => {
        await store.close().catch(() => undefined);
        throw error;
      });
      this.releasedAt = Date.now();
    }
  }
}
