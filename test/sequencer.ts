import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The browser file that runs beside the unit files: long, and mostly waiting on timers and storage, not on CPU. */
const LEAD = 'test/browser/learning.test.ts';

/**
 * Every project shares one pool of two or more workers (vitest.config.ts), and one-at-a-time.ts lets one browser,
 * engines or consumers file run at once. Queued as: one long browser file, every unit file, the other browser files,
 * then engines (Firefox, WebKit), then consumers (the packed tarball). One worker drives Chromium while the other
 * runs the unit files; a file queued behind another waits in its worker, which only happens once no unit file is
 * left to run.
 */
export class Sequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const browser = sorted.filter((spec) => spec.project.name === 'browser');
    const lead = browser.find((spec) => spec.moduleId.endsWith(LEAD)) ?? browser[0];
    const of = (name: string) => sorted.filter((spec) => spec.project.name === name && spec !== lead);
    const named = new Set(['unit', 'browser', 'engines', 'consumers']);
    const others = sorted.filter((spec) => !named.has(spec.project.name));
    return [...(lead ? [lead] : []), ...of('unit'), ...of('browser'), ...of('engines'), ...of('consumers'), ...others];
  }
}
