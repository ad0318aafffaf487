/**
 * The opt-in idle schedule of `consolidate` (EngineOptions.consolidation): once no write has come for `idleMs`,
 * one consolidation runs in the background; each write restarts the wait. Its own write does not, so it never
 * re-arms itself, and two never overlap.
 */
import { ErrorCode, toEngramError, type EngramError } from '../errors.js';

export class IdleConsolidation {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running = false;
  private stopped = false;

  constructor(
    private readonly idleMs: number,
    private readonly run: () => Promise<unknown>,
    private readonly onError: (error: EngramError) => void,
  ) {}

  /** A write happened: (re)start the wait. */
  poke(): void {
    if (this.stopped) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(this.fire, this.idleMs);
    // Node: the schedule must not keep the process alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly fire = (): void => {
    this.timer = null;
    if (this.running || this.stopped) return;
    this.running = true;
    this.run()
      .catch((error: unknown) => {
        if (!this.stopped) this.onError(toEngramError(error, ErrorCode.STORE_FAILED, 'background consolidation failed'));
      })
      .finally(() => {
        this.running = false;
      });
  };
}
