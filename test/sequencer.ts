import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Chromium files that take longest (a clean-clone CI run, one at a time: 105, 103, 74, 62, 53, 47, 45 s), queued
 * first so that the two browser slots end close together; the rest follow in vitest's own order.
 */
const LONG = ['encryption', 'learning', 'eviction', 'hostile', 'memory', 'embedder', 'known-answer'].map((name) => `test/browser/${name}.test.ts`);

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
 * Every project shares one pool of three workers or more (vitest.config.ts), and slots.ts lets two browser,
 * engines or consumers files run at once (the consumers one at a time among themselves). A pool worker takes the
 * next file in this order, and a browser file that finds both slots taken waits in its worker. So the browser files
 * come longest first (LONG, then Firefox and WebKit, then the rest of Chromium's), with the unit files spread between
 * them over the first 60%, for the workers that hold no browser file to run meanwhile, and the consumers (the packed
 * tarball, installed and built in the background meanwhile) spread over the last 60%, so that a consumer file
 * waiting for the one before it is followed by a file of another kind.
 */
export class Sequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const of = (name: string) => sorted.filter((spec) => spec.project.name === name);
    const rank = (spec: TestSpecification) => {
      const i = LONG.findIndex((path) => spec.moduleId.endsWith(path));
      return i < 0 ? LONG.length : i;
    };
    const chromium = of('browser').sort((a, b) => rank(a) - rank(b));
    const long = chromium.filter((spec) => rank(spec) < LONG.length);
    const main = [...long, ...of('engines'), ...chromium.slice(long.length)];
    const queue = spread(main, [
      [of('unit'), 2 / main.length, 0.6],
      [of('consumers'), 0.4, 1],
    ]);
    const projects = new Set(['unit', 'browser', 'engines', 'consumers']);
    return [...queue, ...sorted.filter((spec) => !projects.has(spec.project.name))];
  }
}
