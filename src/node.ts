/** `engram/node`: the in-process engine (portable.ts) and the SQLite file store, for Node; no worker or browser code. */
export * from './portable.js';
export { openNodeStore, type NodeStoreOptions } from './store/node/file-store.js';
