/** `raceAbort`, shared with the rest of the library (src/util/abort.ts), where the language-model adapters find it. */
export { raceAbort } from '../util/abort.js';
