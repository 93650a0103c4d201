/** Durations of the rule language's `wait` step; no dependencies, because run workflows import it. */

export const DURATION_PATTERN = /^([1-9]\d{0,3})(m|h|d)$/;

/** Milliseconds of a `wait` duration such as `30m`, `12h`, `2d`. */
export function durationMs(duration: string): number {
  const m = DURATION_PATTERN.exec(duration);
  if (!m) throw new Error(`bad duration ${duration}`);
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}
