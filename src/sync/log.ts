/**
 * The outgoing change log, kept in the store's meta beside the change it records: a store write that changes
 * memories or links is staged here first, which adds its log entries, the changed fields' clocks and the sync
 * state to the same atomic write, so a change and its entry are stored together or not at all.
 *
 * Meta keys: `sync:state` (device id, clock, queue and upload positions, cursor per remote device), `sync:out:<n>`
 * (the entries of the n-th staged write, until uploaded), `sync:f:<id>` (a memory's field clocks), `sync:t:<id>`
 * (a removed memory's tombstone), `sync:l:<link>` (a link's last change), `sync:g:<n>` (the removals and unlinks of
 * the n-th write that made some: the store cannot list meta keys, and a snapshot must carry them).
 */
import { ErrorCode } from '../errors.js';
import { linkKey } from '../store/graph-rows.js';
import type { AssociationEdge, Store, StoreWrite } from '../store/store.js';
import type { Link, LinkKind } from '../types.js';
import { changedFields, MAX_FIELDS, valueHash, type FieldClocks } from './fields.js';
import { formatHlc, receive, tick, type HlcState } from './hlc.js';

/** Most entries per queued part (`sync:out:<n>`). */
export const ENTRIES_PER_PART = 250;

export const META = { state: 'sync:state', out: 'sync:out:', fields: 'sync:f:', tombstone: 'sync:t:', link: 'sync:l:', grave: 'sync:g:' } as const;

export type Entry =
  | { k: 'put'; id: string; h: string; f: Record<string, unknown> }
  | { k: 'del'; id: string; h: string }
  | { k: 'link'; from: string; to: string; kind: LinkKind; h: string; on: boolean; c?: number }
  | { k: 'assoc'; a: string; b: string; w: number; t: number; h: string };

export interface SyncState {
  device: string;
  hlc: HlcState;
  /** Number of the last queued part of entries (`sync:out:<n>`; a write queues one part per ENTRIES_PER_PART entries). */
  outSeq: number;
  /** Parts up to this one are uploaded. */
  sent: number;
  /** Sequence number of the last object uploaded. */
  objSeq: number;
  /** The upload in progress: retried as it is, so an object's name always holds the same entries. */
  plan: { seq: number; from: number; to: number } | null;
  /** Per remote device, the last object applied. */
  cursors: Record<string, number>;
  /** Number of the last `sync:g:<n>` part (removals and unlinks). */
  graves?: number;
  /** Snapshots seen in the bucket (snapshot.ts), by writer: the newest's number, time and covered objects. */
  snapshots?: Record<string, SnapshotHead>;
  /** This device's own snapshots still in the bucket, oldest first. */
  ownSnapshots?: SnapshotHead[];
  /** The key epoch the cursors, sequence numbers and snapshots are about ('' or absent: the bucket's first key). */
  epoch?: string;
  /**
   * The epoch this device left after putting objects into it, until what it holds that the new epoch lacks is
   * queued again (sync.ts requeue): those objects may have been deleted, or never read, before reaching anyone.
   * `seen`: per device, the last object its state held there (this device's own: the last it uploaded).
   */
  resendFrom?: { epoch: string; seen?: Record<string, number> };
  /**
   * The last queued part holding a change that is not read-side learning (see `isLearning`): parts after it wait
   * for the next such change, so a search alone uploads nothing. Set on opening a state from before it.
   */
  due?: number;
  /** The last key record this device accepted (envelope.ts AcceptedKey): an older one, or none, is refused. */
  keyRecord?: { epoch: string; generation: number };
  /** Per remote device, the highest object another device's objects say it has seen (sync.ts: a withheld tail). */
  expect?: Record<string, number>;
  /** Per device (this one too), the digests of its last objects applied or uploaded here: [seq, digest]. */
  digests?: Record<string, [number, string][]>;
  /** Per device, an object another device said it read, not read here yet: compared once it is (a fork). */
  claims?: Record<string, { seq: number; digest: string; from: string }>;
  /** One-off reports kept until read in `status()` (clock refusals, a new device id, a rebuilt state), newest last. */
  notices?: SyncNotice[];
}

/** Something sync did or refused once, reported in `status().notices`. */
export interface SyncNotice {
  code: ErrorCode;
  message: string;
  at: number;
  device?: string;
  object?: string;
}

