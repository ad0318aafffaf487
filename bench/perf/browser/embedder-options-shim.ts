/**
 * In the bench's server only, the page's import of src/embedder/options.ts: the real module, except that
 * `createMemory` lets the bench's `{ bench }` embedder options through to the worker's bench adapter
 * (embedder-shim.ts) instead of refusing an option the library does not have.
 */
import { checkEmbedderOptionKeys as realCheck } from '../../../src/embedder/options.js';

export * from '../../../src/embedder/options.js';

export function checkEmbedderOptionKeys(options: unknown): void {
  if (typeof options === 'object' && options !== null && 'bench' in options) return;
  realCheck(options);
}
