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
import { checkNewSecret, epochBase, KEY_RECORD, MIN_SYNC_ITERATIONS, newKeyRecord, open, seal, syncKey, type SyncKey, type SyncSecret } from './envelope.js';
import { mergeFields, type FieldClocks } from './fields.js';
import { parseHlc } from './hlc.js';
import { associationKey, ENTRIES_PER_PART, META, newDeviceId, readJson, SyncLog, type Entry, type SnapshotHead, type SyncNotice } from './log.js';
import { s3Transport, type S3TransportConfig } from './s3.js';
import { checkHead, missingEntries, readSnapshotState, SNAPSHOT_NAME, snapshotEntries, snapshotName, stateEntries, type SnapshotData } from './snapshot.js';
import type { SyncTransport, TransportCall } from './transport.js';

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
  /** Each storage request is aborted (SYNC_FAILED) after this long (ms) without progress (an answer, or a chunk of its body). Default 30,000. */
  requestTimeoutMs?: number;
  /** `syncNow` settles (SYNC_FAILED, its requests aborted) after this long (ms) at most. Default 1,800,000 (30 minutes). */
  roundTimeoutMs?: number;
  /** Largest object downloaded (bytes; checked as it streams): a larger one is set aside unread. Default 256 MiB. */
  maxObjectBytes?: number;
  /** A received entry whose clock is later than now plus this (ms) is not applied (SYNC_CLOCK, a notice). Default 1 day. */
  maxClockDriftMs?: number;
}

/** An object, device stream or snapshot set aside: the others still apply. */
export interface SyncProblem {
  /** The device whose object it is (the writer, for a snapshot). */
  device: string;
  /** The object's name in the bucket. */
  object: string;
  /** SYNC_TAMPERED: a complete body failed its check twice; SYNC_FAILED: it could not be read whole (retried next round). */
  code: ErrorCode;
  message: string;
  /** When it was first seen failing (epoch ms). */
  since: number;
}

