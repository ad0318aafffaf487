/**
 * Snapshots (docs/sync.md): one device's merged state — every memory's synced fields with their clocks,
 * tombstones, links with their last change, associations — sealed like log objects, so a new device, or one whose
 * next log object was compacted away, starts from it instead of replaying the log. A snapshot is two objects:
 * `snap/<device>/<seq>/head` (what it covers, one padded KiB) and `snap/<device>/<seq>/data` (the state), each
 * bound by its name like a log object, so neither can be swapped, replayed or changed.
 */
import { EngramError, ErrorCode } from '../errors.js';
import { linkKey } from '../store/graph-rows.js';
import type { Store } from '../store/store.js';
import type { LinkKind } from '../types.js';
import { MAX_FIELDS, SYNCED_FIELDS, valueHash, type FieldClocks } from './fields.js';
import { parseHlc } from './hlc.js';
import { META, readJson, type Entry, type GravePart, type SnapshotHead } from './log.js';

const MAX_SET: ReadonlySet<string> = new Set(MAX_FIELDS);

export const SNAPSHOT_NAME = /^snap\/([0-9a-z]+)\/(\d{12})\/(head|data)$/;

export function snapshotName(prefix: string, device: string, seq: number, part: 'head' | 'data'): string {
  return `${prefix}snap/${device}/${String(seq).padStart(12, '0')}/${part}`;
}

/** The state part of a snapshot's data object. */
export interface SnapshotState {
  /** Per memory: its fields grouped by the clock that set them. */
  records: [id: string, groups: [hlc: string, fields: Record<string, unknown>][]][];
  tombstones: [id: string, hlc: string][];
  links: [from: string, to: string, kind: LinkKind, hlc: string, on: boolean, confidence: number | null][];
  associations: [a: string, b: string, weight: number, lastAt: number][];
}

export interface SnapshotData extends SnapshotState {
  v: 1;
  covers: Record<string, number>;
  /** The writer's clock when it read the state: received associations advance the reader's clock to it. */
  h: string;
}

/**
 * The store's merged state, or null when a write changed a memory while it was read (a value no longer matching
 * its clock would make devices disagree): the next round tries again. `partial`: such a field is left out instead
 * (the write that changed it is queued with its own clock).
 */
export async function readSnapshotState(store: Store, graves: number, partial = false): Promise<SnapshotState | null> {
  const offKeys = new Map<string, string | null>();
  const tombstones = new Map<string, string>();
  for (let n = 1; n <= graves; n++) {
    const part = readJson<GravePart>(await store.readMeta(META.grave + n));
    for (const [id, h] of Object.entries(part?.t ?? {})) tombstones.set(id, h);
    for (const key of part?.l ?? []) offKeys.set(key, null);
  }
  // Clocks of unlinked keys are read before the links: a key relinked meanwhile is then listed as linked.
  for (const key of offKeys.keys()) offKeys.set(key, (await store.readMeta(META.link + key)) as string | null);
  const links: SnapshotState['links'] = [];
  for (const link of (await store.loadLinks?.()) ?? []) {
    const key = linkKey(link);
    const h = await store.readMeta(META.link + key);
    offKeys.delete(key);
    if (typeof h === 'string') links.push([link.from, link.to, link.kind, h, true, link.confidence]);
  }
  for (const [key, h] of offKeys) {
    const [from, to, kind] = JSON.parse(key) as [string, string, LinkKind];
    if (typeof h === 'string') links.push([from, to, kind, h, false, null]);
  }
  const records: SnapshotState['records'] = [];
  for (const record of await store.loadRecords()) {
    if (tombstones.has(record.id)) continue;
    const clocks = readJson<FieldClocks>(await store.readMeta(META.fields + record.id));
    if (clocks === null) {
      if (partial) continue;
      return null;
    }
    const groups = new Map<string, Record<string, unknown>>();
    for (const field of SYNCED_FIELDS) {
      const clock = clocks[field];
      if (clock === undefined || clock[1] !== valueHash(record[field])) {
        if (partial) continue;
        return null;
      }
      const group = groups.get(clock[0]) ?? {};
      group[field] = record[field] ?? null;
      groups.set(clock[0], group);
    }
    records.push([record.id, [...groups]]);
  }
  const associations = ((await store.loadAssociations?.()) ?? []).map((e): SnapshotState['associations'][number] => [e.a, e.b, e.weight, e.lastAt]);
  return { records, tombstones: [...tombstones], links, associations };
}

function tampered(name: string, why: string): EngramError {
  return new EngramError(ErrorCode.SYNC_TAMPERED, `sync snapshot ${name} was refused: ${why}; nothing from it was applied (it is set aside)`, { details: { name } });
}

function isCovers(value: unknown): value is Record<string, number> {
  return typeof value === 'object' && value !== null && Object.values(value).every((seq) => Number.isSafeInteger(seq) && (seq as number) >= 0);
}

