/** Stage timing, candidate counts and language-model tokens for the search trace. */
import type { TokenUsage } from './llm-stage.js';
import type { Trace, TraceQuery, TraceStage, TraceStageName, Understanding } from '../types.js';

export const now: () => number =
  typeof performance !== 'undefined' && typeof performance.now === 'function' ? () => performance.now() : () => Date.now();

/** What a stage reports besides its output count: a note, and the tokens of its language-model call if it made one. */
interface StageReport {
  note?: string | undefined;
  usage?: TokenUsage | undefined;
}

export class Tracer {
  readonly stages: TraceStage[] = [];
  private readonly started = now();
  private llmCalls = 0;

  /** Times `run`, records one stage with `in` and the count `out` derives from the result. */
  stage<T>(name: TraceStageName, inCount: number, run: () => T, outCount: (result: T) => number, note?: (result: T) => string | undefined): T {
    const start = now();
    const result = run();
    this.record(name, inCount, outCount(result), now() - start, { note: note?.(result) });
    return result;
  }

  /** As `stage`, for async work; `report` may add the tokens of a language-model call. */
  async stageAsync<T>(
    name: TraceStageName,
    inCount: number,
    run: () => Promise<T>,
    outCount: (result: T) => number,
    report?: (result: T) => string | StageReport | undefined,
  ): Promise<T> {
    const start = now();
    const result = await run();
    const reported = report?.(result);
    this.record(name, inCount, outCount(result), now() - start, typeof reported === 'string' ? { note: reported } : (reported ?? {}));
    return result;
  }

  finish(mode: Trace['mode'], embedder: string | null, understanding: Understanding, queries: TraceQuery[], hyde: string | undefined): Trace {
    let promptTokens = 0;
    let completionTokens = 0;
    for (const stage of this.stages) {
      promptTokens += stage.promptTokens;
      completionTokens += stage.completionTokens;
    }
    const trace: Trace = {
      mode,
      stages: this.stages,
      totalMs: now() - this.started,
      embedder,
      understanding,
      queries,
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
      llmCalls: this.llmCalls,
    };
    if (hyde !== undefined) trace.hyde = hyde;
    return trace;
  }

  private record(name: TraceStageName, inCount: number, out: number, ms: number, { note, usage }: StageReport): void {
    const entry: TraceStage = { name, in: inCount, out, ms, promptTokens: usage?.promptTokens ?? 0, completionTokens: usage?.completionTokens ?? 0 };
    if (usage) this.llmCalls++;
    if (note) entry.note = note;
    this.stages.push(entry);
  }
}
