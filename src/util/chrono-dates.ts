/**
 * The one module that touches chrono-node: English date phrases in text, parsed against a moment, in UTC. Loaded
 * only by relative-dates.ts's dynamic import, so an app that never forms memories never downloads it. Its shape is
 * checked when it loads (`chronoShapeOk`); relative-dates.ts falls back to its own phrase list when the check fails.
 */
import { casual } from 'chrono-node/en';

/** One date phrase as chrono read it: its calendar fields (UTC) and which of them the text said. */
export interface ChronoPhrase {
  phrase: string;
  index: number;
  year: number;
  month: number;
  day: number;
  known: { year: boolean; month: boolean; day: boolean; weekday: boolean };
  /** Read relative to the moment ("3 days ago", "next month") or as a casual reference ("yesterday", "tonight"). */
  relative: boolean;
}

interface Components {
  get(component: string): number | null;
  isCertain(component: string): boolean;
}
interface Result {
  text: string;
  index: number;
  start: Components;
  tags(): Set<string>;
}

function parse(text: string, at: number): Result[] {
  return casual.parse(text, { instant: new Date(at), timezone: 0 }) as unknown as Result[];
}

export function parsePhrases(text: string, at: number): ChronoPhrase[] {
  return parse(text, at).map((r) => {
    const field = (name: string) => r.start.get(name) ?? 0;
    const tags = [...r.tags()];
    return {
      phrase: r.text,
      index: r.index,
      year: field('year'),
      month: field('month'),
      day: field('day'),
      known: { year: r.start.isCertain('year'), month: r.start.isCertain('month'), day: r.start.isCertain('day'), weekday: r.start.isCertain('weekday') },
      relative: tags.some((tag) => tag.startsWith('result/relativeDate') || tag.startsWith('casualReference/')),
    };
  });
}

/** Whether chrono answers as this adapter reads it: a known phrase gives the fields, certainty and tags expected. */
function checkShape(): boolean {
  try {
    const [result] = parse('It rained 3 days ago.', Date.UTC(2026, 10, 20, 9, 30));
    if (!result || result.text !== '3 days ago' || result.index !== 10 || typeof result.tags !== 'function') return false;
    const tags = result.tags();
    return tags instanceof Set && tags.has('result/relativeDate') && result.start.get('day') === 17 && result.start.isCertain('day') === true;
  } catch {
    return false;
  }
}

export const chronoShapeOk = checkShape();