/** An opened head object, checked. */
export function checkHead(payload: unknown, name: string, seq: number): SnapshotHead {
  const head = payload as Partial<SnapshotHead & { v: number }> | null;
  const left = head?.left;
  if (head?.v !== 1 || head.seq !== seq || !Number.isFinite(head.at) || !isCovers(head.covers)) throw tampered(name, 'its head is malformed');
  if (left !== undefined && (typeof left !== 'object' || left === null || typeof left.epoch !== 'string' || !isCovers(left.covers))) throw tampered(name, 'its head is malformed');
  return { seq, at: head.at!, covers: head.covers, ...(left ? { left: { epoch: left.epoch, covers: left.covers } } : {}) };
}

const isHlc = (h: unknown): h is string => typeof h === 'string' && parseHlc(h) !== null;

/** An opened data object, checked against its head (the same covered objects), as entries to merge. */
export function snapshotEntries(payload: unknown, name: string, head: SnapshotHead): { entries: Entry[]; creatable: Set<string> } {
  const data = payload as Partial<SnapshotData> | null;
  const valid =
    data?.v === 1 && isHlc(data.h) && isCovers(data.covers) && JSON.stringify(data.covers) === JSON.stringify(head.covers) &&
    Array.isArray(data.records) && data.records.every((r) => Array.isArray(r) && typeof r[0] === 'string' && Array.isArray(r[1]) && r[1].every((g) => Array.isArray(g) && isHlc(g[0]) && typeof g[1] === 'object' && g[1] !== null)) &&
    Array.isArray(data.tombstones) && data.tombstones.every((t) => Array.isArray(t) && typeof t[0] === 'string' && isHlc(t[1])) &&
    Array.isArray(data.links) && data.links.every((l) => Array.isArray(l) && typeof l[0] === 'string' && typeof l[1] === 'string' && typeof l[2] === 'string' && isHlc(l[3]) && typeof l[4] === 'boolean') &&
    Array.isArray(data.associations) && data.associations.every((e) => Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'string' && e[0] < e[1] && typeof e[2] === 'number' && e[2] > 0 && e[2] <= 1 && Number.isFinite(e[3]));
  if (!valid) throw tampered(name, 'its content is malformed or does not match its head');
  return { entries: stateEntries(data as SnapshotData, data.h!), creatable: new Set(data.records!.map((r) => r[0])) };
}

/** A state as the entries it stands for; associations carry `h` (they merge by weight, not clock). */
export function stateEntries(state: SnapshotState, h: string): Entry[] {
  const entries: Entry[] = [];
  for (const [id, groups] of state.records) for (const [at, f] of groups) entries.push({ k: 'put', id, h: at, f });
  for (const [id, at] of state.tombstones) entries.push({ k: 'del', id, h: at });
  for (const [from, to, kind, at, on, c] of state.links) entries.push({ k: 'link', from, to, kind, h: at, on, ...(on && c !== null ? { c } : {}) });
  for (const [a, b, w, t] of state.associations) entries.push({ k: 'assoc', a, b, w, t, h });
  return entries;
}

/**
 * The entries of `local` that `base` lacks or holds older: fields with a later clock (a learned field also with
 * another value: it merges by maximum), removals and (un)links it does not have or has older, association edges it
 * does not hold as they are. Each keeps its original clock, so merging it never rolls a newer value back.
 */
export function missingEntries(local: Entry[], base: Entry[]): Entry[] {
  const fields = new Map<string, Record<string, [string, string]>>();
  const removed = new Set<string>();
  const links = new Map<string, string>();
  const edges = new Set<string>();
  for (const e of base) {
    if (e.k === 'put') {
      const known = fields.get(e.id) ?? {};
      for (const [field, value] of Object.entries(e.f)) if (!(known[field] && known[field][0] >= e.h)) known[field] = [e.h, valueHash(value)];
      fields.set(e.id, known);
    } else if (e.k === 'del') removed.add(e.id);
    else if (e.k === 'link') {
      const key = linkKey(e);
      if (!((links.get(key) ?? '') >= e.h)) links.set(key, e.h);
    }
    else edges.add(JSON.stringify([e.a, e.b, e.w, e.t]));
  }
  const out: Entry[] = [];
  for (const e of local) {
    if (e.k === 'put') {
      if (removed.has(e.id)) continue;
      const known = fields.get(e.id) ?? {};
      const f: Record<string, unknown> = {};
      for (const [field, value] of Object.entries(e.f)) {
        const had = known[field];
        if (had === undefined || e.h > had[0] || (MAX_SET.has(field) && had[1] !== valueHash(value))) f[field] = value;
      }
      if (Object.keys(f).length > 0) out.push({ ...e, f });
    } else if (e.k === 'del') {
      if (!removed.has(e.id)) out.push(e);
    } else if (e.k === 'link') {
      const had = links.get(linkKey(e));
      if (had === undefined || e.h > had) out.push(e);
    } else if (!edges.has(JSON.stringify([e.a, e.b, e.w, e.t]))) out.push(e);
  }
  return out;
}