/** A device whose next object is missing while a later one is listed, or another device's objects say exists. */
export interface SyncWait {
  device: string;
  /** The object waited for. */
  object: string;
  since: number;
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
  /** What the last round set aside (each other device's changes still apply). */
  problems: SyncProblem[];
  /** Devices this one waits on (a withheld or missing object). */
  waiting: SyncWait[];
  /** One-off reports (entries refused for their clock, a new device id, a rebuilt state), the last 20. */
  notices: SyncNotice[];
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
/** Per device, the last object a writer had applied (its own: uploaded) and that object's digest (digestOf). */
type Seen = Record<string, [seq: number, digest: string]>;
/** Digests kept per device, to compare with what other devices say they read. */
const DIGESTS_KEPT = 64;

/** An object's entries as a short digest (SHA-256, 96 bits): the same entries, the same digest, on every device. */
async function digestOf(entries: Entry[]): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(entries))));
  return [...hash.subarray(0, 12)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Gets of one object before it is set aside (a cut body or a flaky read is not tampering). */
const ATTEMPTS = 2;

export function objectName(prefix: string, device: string, seq: number): string {
  return `${prefix}log/${device}/${String(seq).padStart(12, '0')}`;
}

type CheckedOptions = {
  transport: SyncTransport;
  secret: SyncSecret;
  prefix: string;
  intervalMs: number;
  snapshotEvery: number;
  retainMs: number;
  requestTimeoutMs: number;
  roundTimeoutMs: number;
  maxObjectBytes: number;
  maxClockDriftMs: number;
};

function checkSyncOptions(options: SyncOptions): CheckedOptions {
  if (typeof options !== 'object' || options === null) throw invalidInput('sync options must be an object { transport, passphrase | key }');
  const { transport, passphrase, key, iterations, prefix = 'engram/', intervalMs = 60_000, snapshotEvery = 200, retainMs = 7 * DAY_MS } = options;
  const { requestTimeoutMs = 30_000, roundTimeoutMs = 1_800_000, maxObjectBytes = 256 * 1024 * 1024, maxClockDriftMs = DAY_MS } = options;
  for (const [name, value] of Object.entries({ requestTimeoutMs, roundTimeoutMs, maxObjectBytes, maxClockDriftMs })) {
    if (!Number.isSafeInteger(value) || value < 1) throw invalidInput(`sync ${name} must be an integer ≥ 1`);
  }
  if (iterations !== undefined && (!Number.isSafeInteger(iterations) || iterations < MIN_SYNC_ITERATIONS)) {
    throw invalidInput(`sync iterations must be an integer ≥ ${MIN_SYNC_ITERATIONS} (weaker key derivation is refused)`);
  }
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
  return { transport: resolved as SyncTransport, secret, prefix, intervalMs, snapshotEvery, retainMs, requestTimeoutMs, roundTimeoutMs, maxObjectBytes, maxClockDriftMs };
}

export class Sync {
  readonly log: SyncLog;
  /** The transport with every request timed out and aborted by stop() (`bounded`). */
  private readonly transport: SyncTransport;
  private readonly options: CheckedOptions;
  /** Aborted by stop(): every request in flight, and every later one, ends at once. */
  private readonly closing = new AbortController();
  /** Aborted when a round passes roundTimeoutMs. */
  private round: AbortController | null = null;
  /** Set aside in the last round (by object name), and in this one while it runs. */
  private problems = new Map<string, SyncProblem>();
  private roundProblems = new Map<string, SyncProblem>();
  /** Devices set aside in this round: nothing more is read from them until the next. */
  private setAside = new Set<string>();
  private waits = new Map<string, SyncWait>();
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
    this.options = checked;
    this.transport = this.bounded(checked.transport);
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
    // Loud until a round succeeds: a damaged state is rebuilt, never taken for a fresh start in silence.
    if (this.log.damaged) this.error = { code: ErrorCode.SYNC_FAILED, message: this.log.state!.notices!.at(-1)!.message };
    if (this.intervalMs > 0) {
      this.timer = setInterval(() => void this.syncNow().catch(() => undefined), this.intervalMs);
      // Node: background sync must not keep the process alive.
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** Stops background rounds and aborts every request in flight: a round running ends at its next request. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.closing.abort();
    await this.running?.catch(() => undefined);
  }

  status(): SyncStatus {
    const state = this.log.state!;
    return {
      device: state.device,
      lastSyncAt: this.lastSyncAt,
      pending: state.outSeq - state.sent,
      error: this.error && { ...this.error },
      problems: [...this.problems.values()].map((p) => ({ ...p })),
      waiting: [...this.waits.values()].map((w) => ({ ...w })),
      notices: (state.notices ?? []).map((n) => ({ ...n })),
    };
  }

  /**
   * `transport` with a timeout on every request and stop()'s abort: the signal reaches the transport (s3.ts aborts
   * its fetch), and the call is raced against it too, so a transport that ignores it cannot hang a round.
   */
  private bounded(transport: SyncTransport): SyncTransport {
    const call = <T>(what: string, run: (call: TransportCall) => Promise<T>): Promise<T> => {
      const idle = new AbortController();
      const signal = AbortSignal.any([this.closing.signal, idle.signal, ...(this.round ? [this.round.signal] : [])]);
      if (signal.aborted) return Promise.reject(aborted(what, signal));
      // Counted from the start, and again from each chunk of a body (progress).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => idle.abort(new DOMException('no progress', 'TimeoutError')), this.options.requestTimeoutMs);
        (timer as { unref?: () => void }).unref?.();
      };
      arm();
      return new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(aborted(what, signal));
        signal.addEventListener('abort', onAbort, { once: true });
        run({ signal, progress: arm })
          .then(resolve, (error: unknown) => reject(signal.aborted ? aborted(what, signal) : error))
          .finally(() => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
          });
      });
    };
    const remove = transport.delete?.bind(transport);
    return {
      list: (prefix) => call(`list ${prefix}`, (c) => transport.list(prefix, c)),
      get: (key, options) => call(`get ${key}`, (c) => transport.get(key, { ...c, maxBytes: options?.maxBytes ?? this.options.maxObjectBytes })),
      put: (key, bytes, options) => call(`put ${key}`, (c) => transport.put(key, bytes, { ...c, ...(options?.ifAbsent ? { ifAbsent: true } : {}) })),
      ...(remove ? { delete: (key: string) => call(`delete ${key}`, (c) => remove(key, c)) } : {}),
    };
  }

  /** Sets `device`'s stream (or snapshot) aside for this round at `object`, reported in status().problems. */
  private setAsideFor(device: string, object: string, error: unknown, stream = true): void {
    const coded = toEngramError(error, ErrorCode.SYNC_FAILED, 'sync failed');
    const since = this.problems.get(object)?.since ?? this.clock();
    this.roundProblems.set(object, { device, object, code: coded.code, message: coded.message, since });
    if (stream) this.setAside.add(device);
  }

  /**
   * An object read and checked, retried once (a cut body, a flaky storage, a stale cache): null when it is not
   * there. A failure twice is thrown: SYNC_TAMPERED for a complete body that fails its check, else SYNC_FAILED.
   */
  private async readObject<T>(name: string, check: (bytes: Uint8Array) => Promise<T>): Promise<T | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        const bytes = await this.transport.get(name);
        return bytes === null ? null : await check(bytes);
      } catch (error) {
        if (attempt >= ATTEMPTS || this.closing.signal.aborted || this.round?.signal.aborted) throw error;
      }
    }
  }

  /** Entries whose clock is within the allowed drift; the rest are left out, with a notice naming the object. */
  private withinDrift(entries: Entry[], device: string, object: string): Entry[] {
    const limit = this.clock() + this.options.maxClockDriftMs;
    const kept = entries.filter((e) => parseHlc(e.h)!.wall <= limit);
    if (kept.length < entries.length) {
      this.log.notice({
        code: ErrorCode.SYNC_CLOCK,
        device,
        object,
        message: `${entries.length - kept.length} of ${entries.length} entries in ${object} were not applied: their clock is more than ${this.options.maxClockDriftMs} ms ahead of this device's (is ${device}'s clock wrong?)`,
      });
    }
    return kept;
  }

  /** One round: upload what is queued, then apply what other devices uploaded. Concurrent calls share a round. */
  syncNow(): Promise<SyncStatus> {
    this.running ??= this.guard(async () => {
      await this.readKey();
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

  /**
   * Reads the key record (every round, one small GET: a rotation must stop a device holding the old key before it
   * uploads) and remembers the one accepted, so an older one put back, or none, is refused (envelope.ts).
   */
  private async readKey(): Promise<void> {
    const state = this.log.state!;
    this.key = await syncKey(this.transport, this.prefix, this.secret, this.key, state.keyRecord);
    const accepted = state.keyRecord;
    if (accepted?.epoch !== this.key.epoch || accepted.generation !== this.key.generation) {
      state.keyRecord = { epoch: this.key.epoch, generation: this.key.generation };
      await this.writeState();
    }
  }

  /** Runs one round within roundTimeoutMs (its requests are aborted then); its problems replace the last round's. */
  private async guard(round: () => Promise<void>): Promise<SyncStatus> {
    this.round = new AbortController();
    this.roundProblems = new Map();
    this.setAside = new Set();
    const timer = setTimeout(() => this.round?.abort(), this.options.roundTimeoutMs);
    (timer as { unref?: () => void }).unref?.();
    let ok = false;
    try {
      await round();
      ok = true;
      this.lastSyncAt = this.clock();
      this.error = null;
    } catch (error) {
      const coded = toEngramError(error, ErrorCode.SYNC_FAILED, 'sync failed');
      this.error = { code: coded.code, message: coded.message };
      throw coded;
    } finally {
      clearTimeout(timer);
      this.round = null;
      // A round cut short saw only part of the bucket: what it did not reach stays reported.
      this.problems = ok ? this.roundProblems : new Map([...this.problems, ...this.roundProblems]);
      this.running = null;
    }
    return this.status();
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
    Object.assign(state, { epoch: this.key!.epoch, cursors: {}, snapshots: {}, ownSnapshots: [], objSeq: 0, plan: null, expect: {}, digests: {}, claims: {} });
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
    // Its own clocks (a rebuilt state starts its clock afresh): later local changes must come after them.
    for (const entry of entries) this.log.receive(parseHlc(entry.h)!);
    state.due = state.outSeq;
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
    // Checked first: a weak passphrase or short key fails before anything is done.
    checkNewSecret(next);
    await this.syncNow();
    while (this.running) await this.running.catch(() => undefined);
    this.running = this.guard(async () => {
      const state = this.log.state!;
      const old = this.key!;
      const made = await newKeyRecord(next, old.generation + 1);
      const current = await syncKey(this.transport, this.prefix, this.secret, old, state.keyRecord);
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
      Object.assign(state, { epoch: made.epoch, cursors: {}, snapshots: {}, ownSnapshots: [head], objSeq: 0, plan: null, expect: {}, digests: {}, claims: {} });
      state.keyRecord = { epoch: made.epoch, generation: made.generation };
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
        // Learning alone (access bookkeeping, associations) waits for the next change: a search uploads nothing.
        if (state.sent >= Math.min(state.outSeq, state.due!)) return;
        let to = state.sent;
        for (let entries = 0; to < state.outSeq && to - state.sent < WRITES_PER_OBJECT && entries < ENTRIES_PER_OBJECT; ) {
          to++;
          entries += (await this.queuedPart(to)).length;
        }
        state.plan = { seq: state.objSeq + 1, from: state.sent + 1, to };
        await this.writeState();
      }
      const plan = state.plan;
      const entries: Entry[] = [];
      for (let n = plan.from; n <= plan.to; n++) entries.push(...(await this.queuedPart(n)));
      const name = objectName(this.base, state.device, plan.seq);
      if (!(await this.claim(name, plan.seq, entries))) continue;
      const done: Record<string, null> = {};
      for (let n = plan.from; n <= plan.to; n++) done[META.out + n] = null;
      state.sent = plan.to;
      state.objSeq = plan.seq;
      state.plan = null;
      await this.writeState(done);
    }
  }

  /**
   * The entries of queued part `n`. A part gone or damaged is said (a notice) and this device sends again
   * everything it holds, with the stored clocks, next round (requeue), so what the part held is not lost.
   */
  private async queuedPart(n: number): Promise<Entry[]> {
    const part = readJson<unknown>(await this.store.readMeta(META.out + n));
    if (Array.isArray(part) && part.every((e) => typeof e === 'object' && e !== null && typeof (e as Entry).h === 'string' && parseHlc((e as Entry).h) !== null)) return part as Entry[];
    const state = this.log.state!;
    if (state.resendFrom === undefined) {
      this.log.notice({ code: ErrorCode.SYNC_FAILED, message: `queued change ${n} in the local sync state was damaged or gone: everything held here is sent again` });
      state.resendFrom = { epoch: state.epoch ?? '' };
    }
    return [];
  }

  /**
   * Uploads `entries` as this device's object `seq`, unless the name is taken: by this device's own upload of the
   * same entries (an upload whose answer was lost), which is then done; or by another copy of this database (a
   * restored backup, a copied profile: the same device id), which this device must not overwrite. Then it takes a
   * new device id and says so, and false: the plan is made again under the new id. Junk there (nothing sealed
   * under this name) is nobody's write: it is written over, so a junk object cannot stall a device's stream. The check reads the name first
   * (any storage), and the write is conditional where the storage supports it (S3, R2: `If-None-Match: *`), which
   * closes the window between the two.
   */
  private async claim(name: string, seq: number, entries: Entry[]): Promise<boolean> {
    const state = this.log.state!;
    const aes = this.key!.aes;
    let there: { entries?: unknown } | null;
    let junk = false;
    try {
      there = await this.readObject(name, async (bytes) => (await open(aes, name, state.device, seq, bytes)) as { entries?: unknown });
    } catch (error) {
      // Not sealed under this name (junk, put there by someone without the key): no write of anyone's, so it is
      // written over. Anything else (a body that could not be read whole) fails the round: it may be a real write.
      if (!(error instanceof EngramError && error.code === ErrorCode.SYNC_TAMPERED)) throw error;
      there = null;
      junk = true;
    }
    if (there !== null) {
      if (JSON.stringify(there.entries) === JSON.stringify(entries)) return true;
      await this.takeNewId(name);
      return false;
    }
    // What this device applied of each device (itself: its last upload), each with that object's digest.
    const seen: Seen = {};
    for (const [device, last] of Object.entries({ ...state.cursors, [state.device]: state.objSeq })) {
      const digest = state.digests?.[device]?.find(([n]) => n === last)?.[1];
      if (last > 0 && digest !== undefined) seen[device] = [last, digest];
    }
    try {
      await this.transport.put(name, await seal(aes, name, state.device, seq, { v: 2, entries, seen }), junk ? {} : { ifAbsent: true });
    } catch (error) {
      if (!(error instanceof EngramError && error.details?.taken === true)) throw error;
      await this.takeNewId(name);
      return false;
    }
    this.remember(state.device, seq, await digestOf(entries));
    return true;
  }

  /** Keeps `device`'s object `seq`'s digest (the last DIGESTS_KEPT per device), and checks it against what another device said it read there. */
  private remember(device: string, seq: number, digest: string): void {
    const state = this.log.state!;
    const kept = ((state.digests ??= {})[device] ??= []);
    kept.push([seq, digest]);
    if (kept.length > DIGESTS_KEPT) kept.splice(0, kept.length - DIGESTS_KEPT);
    const claim = state.claims?.[device];
    if (claim?.seq === seq) {
      if (claim.digest !== digest) this.forked(device, seq, claim.from);
      delete state.claims![device];
    }
  }

  private forked(device: string, seq: number, from: string): void {
    const object = objectName(this.base, device, seq);
    // Said once per object and reader: each later object of that reader repeats its claim.
    if (this.log.state!.notices?.some((n) => n.object === object && n.message.includes(`device ${from} `))) return;
    this.log.notice({
      code: ErrorCode.SYNC_TAMPERED,
      device,
      object,
      message: `forked history: ${object} as this device read it differs from what device ${from} read there (the storage showed them different objects under one name, or two copies of one database wrote it)`,
    });
  }

  /**
   * After another copy of this database took `name`: this copy becomes a new device. It holds every object it
   * uploaded under the old id, so it follows the old id from there like any other device's (receiving the other
   * copy's later writes); what it had not uploaded goes out under the new id.
   */
  private async takeNewId(name: string): Promise<void> {
    const state = this.log.state!;
    const old = state.device;
    state.cursors[old] = state.objSeq;
    Object.assign(state, { device: newDeviceId(), objSeq: 0, plan: null, ownSnapshots: [] });
    this.log.notice({ code: ErrorCode.SYNC_FAILED, device: old, object: name, message: `another copy of this database writes as device ${old} (it wrote ${name}): this copy is device ${state.device} from now on, nothing was overwritten` });
    await this.writeState();
  }

  /**
   * The new objects of every other device, in sequence order up to the first gap, opened and checked. A device
   * whose next object cannot be read or fails its check is set aside for this round (the objects before it still
   * apply); a gap, or an object another device's objects say exists but the listing lacks, is waited for.
   */
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
    const waits = new Map<string, SyncWait>();
    const devices = new Set([...seqs.keys(), ...Object.keys(state.expect ?? {})]);
    for (const device of devices) {
      if (device === state.device || this.setAside.has(device)) continue;
      const list = (seqs.get(device) ?? []).sort((a, b) => a - b);
      let next = (state.cursors[device] ?? 0) + 1;
      // A gap waits: an object missing in the middle is never skipped.
      for (const seq of list) {
        if (seq < next) continue;
        if (seq !== next || wanted.length === OBJECTS_PER_BATCH) break;
        wanted.push({ device, seq });
        next++;
      }
      const after = list.some((seq) => seq > next) || (state.expect?.[device] ?? 0) >= next;
      if (after && !list.includes(next)) {
        const object = objectName(this.base, device, next);
        waits.set(device, { device, object, since: this.waits.get(device)?.object === object ? this.waits.get(device)!.since : this.clock() });
      }
    }
    this.waits = waits;
    const got: ({ device: string; seq: number; name: string; entries: Entry[]; seen: Seen } | null)[] = [];
    const failed = new Map<string, { seq: number; name: string; error: unknown }>();
    for (let start = 0; start < wanted.length; start += PARALLEL_GETS) {
      const group = wanted.slice(start, start + PARALLEL_GETS).map(async ({ device, seq }) => {
        const name = objectName(this.base, device, seq);
        try {
          const payload = await this.readObject(name, async (bytes) => checkObject(await open(this.key!.aes, name, device, seq, bytes), name));
          if (payload === null) throw new EngramError(ErrorCode.SYNC_FAILED, `sync object ${name} was listed but could not be read`);
          return { device, seq, name, ...payload };
        } catch (error) {
          if (this.closing.signal.aborted || this.round?.signal.aborted) throw error;
          if (seq < (failed.get(device)?.seq ?? Infinity)) failed.set(device, { seq, name, error });
          return null;
        }
      });
      got.push(...(await Promise.all(group)));
    }
    // Only a device's first bad object is reported: what follows it waits anyway.
    for (const [device, { name, error }] of failed) this.setAsideFor(device, name, error);
    const opened: { device: string; seq: number; entries: Entry[] }[] = [];
    // A device set aside keeps the objects before the one that failed (they apply in order).
    for (const o of got) {
      if (o === null || o.seq > (failed.get(o.device)?.seq ?? Infinity)) continue;
      opened.push({ device: o.device, seq: o.seq, entries: this.withinDrift(o.entries, o.device, o.name) });
      this.remember(o.device, o.seq, await digestOf(o.entries));
      this.expectFrom(o.device, o.seen);
    }
    return opened;
  }

  /**
   * Notes what `device`'s object says it had read of each device: a listing lacking those objects is waited on
   * (fetchNew), and each object's digest is compared with this device's reading of it, now or once it gets there.
   */
  private expectFrom(device: string, seen: Seen): void {
    const state = this.log.state!;
    const expect = (state.expect ??= {});
    for (const [other, [last, digest]] of Object.entries(seen)) {
      if (other !== state.device) expect[other] = Math.max(expect[other] ?? 0, last);
      const mine = state.digests?.[other]?.find(([n]) => n === last)?.[1];
      if (mine !== undefined) {
        if (mine !== digest) this.forked(other, last, device);
      } else if (last > (other === state.device ? state.objSeq : (state.cursors[other] ?? 0))) {
        (state.claims ??= {})[other] = { seq: last, digest, from: device };
      }
    }
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
      try {
        const head = await this.readObject(name, async (bytes) => checkHead(await open(this.key!.aes, name, writer, seq, bytes), name, seq));
        if (head !== null) known[writer] = head;
      } catch (error) {
        if (this.closing.signal.aborted || this.round?.signal.aborted) throw error;
        // Its log objects still apply: only this snapshot is set aside (the last good head stays known).
        this.setAsideFor(writer, name, error, false);
      }
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
    const candidates: [string, SnapshotHead][] = [];
    for (const [writer, head] of Object.entries(state.snapshots ?? {})) {
      const useful = Object.entries(head.covers).some(([device, seq]) => {
        const cursor = state.cursors[device] ?? 0;
        return device !== state.device && seq > cursor && (fresh || !listed.has(objectName(this.base, device, cursor + 1)));
      });
      // A rotation's snapshot covers no log object but holds the whole merged state: a fresh device starts from it.
      if (useful || (fresh && coveredCount(head) === 0)) candidates.push([writer, head]);
    }
    // The one covering the most that reads and checks: a bad one is set aside, the next one tried.
    for (const [writer, head] of candidates.sort((a, b) => coveredCount(b[1]) - coveredCount(a[1]))) {
      const name = snapshotName(this.base, writer, head.seq, 'data');
      let read: ReturnType<typeof snapshotEntries> | null;
      try {
        read = await this.readObject(name, async (bytes) => snapshotEntries(await open(this.key!.aes, name, writer, head.seq, bytes), name, head));
        if (read === null) throw new EngramError(ErrorCode.SYNC_FAILED, `sync snapshot ${name} was listed but could not be read`);
      } catch (error) {
        if (this.closing.signal.aborted || this.round?.signal.aborted) throw error;
        this.setAsideFor(writer, name, error, false);
        continue;
      }
      const entries = this.withinDrift(read.entries, writer, name);
      await this.applyEntries([...entries], read.creatable, head.covers);
      return entries;
    }
    return null;
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

/** A request cut by stop(), the round's bound or its own timeout: SYNC_FAILED (nothing was lost; it is retried next round). */
function aborted(what: string, signal: AbortSignal): EngramError {
  const reason: unknown = signal.reason;
  const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
  return new EngramError(ErrorCode.SYNC_FAILED, `sync storage request ${what} ${timedOut ? 'timed out' : 'was aborted (sync stopped, or the round ran past roundTimeoutMs)'}`, { details: { aborted: true } });
}

/** How many log objects a snapshot covers, over all devices. */
function coveredCount(head: SnapshotHead): number {
  return Object.values(head.covers).reduce((sum, seq) => sum + seq, 0);
}

/**
 * The entries of an opened object, and what its writer had seen of the others (version 2; none in version 1):
 * anything malformed is SYNC_TAMPERED. Their clocks are mostly `device`'s own, but an object sent again on
 * entering a key epoch (requeue) carries what that device holds, with the original clocks.
 */
function checkObject(payload: unknown, name: string): { entries: Entry[]; seen: Seen } {
  const object = payload as { v?: unknown; entries?: unknown; seen?: unknown } | null;
  const entries = object?.entries;
  const seen = object?.v === 2 ? object.seen : {};
  const valid =
    (object?.v === 1 || object?.v === 2) &&
    typeof seen === 'object' && seen !== null &&
    Object.entries(seen).every(([d, n]) => /^[0-9a-z]{1,64}$/.test(d) && Array.isArray(n) && n.length === 2 && Number.isSafeInteger(n[0]) && n[0] > 0 && typeof n[1] === 'string') &&
    Array.isArray(entries) &&
    entries.every((e: Partial<Entry> | null) => {
      if (typeof e !== 'object' || e === null || typeof e.h !== 'string' || parseHlc(e.h) === null) return false;
      if (e.k === 'put') return typeof e.id === 'string' && typeof e.f === 'object' && e.f !== null;
      if (e.k === 'del') return typeof e.id === 'string';
      if (e.k === 'assoc') return typeof e.a === 'string' && typeof e.b === 'string' && e.a < e.b && typeof e.w === 'number' && e.w > 0 && e.w <= 1 && Number.isFinite(e.t);
      return e.k === 'link' && typeof e.from === 'string' && typeof e.to === 'string' && typeof e.kind === 'string' && typeof e.on === 'boolean';
    });
  if (!valid) throw new EngramError(ErrorCode.SYNC_TAMPERED, `sync object ${name} was refused: its entries are malformed; that device's later objects wait`, { details: { name } });
  return { entries: entries as Entry[], seen: seen as Seen };
}
