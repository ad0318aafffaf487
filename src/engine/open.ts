/**
 * Opening: the engine's in-memory state from the store. From the stored summaries when the store can read records by
 * id (searches are answered before, or for a table above `residentRecords` without, every record being in memory);
 * otherwise every record is loaded here.
 */
import { EngramError, ErrorCode, toEngramError } from '../errors.js';
import type { LexicalIndex } from '../lexical/lexical-index.js';
import type { ThreadIndex } from '../search/thread-index.js';
import type { MemoryRecord } from '../types.js';
import type { AssociationGraph } from './associations.js';
import { openLexical } from './lexical-persistence.js';
import type { LinkGraph } from './links.js';
import type { ResolvedEngineOptions } from './options.js';
import type { RecordTable } from './record-table.js';

interface EngineState {
  records: RecordTable;
  lexical: LexicalIndex;
  threads: ThreadIndex;
  associations: AssociationGraph;
  links: LinkGraph;
}

/** Fills `state` from the store; returns how the lexical index was made. STORE_FAILED when the store cannot be read. */
export async function loadState(state: EngineState, options: ResolvedEngineOptions): Promise<'snapshot' | 'rebuilt'> {
  const { store } = options;
  const { records } = state;
  try {
    const summaries = store.loadRecordSummaries && store.loadRecordsByIds ? await store.loadRecordSummaries() : null;
    const loader = store.loadRecordsByIds?.bind(store);
    const onDemand = summaries && loader && records.startOnDemand(summaries, loader, options.residentRecords, options.recordCacheSize);
    // No by-id reads, or a legacy database with an id stored twice (distinctRecords): every record, resident.
    if (!onDemand) records.fillResident(distinctRecords(await store.loadRecords(), options.onBackgroundError));
    state.associations.load((await store.loadAssociations?.()) ?? []);
    state.links.load((await store.loadLinks?.()) ?? []);
  } catch (error) {
    throw toEngramError(error, ErrorCode.STORE_FAILED, 'could not load memories from the store');
  }
  state.threads.load([...records.summaryValues()]);
  return openLexical(state.lexical, records, options.indexSnapshot, store);
}

/** When a record last changed: updatedAt, else createdAt. */
function lastChange(record: MemoryRecord): number {
  return record.updatedAt ?? record.createdAt;
}

/**
 * The loaded records, one per id. A store should never return an id twice, but a database written before ids had
 * to be well-formed can: SQLite stored '\ud800' and '\ud801' as two rows that both read back as '\ufffd'. The
 * later version is kept (by updatedAt, else createdAt; on a tie the one loaded last, the later write) and the
 * others are reported once through `report` (DUPLICATE_ID) rather than refusing to open. The store is left as it
 * is: the dropped rows cannot be addressed by their id.
 */
export function distinctRecords(loaded: MemoryRecord[], report: (error: EngramError) => void): MemoryRecord[] {
  const duplicated = new Set<string>();
  let dropped = 0;
  const byId = new Map<string, MemoryRecord>();
  for (const record of loaded) {
    const kept = byId.get(record.id);
    if (kept) {
      duplicated.add(record.id);
      dropped++;
      if (lastChange(record) < lastChange(kept)) continue;
      byId.delete(record.id);
    }
    byId.set(record.id, record);
  }
  if (dropped === 0) return loaded;
  const ids = [...duplicated];
  report(
    new EngramError(
      ErrorCode.DUPLICATE_ID,
      `the store returned ${dropped} duplicate record(s) for ${ids.length} id(s) (${ids.slice(0, 5).map((id) => JSON.stringify(id)).join(', ')}${ids.length > 5 ? ', …' : ''}); ` +
        'the latest version of each was kept',
      { details: { ids, dropped } },
    ),
  );
  return [...byId.values()];
}
