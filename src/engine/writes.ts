/**
 * The engine's writes of memories (`add`, `import`, `update`, `remove`): each validated and embedded first, then one
 * atomic store write, then the in-memory indexes. Called inside the write queue (engine.ts runs them there).
 */
import { invalidInput } from '../errors.js';
import type { LexicalIndex } from '../lexical/lexical-index.js';
import type { ThreadIndex } from '../search/thread-index.js';
import { changesIndexed } from '../store/change-counter.js';
import type { MemoryInput, MemoryPatch, MemoryRecord, Progress } from '../types.js';
import { throwIfAborted, type CallAbort } from '../util/abort.js';
import { checkId } from '../util/ids.js';
import type { AddOptions } from './api.js';
import type { AssociationGraph } from './associations.js';
import { cloneRecord } from './copy.js';
import type { LinkGraph } from './links.js';
import type { ResolvedEngineOptions } from './options.js';
import type { RecordTable } from './record-table.js';
import { applyPatch, checkCallSize, checkDistinct, recordFromImport, recordFromInput } from './validate.js';
import type { VectorState } from './vector-state.js';
import type { WriteQueue } from './write-queue.js';

export interface WriteParts {
  options: ResolvedEngineOptions;
  records: RecordTable;
  lexical: LexicalIndex;
  threads: ThreadIndex;
  vectors: VectorState;
  associations: AssociationGraph;
  links: LinkGraph;
  queue: WriteQueue;
}

/**
 * `onProgress` with its last step (done = total) held back until the store write is done, so a progress bar that
 * reads "10,000 / 10,000" means the call is about to resolve, not that embedding ended.
 */
function untilWritten(onProgress: ((progress: Progress) => void) | undefined): { report: ((progress: Progress) => void) | undefined; finish(): void } {
  let last: Progress | undefined;
  return {
    report: onProgress && ((p) => (p.done >= p.total ? (last = p) : onProgress(p))),
    finish: () => {
      if (last) onProgress?.(last);
    },
  };
}

export class MemoryWrites {
  private readonly options: ResolvedEngineOptions;
  private readonly records: RecordTable;
  private readonly lexical: LexicalIndex;
  private readonly threads: ThreadIndex;
  private readonly vectors: VectorState;
  private readonly associations: AssociationGraph;
  private readonly links: LinkGraph;
  private readonly queue: WriteQueue;

  constructor(parts: WriteParts) {
    ({ options: this.options, records: this.records, lexical: this.lexical, threads: this.threads, vectors: this.vectors } = parts);
    ({ associations: this.associations, links: this.links, queue: this.queue } = parts);
  }

  async add(input: MemoryInput | MemoryInput[], opts: AddOptions = {}): Promise<string[]> {
    const list = Array.isArray(input) ? input : [input];
    checkCallSize(list.length, this.options.limits, 'add');
    const now = this.options.clock();
    const created = list.map((item, i) => recordFromInput(item, now, this.options.limits, Array.isArray(input) ? `memory[${i}]` : 'memory'));
    checkDistinct(created, (id) => this.records.has(id));
    if (created.length === 0) return [];
    const abort: CallAbort = { signal: opts.signal, method: 'add' };
    throwIfAborted(abort.signal, abort.method);
    const progress = untilWritten(opts.onProgress);
    const vectors = await this.vectors.embedAll(created, progress.report, undefined, abort);
    const { batch, stored } = await this.vectors.supersede(created, vectors);
    // The last point an abort is honoured: from the commit on, the call completes.
    throwIfAborted(abort.signal, abort.method);
    await this.queue.commit({ put: [...batch, ...stored], vectors: this.vectors.pack(batch, vectors) }, () => {
      this.apply(batch, vectors);
      for (const record of stored) this.records.set(record);
    });
    progress.finish();
    return batch.map((r) => r.id);
  }

  async import(input: (MemoryRecord | MemoryInput)[], opts: AddOptions = {}): Promise<string[]> {
    if (!Array.isArray(input)) throw invalidInput('import takes an array of records');
    checkCallSize(input.length, this.options.limits, 'import');
    const now = this.options.clock();
    const batch = input.map((item, i) => recordFromImport(item, now, this.options.limits, `records[${i}]`));
    checkDistinct(batch);
    const ids = new Set(batch.map((r) => r.id));
    for (const record of batch) {
      // A supersededBy pointing nowhere would hide the memory for good: drop it.
      if (record.supersededBy !== undefined && !ids.has(record.supersededBy) && !this.records.has(record.supersededBy)) {
        delete record.supersededBy;
      }
    }
    if (batch.length === 0) return [];
    const abort: CallAbort = { signal: opts.signal, method: 'import' };
    throwIfAborted(abort.signal, abort.method);
    const pending = this.records.preload(batch.map((r) => r.id));
    if (pending) await pending;
    // Memories already stored with the same text keep their vector; the others are embedded.
    const progress = untilWritten(opts.onProgress);
    const vectors = await this.vectors.embedAll(batch, progress.report, (r) => this.vectors.reusableVector(r), abort);
    // One commit for the whole import: an abort up to here leaves nothing of it stored.
    throwIfAborted(abort.signal, abort.method);
    await this.queue.commit({ put: batch, vectors: this.vectors.pack(batch, vectors) }, () => this.apply(batch, vectors));
    progress.finish();
    return batch.map((r) => r.id);
  }

  async update(id: string, patch: MemoryPatch): Promise<MemoryRecord> {
    const current = await this.records.mustGet(id);
    const next = applyPatch(current, patch, this.options.clock(), this.options.limits);
    const textChanged = next.text !== current.text;
    const vectors = textChanged ? await this.vectors.embedAll([next]) : null;
    await this.queue.commit({ put: [next], vectors: this.vectors.pack([next], vectors) }, () => {
      if (changesIndexed(current, next)) this.apply([next], vectors);
      else this.records.set(next);
      this.threads.upsertAll([next]);
    });
    return cloneRecord(next);
  }

  async remove(ids: string | string[]): Promise<number> {
    const list = Array.isArray(ids) ? ids : [ids];
    list.forEach((id, i) => checkId(id, `remove: ids[${i}]`));
    const gone = new Set(list.filter((id) => this.records.has(id)));
    if (gone.size === 0) return 0;
    // Memories superseded by a removed one become live again rather than vanish.
    const restored = (await this.records.getMany(this.records.supersededBy(gone))).map((record) => {
      const copy = cloneRecord(record);
      delete copy.supersededBy;
      return copy;
    });
    await this.queue.commit({ remove: [...gone], put: restored }, () => {
      for (const id of gone) {
        this.records.delete(id);
        this.lexical.remove(id);
        this.threads.remove(id);
        this.vectors.index?.remove(id);
        this.associations.removeMemory(id);
        this.links.removeMemory(id);
      }
      for (const record of restored) this.records.set(record);
    });
    return gone.size;
  }

  /** Puts records into the map and every index (with their vectors when given). */
  apply(batch: readonly MemoryRecord[], vectors: Float32Array[] | null): void {
    for (const record of batch) this.records.set(record);
    this.lexical.addAll(batch);
    this.threads.upsertAll(batch);
    if (vectors) this.vectors.index?.setMany(batch.map((r) => r.id), vectors);
  }

}
