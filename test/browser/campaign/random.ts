/** A seeded generator (mulberry32), so a failing campaign can be replayed with the seed it prints. */
export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** Up to `count` distinct items. */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = [...items];
    const out: T[] = [];
    while (out.length < count && copy.length > 0) out.push(copy.splice(this.int(0, copy.length - 1), 1)[0] as T);
    return out;
  }
}

/** The seed for this run: ENGRAM_CAMPAIGN_SEED to replay one, else a new one (printed by the campaign). */
export function campaignSeed(): number {
  const given = Number(process.env.ENGRAM_CAMPAIGN_SEED);
  return Number.isInteger(given) ? given : Math.floor(Math.random() * 2 ** 31);
}

/** Short by default (npm test); ENGRAM_CAMPAIGN=long for the figures a release note quotes. */
export const LONG = process.env.ENGRAM_CAMPAIGN === 'long';

const WORDS = ['garden', 'tomato', 'staging', 'server', 'orchid', 'report', 'friday', 'migration', 'database', 'river', 'piano', 'ticket'];

export function words(random: Random, count: number): string {
  return Array.from({ length: count }, () => random.pick(WORDS)).join(' ');
}
