/**
 * Memories hidden by the old supersede rule come back (issue: "which memory is true now"). Before the 'same'
 * rule (supersede.ts), add hid any memory whose cosine to a newer one reached 0.95: two notes differing in a
 * flight number or a PIN. On open, once per store, a superseded memory becomes live again unless what hides it
 * says the same thing (the rule now), or a model or an app decided it: the memory that supersedes it carries a
 * provenance link (formation's facts and consolidation's summaries derive from what they replace or read).
 * The store's meta then records the rule (on a new store's first open too), so the pass never runs again there.
 */
import { statementKey } from '../lexical/statement.js';
import type { MemoryRecord } from '../types.js';
import { cloneRecord } from './copy.js';
import type { LinkGraph } from './links.js';
import type { RecordTable } from './record-table.js';
import type { WriteQueue } from './write-queue.js';

/** The meta key and value that say a store's supersede marks follow the 'same' rule. */
export const SUPERSEDE_RULE_KEY = 'supersede_rule';
export const SUPERSEDE_RULE = 'same-statement/1';

interface MigrationParts {
  records: RecordTable;
  links: LinkGraph;
  queue: WriteQueue;
  readMeta(key: string): Promise<string | Uint8Array | null>;
}

/** Whether `hidden`'s mark is one the engine may keep on its own, or one a model or an app made. */
export function keepsMark(hidden: MemoryRecord, by: MemoryRecord, links: LinkGraph): boolean {
  const same = hidden.project === by.project && hidden.scope === by.scope && hidden.kind === by.kind && statementKey(hidden.text) !== '' && statementKey(hidden.text) === statementKey(by.text);
  return same || links.walk(by.id, 1, 'out').edges.length > 0;
}

/** Runs the pass if the store has not had it; answers the ids made live again. Call before any write (the queue is idle). */
export async function reviveOldFolds(parts: MigrationParts): Promise<string[]> {
  const { records, links, queue } = parts;
  if ((await parts.readMeta(SUPERSEDE_RULE_KEY)) === SUPERSEDE_RULE) return [];
  const hidden = [...records.summaryValues()].filter((s) => s.supersededBy !== undefined);
  // Nothing hidden: nothing to migrate, but the mark is written now, or a later open would take what this rule hides
  // (a memory folded into one whose text then changed) for the old rule's work.
  if (hidden.length === 0) {
    await queue.commit({ meta: { [SUPERSEDE_RULE_KEY]: SUPERSEDE_RULE } }, () => undefined);
    return [];
  }
  const byIds = [...new Set(hidden.map((s) => s.supersededBy as string))];
  const loaded = new Map((await records.getMany([...hidden.map((s) => s.id), ...byIds])).map((r) => [r.id, r]));
  const revived: MemoryRecord[] = [];
  for (const summary of hidden) {
    const record = loaded.get(summary.id);
    const by = loaded.get(summary.supersededBy as string);
    if (!record || !by || keepsMark(record, by, links)) continue;
    const copy = cloneRecord(record);
    delete copy.supersededBy;
    revived.push(copy);
  }
  await queue.commit({ put: revived, meta: { [SUPERSEDE_RULE_KEY]: SUPERSEDE_RULE } }, () => {
    for (const record of revived) records.set(record);
  });
  return revived.map((r) => r.id);
}
