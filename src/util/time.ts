/** Milliseconds in a day: every rule stated in days (decay, retention, spacing) converts with it. */
export const DAY_MS = 86_400_000;
