/**
 * Sync of the change log through object storage, end to end encrypted (docs/sync.md). A round uploads the
 * queued entries (log.ts) as sealed objects, then reads every other device's new objects, checks them all, and
 * only then merges them (fields.ts: last writer by hybrid logical clock, learned state by maximum; removals are
 * tombstones and win) and applies the result through the engine's own import, remove, link and unlink, so
 * received text is embedded and indexed here like any other write. Snapshots (snapshot.ts) let a new device, or one
 * whose next object was compacted away, start from another device's merged state instead of the whole log.
 */
import { EngramError, ErrorCode, invalidInput, toEngramError } from '../errors.js';
import { linkKey } from '../store/graph-rows.js';
import type { AssociationEdge, Store } from '../store/store.js';
import type { Link, LinkKind, MemoryRecord } from '../types.js';
import { DAY_MS } from '../util/time.js';
import { epochBase, KEY_RECORD, newKeyRecord, open, seal, syncKey, type SyncKey, type SyncSecret } from './envelope.js';
import { mergeFields, type FieldClocks } from './fields.js';
import { parseHlc } from './hlc.js';
import { associationKey, ENTRIES_PER_PART, META, readJson, SyncLog, type Entry, type SnapshotHead } from './log.js';
import { s3Transport, type S3TransportConfig } from './s3.js';
import { checkHead, missingEntries, readSnapshotState, SNAPSHOT_NAME, snapshotEntries, snapshotName, stateEntries, type SnapshotData } from './snapshot.js';
import type { SyncTransport } from './transport.js';

export interface SyncOptions {
  /** Where objects go: a transport object, or an S3 config (plain data, so it can cross to a worker). */
  transport: SyncTransport | S3TransportConfig;
  /** The sync passphrase shared by the user's devices (at least 8 characters when it sets up a bucket)… */
  passphrase?: string;
  /** …or a raw sync key of at least 32 random bytes, handed over by the app (a QR code, say). */
  key?: Uint8Array;
  /** PBKDF2 iterations when a passphrase sets up a new bucket. Default 600,000. */
  iterations?: number;
  /** Key prefix of every object in the bucket. Default `engram/`. */
  prefix?: string;
  /** Background sync period; 0 syncs only on `syncNow()`. Default 60,000. */
  intervalMs?: number;
  /**
   * After a round, this device writes a snapshot when the bucket holds at least this many log objects not covered
   * by the newest snapshot; 0 never does. Default 200.
   */
  snapshotEvery?: number;
  /**
   * Log objects covered by one of this device's snapshots are deleted once that snapshot is this old (ms), with
   * its older snapshots: a device that was away longer starts again from the snapshot. Default 7 days.
   */
  retainMs?: number;
}

export interface SyncStatus {
  /** This device's id in the bucket. */
  device: string;
  /** When the last round completed (epoch ms), or null. */
  lastSyncAt: number | null;
  /** Local changes not uploaded yet: one per write, or per 250 entries of a large one. */
  pending: number;
  /** The last round's error, or null once a round succeeds. */
  error: { code: ErrorCode; message: string } | null;
}

/** What sync applies received changes through: the engine's own calls. */
export interface SyncTarget {
  get(id: string): Promise<MemoryRecord | null>;
  import(records: MemoryRecord[]): Promise<string[]>;
  remove(ids: string[]): Promise<number>;
  link(from: string, to: string, kind: LinkKind, options?: { confidence?: number }): Promise<Link>;
  unlink(from: string, to: string, kind?: LinkKind): Promise<number>;
  /** Keeps each received association where it is stronger than the local one (the engine's, not public). */
  mergeAssociations(edges: AssociationEdge[]): Promise<void>;
}

/** An object takes queued parts until it holds this many entries (or WRITES_PER_OBJECT parts). */
const ENTRIES_PER_OBJECT = 1000;
const WRITES_PER_OBJECT = 200;
/** Most objects checked and applied in one go (all or nothing), and downloads at once. */
const OBJECTS_PER_BATCH = 64;
const PARALLEL_GETS = 8;
const OBJECT_NAME = /^log\/([0-9a-z]+)\/(\d{12})$/;

