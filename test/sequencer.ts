import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The browser files queued first: the first runs beside the unit files, the second waits for the lock in its own
 * worker, so that when the first ends the lock passes at once. Long files (mostly waiting on timers, storage and the
 * browser, not on CPU), so that few unit files are left when the lock holder needs a third.
 */
const LEAD = ['test/browser/learning.test.ts', 'test/browser/encryption.test.ts'];

/**
 * Every project shares one pool of three or more workers (vitest.config.ts), and one-at-a-time.ts lets one browser,
 * engines or consumers file run at once. Queued as: the lead browser files, every unit file, the other browser files,
 * then engines (Firefox, WebKit), then consumers (the packed tarball). One worker drives Chromium, one holds the next
 * browser file and the rest run the unit files; a file queued behind another waits in its worker.
 */
export class Sequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const browser = sorted.filter((spec) => spec.project.name === 'browser');
    const named = LEAD.flatMap((path) => browser.filter((spec) => spec.moduleId.endsWith(path)));
    const lead = named.length > 0 ? named : browser.slice(0, 1);
    const of = (name: string) => sorted.filter((spec) => spec.project.name === name && !lead.includes(spec));
    const projects = new Set(['unit', 'browser', 'engines', 'consumers']);
    const others = sorted.filter((spec) => !projects.has(spec.project.name));
    return [...lead, ...of('unit'), ...of('browser'), ...of('engines'), ...of('consumers'), ...others];
  }
}
