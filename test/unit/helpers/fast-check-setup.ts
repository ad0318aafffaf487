/** Unit setup: properties that name no numRuns take fast-check's default of 100, cut like the others in the fast tier (tier.ts). */
import fc from 'fast-check';
import { runs } from './tier.js';

fc.configureGlobal({ numRuns: runs(100) });