export function objectName(prefix: string, device: string, seq: number): string {
  return `${prefix}log/${device}/${String(seq).padStart(12, '0')}`;
}

type CheckedOptions = { transport: SyncTransport; secret: SyncSecret; prefix: string; intervalMs: number; snapshotEvery: number; retainMs: number };

function checkSyncOptions(options: SyncOptions): CheckedOptions {
  if (typeof options !== 'object' || options === null) throw invalidInput('sync options must be an object { transport, passphrase | key }');
  const { transport, passphrase, key, iterations, prefix = 'engram/', intervalMs = 60_000, snapshotEvery = 200, retainMs = 7 * DAY_MS } = options;
  if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0) throw invalidInput('sync snapshotEvery must be an integer ≥ 0');
  if (!Number.isSafeInteger(retainMs) || retainMs < 0) throw invalidInput('sync retainMs must be an integer ≥ 0');
  if ((passphrase === undefined) === (key === undefined)) throw invalidInput('sync needs exactly one of passphrase or key');
  if (typeof prefix !== 'string' || (prefix !== '' && !prefix.endsWith('/'))) throw invalidInput('sync prefix must be a string ending in "/"');
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 0) throw invalidInput('sync intervalMs must be an integer ≥ 0');
  const resolved: Partial<SyncTransport> | null =
    typeof transport === 'object' && transport !== null && 'kind' in transport && transport.kind === 's3' ? s3Transport(transport) : (transport as SyncTransport);
  if (typeof resolved?.list !== 'function' || typeof resolved.get !== 'function' || typeof resolved.put !== 'function') {
    throw invalidInput('sync transport must be { list, get, put } or an S3 config { kind: "s3", … }');
  }
  const secret: SyncSecret = passphrase !== undefined ? { passphrase, ...(iterations !== undefined ? { iterations } : {}) } : { key: key! };
  return { transport: resolved as SyncTransport, secret, prefix, intervalMs, snapshotEvery, retainMs };
}

export class Sync {
  readonly log: SyncLog;
  private readonly transport: SyncTransport;
  private secret: SyncSecret;
  private readonly prefix: string;
  private readonly intervalMs: number;
  private readonly snapshotEvery: number;
  private readonly retainMs: number;
  private key: SyncKey | null = null;
  private running: Promise<SyncStatus> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private target: SyncTarget | null = null;
  private lastSyncAt: number | null = null;
  private error: SyncStatus['error'] = null;

  /** `maxRecordsPerCall`: the engine's limit on one import, so received batches are split to fit. */
  constructor(readonly store: Store, options: SyncOptions, private readonly clock: () => number, private readonly maxRecordsPerCall: number) {
    const checked = checkSyncOptions(options);
    this.transport = checked.transport;
    this.secret = checked.secret;
    this.prefix = checked.prefix;
    this.intervalMs = checked.intervalMs;
    this.snapshotEvery = checked.snapshotEvery;
    this.retainMs = checked.retainMs;
    this.log = new SyncLog(store, clock);
  }

