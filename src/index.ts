/**
 * Engram: private, offline long-term memory. The public API: `createMemory` (a worker-backed Memory for pages and
 * extensions) plus everything of `engram/node` (the in-process engine). Building blocks are in `engram/advanced`.
 */
export { createMemory } from './client/create-memory.js';
export type { EncryptionOptions, Memory, MemoryOptions, MemoryStatus, RemoteSearchOptions, StorageKind } from './client/create-memory.js';
export * from './node.js';
