/** Calls started and not yet settled, so that a close can let them finish first. */
export class InFlight {
  private readonly runs = new Set<Promise<unknown>>();

  /** Keeps `run` until it settles, and returns it. */
  track<T>(run: Promise<T>): Promise<T> {
    this.runs.add(run);
    const forget = () => this.runs.delete(run);
    run.then(forget, forget);
    return run;
  }

  /** Settles once every call tracked so far has, resolved or rejected. */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.runs]);
  }
}
