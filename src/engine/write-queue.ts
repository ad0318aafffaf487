/**
 * The engine's write discipline: changes run one at a time, in call order (searches never wait for them), and
 * each one writes to the store first and changes the in-memory state only once the write succeeded.
 */
import { ErrorCode, toEngramError } from '../errors.js';
import type { Store, StoreWrite } from '../store/store.js';
import { Serial } from '../util/serial.js';

/** `run` queues a change after every change queued before it; `idle` settles once all of them have. */
export class WriteQueue extends Serial {
  constructor(private readonly store: Pick<Store, 'write'>) {
    super();
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
