/**
 * The write of memory formation (`remember`, `consolidate`): new memories added as `add` adds them, supersede marks
 * the model or the fold chose, provenance links and reinforced memories, all in one atomic commit, so a failure
 * changes nothing. Runs in the write queue, so the supersede marks are checked against the memories as they are
 * now: one removed or superseded since the plan was made, moved to another project or scope than the memory that
 * would supersede it, or pinned (unless the caller allowed it) keeps its place, and the answer says why.
 */
import type { PackedVectors, StoreWrite } from '../store/store.js';
import { reinforced, type LearningOptions } from '../search/reinforce.js';
import type { FormationSkip, Link, MemoryRecord } from '../types.js';
import { throwIfAborted } from '../util/abort.js';
import { cloneRecord } from './copy.js';
import { sameHome, type FormationWrite, type FormationWritten } from './formation.js';
import type { LinkGraph } from './links.js';
import type { RecordTable } from './record-table.js';
import type { VectorState } from './vector-state.js';
import type { WriteQueue } from './write-queue.js';

export interface FormationWriteParts {
  records: RecordTable;
  queue: WriteQueue;
  vectors: VectorState;
  links: LinkGraph;
  learning: LearningOptions;
  session: string;
  clock(): number;
  /** Puts new records into every index (the engine's applyRecords). */
  apply(batch: readonly MemoryRecord[], vectors: Float32Array[] | null): void;
}

/** Applies `change` (see FormationWrite); answers the supersede marks made (old id → new id) and refused. Call inside the queue. */
export async function writeFormation(parts: FormationWriteParts, change: FormationWrite): Promise<FormationWritten> {
  const { records, queue, vectors: vectorState, links: linkGraph } = parts;
  const now = parts.clock();
  const created = change.created;
  const vectors = created.length > 0 ? await vectorState.embedAll(created, undefined, undefined, change.abort) : null;
  const plan = created.length > 0 ? await vectorState.supersede(created, vectors) : { batch: [], stored: [] };
  const batch = plan.batch;
  const newIds = new Set(batch.map((r) => r.id));
  // Every stored memory this write changes, as it will be stored.
  const changed = new Map<string, MemoryRecord>(plan.stored.map((r) => [r.id, r]));
  const superseded = new Map<string, string>(plan.stored.map((r) => [r.id, r.supersededBy as string]));
  const stored = await records.getMany([...new Set([...change.supersede.keys(), ...change.reinforce])].filter((id) => records.has(id)));
  const current = (record: MemoryRecord) => changed.get(record.id) ?? cloneRecord(record);
  for (const record of stored) {
    if (change.reinforce.includes(record.id)) changed.set(record.id, reinforced(current(record), false, now, parts.session, parts.learning));
  }
  const refused = new Map<string, FormationSkip>();
  for (const id of change.supersede.keys()) if (!records.has(id)) refused.set(id, 'gone');
  const newById = new Map(batch.map((r) => [r.id, r]));
  for (const record of stored) {
    const by = change.supersede.get(record.id);
    if (by === undefined) continue;
    const home = newById.get(by) ?? records.summary(by);
    // Only a live memory is superseded here (one superseded since the plan keeps its mark), and only by a memory that exists.
    const why: FormationSkip | undefined =
      (record.supersededBy !== undefined && !superseded.has(record.id)) || home === undefined ? 'gone'
      : record.pinned && !change.supersedePinned ? 'pinned'
      : !sameHome(record, home) ? 'other project'
      : undefined;
    if (why) {
      refused.set(record.id, why);
      continue;
    }
    changed.set(record.id, { ...current(record), supersededBy: by });
    superseded.set(record.id, by);
  }
  const exists = (id: string) => newIds.has(id) || records.has(id);
  const links: Link[] = change.links.filter((link) => exists(link.from) && exists(link.to) && link.from !== link.to);
  // The last point the caller's abort is honoured: from the commit on, the call completes.
  throwIfAborted(change.abort?.signal, change.abort?.method ?? 'write');
  if (batch.length === 0 && changed.size === 0 && links.length === 0) return { superseded, refused };
  const write: StoreWrite = { put: [...batch, ...changed.values()] };
  const packed: PackedVectors | undefined = vectorState.pack(batch, vectors);
  if (packed) write.vectors = packed;
  if (links.length > 0) write.links = { put: links };
  await queue.commit(write, () => {
    parts.apply(batch, vectors);
    for (const record of changed.values()) records.set(record);
    for (const link of links) linkGraph.set(link);
  });
  return { superseded, refused };
}
