/** Where we run decides the backend (onnxruntime-node vs onnxruntime-web) and where models live by default. */
import { BUILTIN_MODEL_FILES } from './model-files.js';

/** Same test transformers.js uses, so we never disagree with it about the backend it picked. */
export const IS_NODE = typeof process !== 'undefined' && process.release?.name === 'node';

/**
 * Node: this package's `models/` folder, found from the built-in model's files (not the cwd). No `node:` import
 * here, so bundlers of browser apps have nothing to stub.
 * Browser: `/models/` on the page's (or worker's) own origin, for models the app serves itself (the built-in model's
 * files are listed in model-files.ts instead).
 */
export function defaultModelPath(): string {
  if (!IS_NODE) return '/models/';
  const folder = decodeURIComponent(new URL('../../', BUILTIN_MODEL_FILES['config.json']).pathname);
  return /^\/[A-Za-z]:\//.test(folder) ? folder.slice(1) : folder;
}
