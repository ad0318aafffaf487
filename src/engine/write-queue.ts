/**
 * The engine's write discipline: changes run one at a time, in call order (searches never wait for them), and
 * each one writes to the store first and changes the in-memory state only once the write succeeded.
 */
import { ErrorCode, toEngramError } from '../errors.js';
import type { Store, StoreWrite } from '../store/store.js';

export class WriteQueue {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: Pick<Store, 'write'>) {}

  /** Runs `change` after every change queued before it; a failed change does not block the next. */
  run<T>(change: () => Promise<T>): Promise<T> {
    const run = this.tail.then(change);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Settles once every change queued so far has settled. */
  idle(): Promise<unknown> {
    return this.tail;
  }

  /** Writes `change` to the store, then runs `apply` (an in-memory change that cannot fail) only if the write succeeded. */
  async commit(change: StoreWrite, apply: () => void): Promise<void> {
    try {
      await this.store.write(change);
    } catch (error) {
      throw toEngramError(error, ErrorCode.STORE_FAILED, 'the store rejected a write; nothing was changed');
    }
    apply();
  }
}