  /** Reads the sync state (the engine is open) and starts background rounds. */
  async open(target: SyncTarget): Promise<void> {
    this.target = target;
    await this.log.open();
    if (this.intervalMs > 0) {
      this.timer = setInterval(() => void this.syncNow().catch(() => undefined), this.intervalMs);
      // Node: background sync must not keep the process alive.
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  status(): SyncStatus {
    const state = this.log.state!;
    return { device: state.device, lastSyncAt: this.lastSyncAt, pending: state.outSeq - state.sent, error: this.error && { ...this.error } };
  }

  /** One round: upload what is queued, then apply what other devices uploaded. Concurrent calls share a round. */
  syncNow(): Promise<SyncStatus> {
    this.running ??= this.guard(async () => {
      // Read every round (one small GET): a rotation must stop a device holding the old key before it uploads.
      this.key = await syncKey(this.transport, this.prefix, this.secret, this.key);
      await this.enterEpoch();
      await this.push();
      await this.readHeads();
      const base = await this.loadSnapshot();
      if (await this.requeue(base)) await this.push();
      while (await this.pull());
      await this.writeSnapshot();
    });
    return this.running;
  }

  private async guard(round: () => Promise<void>): Promise<SyncStatus> {
    try {
      await round();
      this.lastSyncAt = this.clock();
      this.error = null;
      return this.status();
    } catch (error) {
      const coded = toEngramError(error, ErrorCode.SYNC_FAILED, 'sync failed');
      this.error = { code: coded.code, message: coded.message };
      throw coded;
    } finally {
      this.running = null;
    }
  }

  /** Where this key's objects are (envelope.ts epochBase). */
  private get base(): string {
    return epochBase(this.prefix, this.key!.epoch);
  }

  /**
   * After a rotation this device starts over in the new epoch: its cursors and known snapshots were about objects
   * the new epoch does not have. What it has not uploaded yet stays queued and goes to the new epoch; an upload
   * planned under the old key is planned again. What it uploaded or received in the old epoch may never reach the
   * new one (an upload racing the rotation is deleted with the old epoch; a bucket set up by two devices at once
   * keeps one record): it is marked to be sent again (requeue). A new device had nothing there: it pays nothing.
   */
  private async enterEpoch(): Promise<void> {
    const state = this.log.state!;
    const from = state.epoch ?? '';
    if (from === this.key!.epoch) return;
    const held = state.objSeq > 0 || state.plan !== null || (state.ownSnapshots?.length ?? 0) > 0 || Object.keys(state.cursors).length > 0;
    // Left again before sending again: no rotation head can tell what is missing, so all of it is compared.
    if (held || state.resendFrom) state.resendFrom = { epoch: from, ...(state.resendFrom ? {} : { seen: { ...state.cursors, [state.device]: state.objSeq } }) };
    Object.assign(state, { epoch: this.key!.epoch, cursors: {}, snapshots: {}, ownSnapshots: [], objSeq: 0, plan: null });
    await this.writeState();
  }

  /**
   * On entering an epoch (enterEpoch), queues again what this device holds that the epoch's snapshot `base` (the one
   * just loaded; none: the epoch has none) lacks or holds older, with the original clocks, so it reaches the others
   * without rolling back anything newer; then deletes its own objects in the epoch it left (nobody reads them).
   * Nothing to compare when the rotation's head says its state held every object this device's state held there.
   * True when it queued something.
   */
  private async requeue(base: Entry[] | null): Promise<boolean> {
    const state = this.log.state!;
    const left = state.resendFrom;
    if (left === undefined) return false;
    const { seen } = left;
    const held = seen !== undefined && Object.values(state.snapshots ?? {}).some((h) => h.left?.epoch === left.epoch && Object.entries(seen).every(([device, seq]) => seq <= (h.left!.covers[device] ?? 0)));
    const entries = held ? [] : missingEntries(stateEntries((await readSnapshotState(this.store, state.graves ?? 0, true))!, this.log.now()), base ?? []);
    const meta: Record<string, string> = {};
    // A memory's entries stay in one part (so one object): together they can start it where it is unknown (merge).
    let part: Entry[] = [];
    const flush = () => {
      if (part.length === 0) return;
      meta[META.out + ++state.outSeq] = JSON.stringify(part);
      part = [];
    };
    entries.forEach((entry, i) => {
      const previous = entries[i - 1];
      if (part.length >= ENTRIES_PER_PART && !(entry.k === 'put' && previous?.k === 'put' && previous.id === entry.id)) flush();
      part.push(entry);
    });
    flush();
    delete state.resendFrom;
    await this.writeState(meta);
    const remove = this.transport.delete?.bind(this.transport);
    if (remove !== undefined && left.epoch !== this.key!.epoch) {
      const oldBase = epochBase(this.prefix, left.epoch);
      const own = [...(await this.transport.list(`${oldBase}log/${state.device}/`)), ...(await this.transport.list(`${oldBase}snap/${state.device}/`))];
      for (let start = 0; start < own.length; start += PARALLEL_GETS) await Promise.all(own.slice(start, start + PARALLEL_GETS).map((key) => remove(key).catch(() => undefined)));
    }
    return entries.length > 0;
  }

  /**
   * Rotates the sync key (docs/sync.md, Keys): a round under the current key merges what the others uploaded, then
   * a snapshot of the merged state goes to a new epoch sealed under the new key, the key record is replaced (the
   * switch), and the old epoch's objects are deleted. A device holding only the old key then gets WRONG_KEY.
   */
  async rotate(next: SyncSecret): Promise<SyncStatus> {
    // Derived first: a weak passphrase or short key fails before anything is done.
    const made = await newKeyRecord(next);
    await this.syncNow();
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.guard(async () => {
      const state = this.log.state!;
      const old = this.key!;
      const current = await syncKey(this.transport, this.prefix, this.secret, old);
      // Narrows the race of two devices rotating at once: the later one sees the record changed and stops.
      if (current.record !== old.record) throw new EngramError(ErrorCode.SYNC_FAILED, 'the sync key was rotated by another device meanwhile; nothing was rotated here');
      const read = await readSnapshotState(this.store, state.graves ?? 0);
      if (read === null) throw new EngramError(ErrorCode.SYNC_FAILED, 'a memory changed while the rotation read the state; nothing was rotated, try again');
      const oldBase = this.base;
      const base = epochBase(this.prefix, made.epoch);
      // Covers nothing of the new epoch's log: the others load it because they start the epoch afresh.
      const covers = { [state.device]: 0 };
      // What the state holds of the old epoch: a device that put nothing more there has nothing to send again.
      const head: SnapshotHead = { seq: 1, at: this.clock(), covers, left: { epoch: old.epoch, covers: { ...state.cursors, [state.device]: state.objSeq } } };
      const data: SnapshotData = { v: 1, covers, h: this.log.now(), ...read };
      const dataName = snapshotName(base, state.device, 1, 'data');
      const headName = snapshotName(base, state.device, 1, 'head');
      await this.transport.put(dataName, await seal(made.aes, dataName, state.device, 1, data));
      await this.transport.put(headName, await seal(made.aes, headName, state.device, 1, { v: 1, ...head }));
      // The switch: from here on every device needs the new secret, and reads only the new epoch.
      await this.transport.put(this.prefix + KEY_RECORD, new TextEncoder().encode(made.record));
      this.secret = next;
      this.key = made;
      Object.assign(state, { epoch: made.epoch, cursors: {}, snapshots: {}, ownSnapshots: [head], objSeq: 0, plan: null });
      // The new epoch's snapshot holds everything this device holds: nothing to send again.
      delete state.resendFrom;
      await this.writeState();
      const remove = this.transport.delete?.bind(this.transport);
      if (remove === undefined) return;
      const doomed = [...(await this.transport.list(`${oldBase}log/`)), ...(await this.transport.list(`${oldBase}snap/`))];
      for (let start = 0; start < doomed.length; start += PARALLEL_GETS) await Promise.all(doomed.slice(start, start + PARALLEL_GETS).map((key) => remove(key)));
    });
    return this.running;
  }

  private async writeState(meta: Record<string, string | null> = {}): Promise<void> {
    await this.store.write({ meta: { ...meta, [META.state]: JSON.stringify(this.log.state) } });
  }

  private async push(): Promise<void> {
    const state = this.log.state!;
    for (;;) {
      if (state.plan === null) {
        if (state.sent >= state.outSeq) return;
        let to = state.sent;
        for (let entries = 0; to < state.outSeq && to - state.sent < WRITES_PER_OBJECT && entries < ENTRIES_PER_OBJECT; ) {
          to++;
          entries += readJson<Entry[]>(await this.store.readMeta(META.out + to))?.length ?? 0;
        }
        state.plan = { seq: state.objSeq + 1, from: state.sent + 1, to };
        await this.writeState();
      }
      const plan = state.plan;
      const entries: Entry[] = [];
      for (let n = plan.from; n <= plan.to; n++) entries.push(...(readJson<Entry[]>(await this.store.readMeta(META.out + n)) ?? []));
      const name = objectName(this.base, state.device, plan.seq);
      await this.transport.put(name, await seal(this.key!.aes, name, state.device, plan.seq, { v: 1, entries }));
      const done: Record<string, null> = {};
      for (let n = plan.from; n <= plan.to; n++) done[META.out + n] = null;
      state.sent = plan.to;
      state.objSeq = plan.seq;
      state.plan = null;
      await this.writeState(done);
    }
  }

  /** The new objects of every other device, in sequence order up to the first gap, opened and checked. */
  private async fetchNew(): Promise<{ device: string; seq: number; entries: Entry[] }[]> {
    const state = this.log.state!;
    const seqs = new Map<string, number[]>();
    for (const key of await this.transport.list(`${this.base}log/`)) {
      const match = OBJECT_NAME.exec(key.slice(this.base.length));
      if (!match || match[1] === state.device) continue;
      const list = seqs.get(match[1]!) ?? [];
      list.push(Number(match[2]));
      seqs.set(match[1]!, list);
    }
    const wanted: { device: string; seq: number }[] = [];
    for (const [device, list] of seqs) {
      let next = (state.cursors[device] ?? 0) + 1;
      // A gap waits: an object missing in the middle is never skipped.
      for (const seq of list.sort((a, b) => a - b)) {
        if (seq < next) continue;
        if (seq !== next || wanted.length === OBJECTS_PER_BATCH) break;
        wanted.push({ device, seq });
        next++;
      }
    }
    const opened: { device: string; seq: number; entries: Entry[] }[] = [];
    for (let start = 0; start < wanted.length; start += PARALLEL_GETS) {
      const group = wanted.slice(start, start + PARALLEL_GETS).map(async ({ device, seq }) => {
        const name = objectName(this.base, device, seq);
        const bytes = await this.transport.get(name);
        if (bytes === null) throw new EngramError(ErrorCode.SYNC_FAILED, `sync object ${name} was listed but could not be read`);
        return { device, seq, entries: checkEntries(await open(this.key!.aes, name, device, seq, bytes), name) };
      });
      opened.push(...(await Promise.all(group)));
    }
    return opened;
  }

  /** Applies one batch of new objects; true when it applied some (more may wait). */
  private async pull(): Promise<boolean> {
    const objects = await this.fetchNew();
    if (objects.length === 0) return false;
    const covered: Record<string, number> = {};
    for (const { device, seq } of objects) covered[device] = Math.max(covered[device] ?? 0, seq);
    await this.applyEntries(objects.flatMap((o) => o.entries), new Set(), covered);
    return true;
  }

  /** Merges and applies `entries`, then moves the cursors up to `covered` (with the tombstones and links, at once). */
  private async applyEntries(entries: Entry[], creatable: Set<string>, covered: Record<string, number>): Promise<void> {
    entries.sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
    const plan = await this.merge(entries, creatable);
    await this.apply(plan);
    const state = this.log.state!;
    for (const [device, seq] of Object.entries(covered)) if (device !== state.device) state.cursors[device] = Math.max(state.cursors[device] ?? 0, seq);
    const meta: Record<string, string | null> = {};
    for (const [id, h] of plan.removed) meta[META.tombstone + id] = h;
    for (const [key, entry] of plan.links) meta[META.link + key] = entry.h;
    await this.writeState(meta);
  }

  /** Log object names under the prefix, parsed. */
  private async listLog(): Promise<{ key: string; device: string; seq: number }[]> {
    const out: { key: string; device: string; seq: number }[] = [];
    for (const key of await this.transport.list(`${this.base}log/`)) {
      const match = OBJECT_NAME.exec(key.slice(this.base.length));
      if (match) out.push({ key, device: match[1]!, seq: Number(match[2]) });
    }
    return out;
  }

  /** Reads the head of each other device's newest snapshot not read yet (one small object each). */
  private async readHeads(): Promise<void> {
    const state = this.log.state!;
    const newest = new Map<string, number>();
    for (const key of await this.transport.list(`${this.base}snap/`)) {
      const match = SNAPSHOT_NAME.exec(key.slice(this.base.length));
      if (match?.[3] === 'head' && match[1] !== state.device) newest.set(match[1]!, Math.max(newest.get(match[1]!) ?? 0, Number(match[2])));
    }
    const known = (state.snapshots ??= {});
    for (const writer of Object.keys(known)) if (!newest.has(writer)) delete known[writer];
    for (const [writer, seq] of newest) {
      if (known[writer]?.seq === seq) continue;
      const name = snapshotName(this.base, writer, seq, 'head');
      const bytes = await this.transport.get(name);
      if (bytes !== null) known[writer] = checkHead(await open(this.key!.aes, name, writer, seq, bytes), name, seq);
    }
  }

  /**
   * Starts from the snapshot covering the most when this device has received nothing yet, or when the next log
   * object of some device is gone (compacted) but a snapshot covers it: the log alone could never catch up.
   */
  private async loadSnapshot(): Promise<Entry[] | null> {
    const state = this.log.state!;
    const fresh = Object.keys(state.cursors).length === 0;
    const listed = new Set((await this.listLog()).map((o) => o.key));
    let best: [string, SnapshotHead] | null = null;
    for (const [writer, head] of Object.entries(state.snapshots ?? {})) {
      const useful = Object.entries(head.covers).some(([device, seq]) => {
        const cursor = state.cursors[device] ?? 0;
        return device !== state.device && seq > cursor && (fresh || !listed.has(objectName(this.base, device, cursor + 1)));
      });
      // A rotation's snapshot covers no log object but holds the whole merged state: a fresh device starts from it.
      if ((useful || (fresh && coveredCount(head) === 0)) && (best === null || coveredCount(head) > coveredCount(best[1]))) best = [writer, head];
    }
    if (best === null) return null;
    const [writer, head] = best;
    const name = snapshotName(this.base, writer, head.seq, 'data');
    const bytes = await this.transport.get(name);
    if (bytes === null) throw new EngramError(ErrorCode.SYNC_FAILED, `sync snapshot ${name} was listed but could not be read`);
    const { entries, creatable } = snapshotEntries(await open(this.key!.aes, name, writer, head.seq, bytes), name, head);
    await this.applyEntries([...entries], creatable, head.covers);
    return entries;
  }

  /** Writes a snapshot when enough log objects are not covered by the newest one, then compacts. */
  private async writeSnapshot(): Promise<void> {
    const state = this.log.state!;
    const own = (state.ownSnapshots ??= []);
    let objects = await this.listLog();
    if (this.snapshotEvery > 0) {
      const heads = [...Object.values(state.snapshots ?? {}), ...own];
      const newest = heads.reduce<SnapshotHead | null>((best, h) => (best === null || coveredCount(h) > coveredCount(best) ? h : best), null);
      const uncovered = objects.filter((o) => o.seq > (newest?.covers[o.device] ?? 0)).length;
      if (uncovered >= this.snapshotEvery) {
        // What the state covers is read first: everything it names is already in the store when the state is read.
        const covers = { ...state.cursors, [state.device]: state.objSeq };
        const h = this.log.now();
        const read = await readSnapshotState(this.store, state.graves ?? 0);
        if (read !== null) {
          const head: SnapshotHead = { seq: (own.at(-1)?.seq ?? 0) + 1, at: this.clock(), covers };
          const data: SnapshotData = { v: 1, covers, h, ...read };
          const dataName = snapshotName(this.base, state.device, head.seq, 'data');
          const headName = snapshotName(this.base, state.device, head.seq, 'head');
          // Data first: a listed head always has its data.
          await this.transport.put(dataName, await seal(this.key!.aes, dataName, state.device, head.seq, data));
          await this.transport.put(headName, await seal(this.key!.aes, headName, state.device, head.seq, { v: 1, ...head }));
          own.push(head);
          await this.writeState();
        }
      }
    }
    await this.compact(objects);
  }

  /**
   * Deletes the log objects covered by this device's newest snapshot older than `retainMs`, and its snapshots
   * before that one. A device still behind them loads that snapshot (loadSnapshot), so none is left unable to converge.
   */
  private async compact(objects: { key: string; device: string; seq: number }[]): Promise<void> {
    const state = this.log.state!;
    const own = state.ownSnapshots ?? [];
    const ripe = own.filter((h) => h.at <= this.clock() - this.retainMs).at(-1);
    const remove = this.transport.delete?.bind(this.transport);
    if (ripe === undefined || remove === undefined) return;
    const doomed = objects.filter((o) => o.seq <= (ripe.covers[o.device] ?? 0)).map((o) => o.key);
    for (const old of own.filter((h) => h.seq < ripe.seq)) doomed.push(snapshotName(this.base, state.device, old.seq, 'head'), snapshotName(this.base, state.device, old.seq, 'data'));
    for (let start = 0; start < doomed.length; start += PARALLEL_GETS) await Promise.all(doomed.slice(start, start + PARALLEL_GETS).map((key) => remove(key)));
    if (own.length > 1 && own[0]!.seq < ripe.seq) {
      state.ownSnapshots = own.filter((h) => h.seq >= ripe.seq);
      await this.writeState();
    }
  }

  /** Received entries (in clock order) merged with the local state: what to upsert, remove and (un)link. */
  private async merge(entries: Entry[], creatable: Set<string>) {
    const store = this.store;
    const work = new Map<string, { record: MemoryRecord; clocks: FieldClocks } | null>();
    const removed = new Map<string, string>();
    const links = new Map<string, Extract<Entry, { k: 'link' }>>();
    const associations: AssociationEdge[] = [];
    // Ids whose entries here together carry text and createdAt: a memory sent again (requeue) comes as one entry
    // per clock that set some of its fields.
    const parts = new Map<string, Set<string>>();
    for (const entry of entries) if (entry.k === 'put') for (const field of Object.keys(entry.f)) parts.set(entry.id, (parts.get(entry.id) ?? new Set()).add(field));
    const startable = (id: string) => creatable.has(id) || (parts.get(id)?.has('text') === true && parts.get(id)!.has('createdAt'));
    for (const entry of entries) {
      this.log.receive(parseHlc(entry.h)!);
      if (entry.k === 'assoc') {
        associations.push({ a: entry.a, b: entry.b, weight: entry.w, lastAt: entry.t });
      } else if (entry.k === 'del') {
        if (!removed.has(entry.id)) removed.set(entry.id, entry.h);
        work.delete(entry.id);
      } else if (entry.k === 'link') {
        const key = linkKey(entry);
        const current = links.get(key)?.h ?? (await store.readMeta(META.link + key));
        if (current === null || entry.h > String(current)) links.set(key, entry);
      } else {
        // A removal wins over every change to the memory, earlier or concurrent.
        if (removed.has(entry.id) || (await store.readMeta(META.tombstone + entry.id)) !== null) continue;
        let current = work.get(entry.id);
        if (current === undefined) {
          const record = await this.target!.get(entry.id);
          current = record ? { record, clocks: readJson<FieldClocks>(await store.readMeta(META.fields + entry.id)) ?? {} } : null;
        }
        if (current === null) {
          // Unknown here: only entries that create the memory (together they carry text and createdAt), or a snapshot's, start it.
          if (!startable(entry.id)) continue;
          current = { record: { id: entry.id, text: '', createdAt: 0, priority: 1, pinned: false, tags: [], accessCount: 0 }, clocks: {} };
        }
        mergeFields(current.record, current.clocks, entry.h, entry.f);
        work.set(entry.id, current);
      }
    }
    const upserts = [...work.values()].filter((w) => w !== null);
    return { upserts, removed, links, associations: associations.filter((e) => !removed.has(e.a) && !removed.has(e.b)) };
  }

  /**
   * Imports received records; when the batch is refused as invalid (another device may allow what this one's
   * limits do not), imports them one by one and leaves out those refused, so one record cannot stall sync.
   */
  private async importFitting(records: MemoryRecord[]): Promise<void> {
    try {
      await this.target!.import(records);
    } catch (error) {
      if (!(error instanceof EngramError && error.code === ErrorCode.INVALID_INPUT)) throw error;
      if (records.length > 1) for (const record of records) await this.importFitting([record]);
    }
  }

  private async apply(plan: Awaited<ReturnType<Sync['merge']>>): Promise<void> {
    const target = this.target!;
    const remote = this.log.remote;
    try {
      for (const { record, clocks } of plan.upserts) remote.puts.set(record.id, clocks);
      for (let start = 0; start < plan.upserts.length; start += this.maxRecordsPerCall) {
        await this.importFitting(plan.upserts.slice(start, start + this.maxRecordsPerCall).map((w) => w.record));
      }
      remote.puts.clear();
      for (const [id, h] of plan.removed) remote.removes.set(id, h);
      // Only ids stored here: an id this device's checks refuse cannot be one of them.
      const present = (await Promise.all([...plan.removed.keys()].map(async (id) => ((await target.get(id).catch(() => null)) ? id : null)))).filter((id) => id !== null);
      if (present.length > 0) await target.remove(present);
      remote.removes.clear();
      for (const [key, entry] of plan.links) {
        remote.links.set(key, entry.h);
        try {
          if (entry.on) await target.link(entry.from, entry.to, entry.kind, entry.c === undefined ? {} : { confidence: entry.c });
          else await target.unlink(entry.from, entry.to, entry.kind);
        } catch (error) {
          // A link to a memory removed here (or left out as invalid) has nothing to attach to; one this device's
          // checks refuse is left out too, rather than stall every later round.
          if (!(error instanceof EngramError && (error.code === ErrorCode.NOT_FOUND || error.code === ErrorCode.INVALID_INPUT))) throw error;
        }
        remote.links.delete(key);
      }
      for (const edge of plan.associations) remote.associations.add(associationKey(edge));
      if (plan.associations.length > 0) await target.mergeAssociations(plan.associations);
    } finally {
      remote.associations.clear();
      remote.puts.clear();
      remote.removes.clear();
      remote.links.clear();
    }
  }
}

/** How many log objects a snapshot covers, over all devices. */
function coveredCount(head: SnapshotHead): number {
  return Object.values(head.covers).reduce((sum, seq) => sum + seq, 0);
}

/**
 * The entries of an opened object: anything malformed is SYNC_TAMPERED. Their clocks are mostly `device`'s own, but
 * an object sent again on entering a key epoch (requeue) carries what that device holds, with the original clocks.
 */
function checkEntries(payload: unknown, name: string): Entry[] {
  const entries = (payload as { v?: unknown; entries?: unknown } | null)?.entries;
  const valid =
    (payload as { v?: unknown }).v === 1 &&
    Array.isArray(entries) &&
    entries.every((e: Partial<Entry> | null) => {
      if (typeof e !== 'object' || e === null || typeof e.h !== 'string' || parseHlc(e.h) === null) return false;
      if (e.k === 'put') return typeof e.id === 'string' && typeof e.f === 'object' && e.f !== null;
      if (e.k === 'del') return typeof e.id === 'string';
      if (e.k === 'assoc') return typeof e.a === 'string' && typeof e.b === 'string' && e.a < e.b && typeof e.w === 'number' && e.w > 0 && e.w <= 1 && Number.isFinite(e.t);
      return e.k === 'link' && typeof e.from === 'string' && typeof e.to === 'string' && typeof e.kind === 'string' && typeof e.on === 'boolean';
    });
  if (!valid) throw new EngramError(ErrorCode.SYNC_TAMPERED, `sync object ${name} was refused: its entries are malformed; nothing from this round was applied`, { details: { name } });
  return entries as Entry[];
}
