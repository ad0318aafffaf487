/** The engine's API: what `createEngine` returns (engine.ts implements it; a Memory forwards it to a worker). */
import type { IndexSnapshot } from '../lexical/snapshot.js';
import type { SearchOptions } from '../search/options.js';
import type { SyncStatus } from '../sync/sync.js';
import type {
  Association, ConsolidateOptions, ConsolidateResult, ConversationMessage, Embedder, RememberOptions, RememberResult, Link, LinkKind, MemoryInput, MemoryPatch, MemoryRecord, Progress, SearchResult, Timeline, TimelineOptions, Why, WhyOptions,
} from '../types.js';

export interface AddOptions {
  /** Called after each embedded batch: memories done so far out of the call's total (the last one once stored). */
  onProgress?(progress: Progress): void;
  /**
   * Aborts the call until its one atomic store write begins (checked before each embedding batch and before the
   * write): it then rejects with ABORTED and nothing of it was stored. An abort after that point is too late: the
   * call resolves as usual. Default none.
   */
  signal?: AbortSignal;
}

export interface Engine {
  /**
   * Stores memories; returns their ids in input order. Atomic: every item is stored or none is. `signal` aborts it
   * until that one write (ABORTED, nothing stored); `onProgress` reaches its total once the write is done.
   */
  add(input: MemoryInput | MemoryInput[], opts?: AddOptions): Promise<string[]>;
  search(query: string, options?: Partial<SearchOptions>): Promise<SearchResult>;
  /** A copy of the memory, or null when there is none with this id. */
  get(id: string): Promise<MemoryRecord | null>;
  /**
   * The memories just before and after one memory (copies, oldest first): in its thread (`meta.thread`), or, when it
   * has none, among the memories without a thread by createdAt (ties by arrival). Every stored memory counts,
   * superseded and expired ones too (their records say so): a timeline shows what was stored, as `get` does.
   * `before`/`after`: integers 0–100, default 3 (INVALID_INPUT otherwise). NOT_FOUND for an unknown id.
   */
  timeline(id: string, options?: TimelineOptions): Promise<Timeline>;
  /** Applies a patch (null clears an optional field); re-embeds when the text changes. NOT_FOUND for an unknown id. */
  update(id: string, patch: MemoryPatch): Promise<MemoryRecord>;
  /** Removes memories; unknown ids are ignored. Returns how many were removed. */
  remove(ids: string | string[]): Promise<number>;
  pin(id: string, pinned?: boolean): Promise<MemoryRecord>;
  count(): Promise<number>;
  /** Every record (copies, plain data), re-importable with `import`. */
  export(): Promise<MemoryRecord[]>;
  /** Upserts records (as exported, or plain inputs); atomic like `add`, and aborted like it. Returns ids in input order. */
  import(records: (MemoryRecord | MemoryInput)[], opts?: AddOptions): Promise<string[]>;
  /** Waits for queued writes (touch bookkeeping, re-indexing batches already started). */
  flush(): Promise<void>;
  /** Stops re-indexing, waits for queued writes, closes the store. Later calls reject with CLOSED. */
  close(): Promise<void>;
  /** Swaps the embedder: loads its stored vectors and re-embeds the rest in the background. */
  setEmbedder(embedder: Embedder | null): Promise<void>;
  readonly embedder: Embedder | null;
  /** Re-indexing progress, or null when every memory has a vector for the current embedder (or there is no embedder). */
  indexing(): Progress | null;
  /** Settles when the current re-indexing ends: resolves when vectors are complete, rejects with its error. */
  readonly ready: Promise<void>;
  /** The memory's associations (weights decayed to now), strongest first. NOT_FOUND for an unknown id. */
  related(id: string): Promise<Association[]>;
  /**
   * Records a provenance link: `from` causes, derives from, edits… `to` (LinkKind). Both memories must exist
   * (NOT_FOUND), and differ. Linking again replaces the confidence.
   */
  link(from: string, to: string, kind: LinkKind, options?: { confidence?: number }): Promise<Link>;
  /** Removes the links from `from` to `to` (of `kind` only, when given). Returns how many were removed. */
  unlink(from: string, to: string, kind?: LinkKind): Promise<number>;
  /** The provenance links reached from a memory, breadth first (`WhyOptions`). NOT_FOUND for an unknown id. */
  why(id: string, options?: WhyOptions): Promise<Why>;
  /**
   * Memory formation (docs/formation.md): the engine's language model lists the facts about the user in a
   * conversation (messages, or plain text as one user message) and decides for each against the closest stored
   * memories: add it, supersede the memory it updates or contradicts, or reinforce the one that already says it.
   * New facts link `derives_from` to their turns, stored as memories of kind 'turn' (unless `storeTurns: false`).
   * Without a model, or when it fails, times out or answers off the JSON shape, the turns are stored and
   * `fallback` says why. INVALID_INPUT for a conversation or options of another shape. `options.signal` goes to the
   * model and aborts the call until its one write: ABORTED, and nothing (not even the turns) was stored.
   */
  remember(conversation: string | ConversationMessage[], options?: RememberOptions): Promise<RememberResult>;
  /**
   * Folds near-duplicates (calibrated cosine ≥ the supersede threshold) into the newest; with the engine's language
   * model, also summarises clusters of related memories into one memory that supersedes them and derives from each.
   * Nothing is deleted: deep recall and `why` still reach every original. `options.signal` as for `remember`.
   */
  consolidate(options?: ConsolidateOptions): Promise<ConsolidateResult>;
  /** How many memories, core memories, associations and provenance links the engine holds. */
  stats(): Promise<EngineStats>;
  /**
   * One sync round (EngineOptions.sync): uploads queued local changes, then applies the other devices' changes.
   * A bad object is set aside and reported in `problems` (the others still apply). SYNC_FAILED when the storage
   * does not answer (changes stay queued), SYNC_TAMPERED when the key record is refused, WRONG_KEY for another
   * sync passphrase or key.
   */
  syncNow(): Promise<SyncStatus>;
  /**
   * Rotates the sync key, to remove a device (docs/sync.md, Keys): after a round under the current key, seals the
   * merged state under `next` in a new key epoch, replaces the bucket's key record and deletes the old epoch's
   * objects. Devices given `next` converge; one holding only the old key gets WRONG_KEY and uploads nothing more.
   * Open the engine with `next` from then on. WEAK_PASSPHRASE or INVALID_INPUT for an unfit `next` (nothing done).
   */
  rotateSyncKey(next: SyncKeyInput): Promise<SyncStatus>;
  /** The lexical index in its binary snapshot form, with the store's change counter (waits for queued writes first). */
  indexSnapshot(): Promise<IndexSnapshot>;
  /** How the lexical index was made on open: loaded from `indexSnapshot`, or rebuilt from the records. */
  readonly lexicalSource: 'snapshot' | 'rebuilt';
  /**
   * Saves the compact vector index (its codes and IVF lists) into the store, so the next open restores it instead
   * of reading and encoding every vector; only what changed since the last save is written. Returns the bytes
   * written (0: nothing changed, a float32 index, or a store without `vectorCounter`). Waits for queued writes.
   */
  saveVectorIndex(): Promise<number>;
  /** How the vector index was made on open: restored from its saved form, or loaded from the stored vectors. */
  readonly vectorSource: 'saved' | 'loaded';
}

/** A new sync secret: a passphrase (PBKDF2 `iterations`, default 600,000) or a raw key of at least 32 random bytes. */
export type SyncKeyInput = { passphrase: string; iterations?: number } | { key: Uint8Array };

export interface EngineStats {
  memories: number;
  core: number;
  associations: number;
  links: number;
  /** Present when the engine syncs (EngineOptions.sync). */
  sync?: SyncStatus;
}
