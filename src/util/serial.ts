/** Runs tasks one at a time, in call order; a failed task does not block the next. */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Settles once every task queued so far has settled. */
  idle(): Promise<unknown> {
    return this.tail;
  }
}
