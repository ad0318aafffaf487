import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Browser and engines files, longest first (a clean-clone CI run, one at a time: 105 s down to 18 s), queued first so
 * that the two slots end close together on short files; the rest follow in vitest's own order.
 */
const LONG = [
  'browser/encryption',
  'browser/learning',
  'browser/eviction',
  'browser/hostile',
  'engines/store',
  'browser/memory',
  'engines/memory',
  'browser/embedder',
  'browser/known-answer',
  'browser/store',
  'browser/demo-xss',
  'browser/campaign',
  'browser/demo-stages',
  'browser/corruption',
  'browser/demo-learning',
  'engines/demo',
].map((name) => `test/${name}.test.ts`);

/** `main` with each extra list spread evenly before its items from index `from` to `to` (fractions of its length). */
function spread<T>(main: T[], extras: [items: T[], from: number, to: number][]): T[] {
  if (main.length === 0) return extras.flatMap(([items]) => items);
  const before = main.map((): T[] => []);
  for (const [items, from, to] of extras) {
    const [first, last] = [Math.round(from * main.length), Math.round(to * main.length)];
    items.forEach((item, j) => before[Math.min(main.length - 1, first + Math.floor((j * (last - first)) / items.length))]!.push(item));
  }
  return main.flatMap((item, i) => [...before[i]!, item]);
}

/**
 * Every project shares one pool of three workers or more (vitest.config.ts), and slots.ts lets two browser, engines
 * or consumers files run at once (the consumers one at a time among themselves). A pool worker takes the next file in
 * this order, and a browser file that finds both slots taken waits in its worker. So the browser and engines files
 * come longest first (LONG), with the unit files spread between them over the first 60%, for the worker that holds no
 * browser file to run meanwhile, and the consumers (the packed tarball, installed and built in the background
 * meanwhile) spread over the last 60%, so that a consumer file waiting for the one before it is followed by a file of
 * another kind.
 */
export class Sequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const of = (name: string) => sorted.filter((spec) => spec.project.name === name);
    const rank = (spec: TestSpecification) => {
      const i = LONG.findIndex((path) => spec.moduleId.endsWith(path));
      return i < 0 ? LONG.length : i;
    };
    const main = [...of('browser'), ...of('engines')].sort((a, b) => rank(a) - rank(b));
    const queue = spread(main, [
      [of('unit'), 2 / main.length, 0.6],
      [of('consumers'), 0.4, 1],
    ]);
    const projects = new Set(['unit', 'browser', 'engines', 'consumers']);
    return [...queue, ...sorted.filter((spec) => !projects.has(spec.project.name))];
  }
}
