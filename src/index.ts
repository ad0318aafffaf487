/**
 * Engram: private, offline long-term memory. The public API: `createMemory` (a worker-backed Memory for pages and
 * extensions) plus the in-process engine (portable.ts, also in `engram/node`). Extension points are in `engram/advanced`, the engine's parts in `engram/internals`.
 */
export { createMemory } from './client/create-memory.js';
export type { EncryptionOptions, Memory, MemoryOptions, MemoryStatus, MemorySyncOptions, RemoteSearchOptions, ScriptUrlPolicy, StorageKind } from './client/create-memory.js';
export { salvageMemory } from './client/salvage.js';
export type { SalvageOptions, SalvageReport } from './client/salvage.js';
export * from './portable.js';
