/**
 * A hybrid logical clock (Kulkarni et al. 2014): wall-clock milliseconds, a counter for events within one
 * millisecond or while the wall clock lags a time already seen, and the device id to break ties. Its text form
 * sorts as the clock does, so merges compare strings: the same on every device.
 */
export interface HlcState {
  wall: number;
  count: number;
}

const WALL_DIGITS = 9;
const COUNT_DIGITS = 4;

export function formatHlc(state: HlcState, device: string): string {
  return `${state.wall.toString(36).padStart(WALL_DIGITS, '0')}-${state.count.toString(36).padStart(COUNT_DIGITS, '0')}-${device}`;
}

export function parseHlc(text: string): (HlcState & { device: string }) | null {
  const match = /^([0-9a-z]{9})-([0-9a-z]{4})-(.+)$/.exec(text);
  if (!match) return null;
  return { wall: parseInt(match[1]!, 36), count: parseInt(match[2]!, 36), device: match[3]! };
}

/** The next local time: after every time seen, at the wall clock when it is ahead. */
export function tick(state: HlcState, now: number): HlcState {
  return now > state.wall ? { wall: now, count: 0 } : { wall: state.wall, count: state.count + 1 };
}

/** The clock after receiving `remote`: ahead of it, so local changes made next win over what was received. */
export function receive(state: HlcState, remote: HlcState, now: number): HlcState {
  const wall = Math.max(state.wall, remote.wall, now);
  if (wall === state.wall && wall === remote.wall) return { wall, count: Math.max(state.count, remote.count) + 1 };
  if (wall === state.wall) return { wall, count: state.count + 1 };
  if (wall === remote.wall) return { wall, count: remote.count + 1 };
  return { wall, count: 0 };
}
