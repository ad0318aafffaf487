/**
 * The stages after the answer (Tantivy's collectors are the model: work after the answer is a stage, not the
 * façade's business). `reinforce` applies the learning rules (reinforce.ts) to every hit and strengthens the pair of
 * every two direct hits; `touch`, when reinforcement is off, only counts an access. Both write through the
 * engine's AnswerWriter: in memory at once, to the store in the background, so the answer never waits for them.
 */
import { isCold } from './retention.js';
import { reinforced } from './reinforce.js';
import type { SearchOptions } from './options.js';
import type { PipelineState, RecordReader } from './state.js';
import type { Hit } from '../types.js';
import type { Tracer } from './trace.js';

/** Marks the hits that were cold before this search (retention.ts); read before `reinforce` warms them. */
export function markCold(hits: readonly Hit[], records: Pick<RecordReader, 'get'>, options: SearchOptions, now: number): void {
  const decay = options.decay !== false && options.decay.kind === 'stability' ? options.decay : undefined;
  for (const hit of hits) {
    const record = records.get(hit.id);
    if (record && isCold(record, now, decay)) hit.explain.cold = true;
  }
}

/** Runs `reinforce` or `touch` as the search options ask, traced like every other stage. */
export function afterAnswer(trace: Tracer, hits: readonly Hit[], state: PipelineState, options: SearchOptions, now: number): void {
  if (!options.touch || hits.length === 0) return;
  const { records, answers } = state;
  if (!options.reinforce) {
    const ids = hits.map((h) => h.id);
    trace.stage('touch', hits.length, () => answers.touch(ids, now), () => hits.length, () => 'access counted; written in the background');
    return;
  }
  const session = options.session ?? state.session;
  trace.stage(
    'reinforce',
    hits.length,
    () => {
      let promoted = 0;
      const updated = hits.flatMap((hit) => {
        const record = records.get(hit.id);
        if (!record) return [];
        const next = reinforced(record, hit.explain.associative !== undefined, now, session, state.learning);
        if (next.core && !record.core) promoted++;
        return [next];
      });
      // A hit removed while the search ran forms no association (its edges would outlive it in the store).
      const direct = hits.filter((hit) => hit.explain.associative === undefined && records.has(hit.id)).map((hit) => hit.id);
      answers.reinforce(updated, direct, now);
      return { updated: updated.length, direct: direct.length, promoted };
    },
    (r) => r.updated,
    ({ updated, direct, promoted }) =>
      `${direct} direct, ${updated - direct} associative; ${(direct * (direct - 1)) / 2} pairs strengthened${promoted > 0 ? `; ${promoted} promoted to core` : ''}; written in the background`,
  );
}