/** A device id: 128 random bits, nothing else (no time: object names would tell when the device was set up). */
export function newDeviceId(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Access bookkeeping and what searches form (associations): learned fields only, or association edges. */
const LEARNING: ReadonlySet<string> = new Set(MAX_FIELDS);
function isLearning(entry: Entry): boolean {
  return entry.k === 'assoc' || (entry.k === 'put' && Object.keys(entry.f).every((field) => LEARNING.has(field)));
}

/** Whether a stored state has the shape this code reads (anything else is damage: SyncLog.open rebuilds). */
function validState(value: unknown): value is SyncState {
  const s = value as Partial<SyncState> | null;
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  return (
    typeof s === 'object' && s !== null && typeof s.device === 'string' && /^[0-9a-z]{1,64}$/.test(s.device) &&
    typeof s.hlc === 'object' && s.hlc !== null && count(s.hlc.wall) && count(s.hlc.count) &&
    count(s.outSeq) && count(s.sent) && s.sent! <= s.outSeq! && count(s.objSeq) &&
    typeof s.cursors === 'object' && s.cursors !== null && Object.values(s.cursors).every(count) &&
    (s.plan === null || (typeof s.plan === 'object' && count(s.plan?.seq) && count(s.plan?.from) && count(s.plan?.to)))
  );
}

/** What a snapshot covers: per device, the last log object merged into it; `at` is its writer's wall clock. */
export interface SnapshotHead {
  seq: number;
  at: number;
  covers: Record<string, number>;
  /** A rotation's snapshot: the epoch it left and, per device, the last object of it the state held. */
  left?: { epoch: string; covers: Record<string, number> };
}

/** One write's removals (id → clock) and unlinked link keys, kept for the next snapshot. */
export interface GravePart {
  t: Record<string, string>;
  l: string[];
}

/** What a write applying received entries stores instead of new entries: the merged clocks. */
export interface RemoteWrites {
  puts: Map<string, FieldClocks>;
  /** Removed ids, and links by key, with the clock of the entry applied. */
  removes: Map<string, string>;
  links: Map<string, string>;
  /** Received association edges being stored, by `associationKey`. */
  associations: Set<string>;
}

/** An edge as it was received: its pair, weight and time (a local change to the pair differs in one of them). */
export function associationKey(edge: AssociationEdge): string {
  return JSON.stringify([edge.a, edge.b, edge.weight, edge.lastAt]);
}

export function readJson<T>(value: string | Uint8Array | null): T | null {
  if (value === null) return null;
  try {
    return JSON.parse(typeof value === 'string' ? value : new TextDecoder().decode(value)) as T;
  } catch {
    return null;
  }
}

export class SyncLog {
  state: SyncState | null = null;
  /** Set while received entries are applied through the engine: those writes add no entries of their own. */
  remote: RemoteWrites = { puts: new Map(), removes: new Map(), links: new Map(), associations: new Set() };

  /** Set when open() found the state damaged and rebuilt it. */
  damaged = false;

  constructor(private readonly store: Store, private readonly clock: () => number) {}

  /** Keeps `notice` for status() (the last 20; saved with the state's next write). */
  notice(notice: Omit<SyncNotice, 'at'>): void {
    const notices = (this.state!.notices ??= []);
    notices.push({ ...notice, at: this.clock() });
    if (notices.length > 20) notices.splice(0, notices.length - 20);
  }

  /**
   * Reads the state, or starts one (a new device id) and logs every memory already stored, so they sync too. A
   * state that is there but damaged is rebuilt, and said so (a notice, and `damaged`): a new device id that sends
   * again everything held here with its stored clocks (sync.ts requeue), so a change queued before the damage is
   * not lost; its removals come from the write parts that record them (`sync:g:<n>`), found by reading on.
   */
  async open(): Promise<void> {
    const raw = await this.store.readMeta(META.state);
    const stored = readJson<SyncState>(raw);
    if (validState(stored)) {
      // A state from before `due`: everything it queued is due, and learning waits from now on.
      stored.due ??= stored.outSeq;
      this.state = stored;
      return;
    }
    if (raw !== null) {
      let graves = 0;
      while ((await this.store.readMeta(META.grave + (graves + 1))) !== null) graves++;
      this.damaged = true;
      this.state = { device: newDeviceId(), hlc: { wall: 0, count: 0 }, outSeq: 0, sent: 0, objSeq: 0, plan: null, cursors: {}, due: 0, graves, resendFrom: { epoch: '' } };
      this.notice({ code: ErrorCode.SYNC_FAILED, message: `the sync state was damaged: rebuilt as device ${this.state.device}, which sends again everything held here` });
      await this.store.write({ meta: { [META.state]: JSON.stringify(this.state) } });
      return;
    }
    this.state = { device: newDeviceId(), hlc: { wall: 0, count: 0 }, outSeq: 0, sent: 0, objSeq: 0, plan: null, cursors: {}, due: 0 };
    const records = await this.store.loadRecords();
    const links = (await this.store.loadLinks?.()) ?? [];
    const associations = (await this.store.loadAssociations?.()) ?? [];
    for (let start = 0; start < Math.max(records.length, 1); start += 500) {
      const first = start === 0 ? { links: { put: links }, associations: { put: associations } } : {};
      await this.store.write(await this.stage({ put: records.slice(start, start + 500), ...first }));
    }
  }

  now(): string {
    const state = this.state!;
    state.hlc = tick(state.hlc, this.clock());
    return formatHlc(state.hlc, state.device);
  }

  receive(remote: HlcState): void {
    this.state!.hlc = receive(this.state!.hlc, remote, this.clock());
  }

  /** `change` plus its entries, clocks and the sync state; unchanged when it touches no memory or link. */
  async stage(change: StoreWrite): Promise<StoreWrite> {
    const state = this.state;
    if (!state || (!change.put?.length && !change.remove?.length && !change.links && !change.associations?.put?.length)) return change;
    const meta: Record<string, string | null> = {};
    const entries: Entry[] = [];
    let hlc: string | null = null;
    const stamp = () => (hlc ??= this.now());
    const puts = change.put ?? [];
    const stored = await Promise.all(puts.map((r) => (this.remote.puts.has(r.id) ? null : this.store.readMeta(META.fields + r.id))));
    puts.forEach((record, i) => {
      const merged = this.remote.puts.get(record.id);
      if (merged) {
        meta[META.fields + record.id] = JSON.stringify(merged);
        return;
      }
      const clocks = readJson<FieldClocks>(stored[i]!) ?? {};
      const changed = changedFields(record, clocks);
      const names = Object.keys(changed) as (keyof FieldClocks)[];
      if (names.length === 0) return;
      const h = stamp();
      for (const name of names) clocks[name] = [h, valueHash(record[name])];
      meta[META.fields + record.id] = JSON.stringify(clocks);
      entries.push({ k: 'put', id: record.id, h, f: changed });
    });
    const grave: GravePart = { t: {}, l: [] };
    for (const id of change.remove ?? []) {
      const received = this.remote.removes.get(id);
      const h = received ?? stamp();
      grave.t[id] = h;
      meta[META.tombstone + id] = h;
      meta[META.fields + id] = null;
      if (received === undefined) entries.push({ k: 'del', id, h });
    }
    const linkEntry = (link: Pick<Link, 'from' | 'to' | 'kind'> & { confidence?: number }, on: boolean) => {
      const key = linkKey(link);
      const received = this.remote.links.get(key);
      const h = received ?? stamp();
      meta[META.link + key] = h;
      if (received === undefined) entries.push({ k: 'link', from: link.from, to: link.to, kind: link.kind, h, on, ...(on ? { c: link.confidence } : {}) });
    };
    for (const link of change.links?.put ?? []) linkEntry(link, true);
    for (const link of change.links?.remove ?? []) {
      linkEntry(link, false);
      grave.l.push(linkKey(link));
    }
    if (grave.l.length > 0 || Object.keys(grave.t).length > 0) {
      state.graves = (state.graves ?? 0) + 1;
      meta[META.grave + state.graves] = JSON.stringify(grave);
    }
    // Evictions stay local (each device bounds its own graph); formed and strengthened edges travel.
    for (const edge of change.associations?.put ?? []) {
      if (!this.remote.associations.has(associationKey(edge))) entries.push({ k: 'assoc', a: edge.a, b: edge.b, w: edge.weight, t: edge.lastAt, h: stamp() });
    }
    // A large write is queued in parts, so objects stay small (sync.ts packs parts into objects).
    for (let start = 0; start < entries.length; start += ENTRIES_PER_PART) {
      state.outSeq++;
      meta[META.out + state.outSeq] = JSON.stringify(entries.slice(start, start + ENTRIES_PER_PART));
    }
    if (!entries.every(isLearning)) state.due = state.outSeq;
    meta[META.state] = JSON.stringify(state);
    return { ...change, meta: { ...change.meta, ...meta } };
  }
}

/** A store whose writes are staged by `log` first: every write path of the engine passes through it. */
export function loggedStore(store: Store, log: SyncLog): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'write') return async (change: StoreWrite) => target.write(await log.stage(change));
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
