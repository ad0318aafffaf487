/**
 * engram-mcp's trash: `forget` moves memories here instead of deleting them, so a user can take back what an agent
 * forgot (a mistake, or a prompt injection) for `days` days; after that they are purged. The trash is one versioned
 * JSON value in the database file's meta table, next to the memories it came from.
 */
import { EngramError, ErrorCode } from '../errors.js';
import type { Engine } from '../engine/engine.js';
import type { Store } from '../store/store.js';
import type { MemoryRecord } from '../types.js';
import { DAY_MS } from '../util/time.js';

const TRASH_KEY = 'mcp.trash';
const TRASH_VERSION = 1;

export interface TrashEntry {
  /** Epoch ms. */
  forgottenAt: number;
  /** The whole record as `export` gave it (its vector is computed again on restore; links and associations are not kept). */
  record: MemoryRecord;
}

export interface Restored {
  restored: string[];
  /** Not in the trash (never forgotten, purged, or outside what this server may see). */
  notFound: string[];
  /** A memory with this id is stored again (the forget was interrupted, or the id was reused): left in the trash. */
  alreadyStored: string[];
}

export class Trash {
  private readonly keepMs: number;

  constructor(days: number) {
    if (!Number.isFinite(days) || days < 0) throw new EngramError(ErrorCode.INVALID_INPUT, `the trash keeps memories for a number of days ≥ 0, got ${days}`);
    this.keepMs = days * DAY_MS;
  }

  /** The memories in the trash that `visible` accepts, most recently forgotten first; purges expired ones first. */
  async list(store: Store, visible: (record: MemoryRecord) => boolean, now = Date.now()): Promise<TrashEntry[]> {
    const entries = await this.current(store, now);
    return entries.filter((entry) => visible(entry.record)).sort((a, b) => b.forgottenAt - a.forgottenAt);
  }

  /**
   * Moves `records` (stored memories) to the trash: written there first, then removed, so an interruption leaves a
   * memory in both places, never in neither. Returns how many were removed.
   */
  async forget(engine: Engine, store: Store, records: MemoryRecord[], now = Date.now()): Promise<number> {
    if (records.length === 0) return 0;
    const ids = new Set(records.map((record) => record.id));
    const kept = (await this.current(store, now)).filter((entry) => !ids.has(entry.record.id));
    await this.save(store, [...kept, ...records.map((record) => ({ forgottenAt: now, record }))]);
    return engine.remove([...ids]);
  }

  /** Stores the named memories again (re-embedded) and takes them out of the trash. */
  async restore(engine: Engine, store: Store, ids: string[], visible: (record: MemoryRecord) => boolean, now = Date.now()): Promise<Restored> {
    const entries = await this.current(store, now);
    const result: Restored = { restored: [], notFound: [], alreadyStored: [] };
    const back: MemoryRecord[] = [];
    for (const id of new Set(ids)) {
      const entry = entries.find((candidate) => candidate.record.id === id && visible(candidate.record));
      if (!entry) result.notFound.push(id);
      else if (await engine.get(id)) result.alreadyStored.push(id);
      else back.push(entry.record);
    }
    if (back.length > 0) {
      await engine.import(back);
      const restored = new Set(back.map((record) => record.id));
      await this.save(store, entries.filter((entry) => !restored.has(entry.record.id)));
      result.restored = [...restored];
    }
    return result;
  }

  /** Drops what was forgotten more than `days` ago (written only when something expired). */
  async purge(store: Store, now = Date.now()): Promise<void> {
    await this.current(store, now);
  }

  private async current(store: Store, now: number): Promise<TrashEntry[]> {
    const entries = await read(store);
    const live = entries.filter((entry) => now - entry.forgottenAt <= this.keepMs);
    if (live.length < entries.length) await this.save(store, live);
    return live;
  }

  private async save(store: Store, entries: TrashEntry[]): Promise<void> {
    await store.write({ meta: { [TRASH_KEY]: entries.length === 0 ? null : JSON.stringify({ version: TRASH_VERSION, entries }) } });
  }
}

async function read(store: Store): Promise<TrashEntry[]> {
  const raw = await store.readMeta(TRASH_KEY);
  if (raw === null) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof raw === 'string' ? raw : new TextDecoder().decode(raw));
  } catch (error) {
    throw new EngramError(ErrorCode.STORE_FAILED, 'the trash of forgotten memories is not valid JSON', { cause: error });
  }
  const version = (parsed as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && version > TRASH_VERSION) {
    throw new EngramError(ErrorCode.SCHEMA_TOO_NEW, `the trash of forgotten memories has version ${version}; this engram-mcp reads version ${TRASH_VERSION}: upgrade it`);
  }
  const entries = (parsed as { entries?: unknown } | null)?.entries;
  if (version !== TRASH_VERSION || !Array.isArray(entries) || !entries.every(isEntry)) {
    throw new EngramError(ErrorCode.STORE_FAILED, 'the trash of forgotten memories is damaged (not the version-1 shape)');
  }
  return entries;
}

function isEntry(value: unknown): value is TrashEntry {
  const entry = value as { forgottenAt?: unknown; record?: { id?: unknown; text?: unknown } } | null;
  return typeof entry?.forgottenAt === 'number' && typeof entry.record?.id === 'string' && typeof entry.record.text === 'string';
}
