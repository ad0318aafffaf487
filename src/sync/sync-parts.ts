/**
 * What an engine that syncs loads when it opens (engine/options.ts `loadSyncParts`): one module, so a bundler makes
 * one chunk of the change log, the envelopes and the S3 client, fetched only by an app that configures sync.
 */
export { checkSyncKeyInput } from './envelope.js';
export { loggedStore } from './log.js';
export { Sync } from './sync.js';
