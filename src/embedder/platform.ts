/** Where we run decides the backend (onnxruntime-node vs onnxruntime-web) and where models live by default. */

/** Same test transformers.js uses, so we never disagree with it about the backend it picked. */
export const IS_NODE = typeof process !== 'undefined' && process.release?.name === 'node';

/**
 * Node: this package's `models/` folder (`npm run model` writes there), found from this file, not the cwd.
 * Browser: `/models/` on the page's (or worker's) own origin; an app copies the folder into what it serves.
 */
export async function defaultModelPath(): Promise<string> {
  if (!IS_NODE) return '/models/';
  const { fileURLToPath } = await import('node:url');
  return fileURLToPath(new URL('../../models/', import.meta.url));
}
