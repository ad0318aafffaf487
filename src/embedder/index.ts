/** The on-device embedder. `src/index.ts` re-exports this module. */
export { createEmbedder } from './embedder.js';
export {
  BUILTIN_MODEL,
  EMBEDDER_DEFAULTS,
  type ActiveDevice,
  type DeviceChoice,
  type DeviceReason,
  type EmbedderDevice,
  type EmbedderDtype,
  type EmbedderOptions,
  type EmbedderProgress,
  type LocalEmbedder,
  type Pooling,
  type WasmPaths,
} from './options.js';
