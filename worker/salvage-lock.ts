import { EngramError, ErrorCode } from '../src/errors.js';

/** Refuses a salvage while a tab holds the database: the file would change under it (or be locked, on OPFS). */
export async function whileNoTabHolds<T>(lockName: string, run: () => Promise<T>): Promise<T> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (!locks) return run();
  let ran = false;
  const result = await locks.request(lockName, { ifAvailable: true }, async (lock) => {
    if (!lock) return undefined;
    ran = true;
    return { value: await run() };
  });
  if (!ran || !result) throw new EngramError(ErrorCode.STORE_FAILED, 'salvage: the database is open in a tab of this origin; close every Memory on it first');
  return result.value;
}
