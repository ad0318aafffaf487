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
/** Largest counter the text form holds: past it the clock moves to the next millisecond instead (see `next`). */
export const MAX_COUNT = 36 ** COUNT_DIGITS - 1;
/** Largest wall time the text form holds (year 5188). */
export const MAX_WALL = 36 ** WALL_DIGITS - 1;

export function formatHlc(state: HlcState, device: string): string {
  return `${state.wall.toString(36).padStart(WALL_DIGITS, '0')}-${state.count.toString(36).padStart(COUNT_DIGITS, '0')}-${device}`;
}

export function parseHlc(text: string): (HlcState & { device: string }) | null {
  const match = /^([0-9a-z]{9})-([0-9a-z]{4})-(.+)$/.exec(text);
  if (!match) return null;
  return { wall: parseInt(match[1]!, 36), count: parseInt(match[2]!, 36), device: match[3]! };
}

/**
 * `count` at `wall`, or, when the counter would pass what its four digits hold, the next millisecond at 0: still
 * after every time seen (and its text sorts after), so the format never overflows. A clock far ahead of the
 * wall clock gets there (each event adds one); it then runs a millisecond per 1.7 million events.
 */
function next(wall: number, count: number): HlcState {
  return count > MAX_COUNT ? { wall: wall + 1, count: 0 } : { wall, count };
}

/** The next local time: after every time seen, at the wall clock when it is ahead. */
export function tick(state: HlcState, now: number): HlcState {
  return now > state.wall ? { wall: now, count: 0 } : next(state.wall, state.count + 1);
}

/**
 * The clock after receiving `remote`: ahead of it, so local changes made next win over what was received. The
 * caller refuses a remote time beyond now plus the allowed drift first (sync.ts), so no device drags the others far ahead.
 */
export function receive(state: HlcState, remote: HlcState, now: number): HlcState {
  const wall = Math.max(state.wall, remote.wall, now);
  if (wall === state.wall && wall === remote.wall) return next(wall, Math.max(state.count, remote.count) + 1);
  if (wall === state.wall) return next(wall, state.count + 1);
  if (wall === remote.wall) return next(wall, remote.count + 1);
  return { wall, count: 0 };
}
