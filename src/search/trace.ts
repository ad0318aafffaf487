/** Stage timing and candidate counts for the search trace. */
import type { Trace, TraceStage } from '../types.js';

export const now: () => number =
  typeof performance !== 'undefined' && typeof performance.now === 'function' ? () => performance.now() : () => Date.now();

export class Tracer {
  readonly stages: TraceStage[] = [];
  private readonly started = now();

  /** Times `run`, records one stage with `in` and the count `out` derives from the result. */
  stage<T>(name: string, inCount: number, run: () => T, outCount: (result: T) => number, note?: (result: T) => string | undefined): T {
    const start = now();
    const result = run();
    this.record(name, inCount, outCount(result), now() - start, note?.(result));
    return result;
  }

  async stageAsync<T>(
    name: string,
    inCount: number,
    run: () => Promise<T>,
    outCount: (result: T) => number,
    note?: (result: T) => string | undefined,
  ): Promise<T> {
    const start = now();
    const result = await run();
    this.record(name, inCount, outCount(result), now() - start, note?.(result));
    return result;
  }

  finish(mode: Trace['mode'], embedder: string | null): Trace {
    return { mode, stages: this.stages, totalMs: now() - this.started, embedder };
  }

  private record(name: string, inCount: number, out: number, ms: number, note: string | undefined): void {
    const entry: TraceStage = { name, in: inCount, out, ms };
    if (note) entry.note = note;
    this.stages.push(entry);
  }
}
