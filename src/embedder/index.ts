/** `createEmbedder` and the option types of the main entry; the worker imports this module on demand. Settings: options.ts. */
export { checkEmbedderModel, createEmbedder } from './embedder.js';
export type { EmbedderOptions, EmbedderProgress, LocalEmbedder } from './options.js';
