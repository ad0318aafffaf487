/** `timeline`: the memories just before and after one memory, in its thread or by time (search/thread-index.ts). */
import { invalidInput } from '../errors.js';
import type { ThreadIndex } from '../search/thread-index.js';
import type { Timeline, TimelineOptions } from '../types.js';
import { describeValue } from '../util/describe.js';
import { cloneRecord } from './copy.js';
import type { RecordTable } from './record-table.js';

/** Most memories `timeline` returns on each side of its anchor. */
const MAX_TIMELINE_SIDE = 100;
const DEFAULT_TIMELINE_SIDE = 3;

function checkTimelineOptions(options: unknown): { before: number; after: number } {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidInput(`timeline options must be an object { before?, after? }, got ${describeValue(options)}`);
  }
  const side = (name: 'before' | 'after'): number => {
    const value: unknown = (options as TimelineOptions)[name];
    if (value === undefined) return DEFAULT_TIMELINE_SIDE;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_TIMELINE_SIDE) {
      throw invalidInput(`timeline option ${name} must be an integer from 0 to ${MAX_TIMELINE_SIDE}, got ${describeValue(value)}`);
    }
    return value;
  };
  return { before: side('before'), after: side('after') };
}

export async function timeline(id: string, options: TimelineOptions, records: RecordTable, threads: ThreadIndex): Promise<Timeline> {
  const { before, after } = checkTimelineOptions(options);
  let anchor = await records.mustGet(id);
  let around = threads.around(id, before, after)!;
  // Until every record is in memory and none changed while they were read (then each is read in this task).
  for (let pending = records.preload([...around.before, ...around.after]); pending; ) {
    await pending;
    anchor = await records.mustGet(id);
    around = threads.around(id, before, after)!;
    pending = records.preload([id, ...around.before, ...around.after]);
  }
  const copies = (ids: string[]) => ids.map((neighbour) => cloneRecord(records.get(neighbour)!));
  return { anchor: cloneRecord(anchor), before: copies(around.before), after: copies(around.after), by: around.by };
}
