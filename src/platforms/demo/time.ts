/** Time-zone arithmetic for the demo generator: local calendar days and hours of a shop's IANA zone, without a date library. */

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
const offsetCache = new Map<string, number>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Offset of the zone from UTC at the given instant, in ms (local = utc + offset); cached per hour because zones change on hour boundaries. */
export function zoneOffsetMs(timeZone: string, epochMs: number): number {
  const hourKey = `${timeZone}|${Math.floor(epochMs / HOUR_MS)}`;
  const cached = offsetCache.get(hourKey);
  if (cached !== undefined) return cached;
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(epochMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  const offset = asUtc - Math.floor(epochMs / 1000) * 1000;
  // The cache only grows by one entry per hour of simulated time (~9k a year), so it needs no eviction.
  offsetCache.set(hourKey, offset);
  return offset;
}

/** The local calendar date of an instant, as the UTC-midnight epoch of that date (a plain day number carrier). */
export function localDateUtc(timeZone: string, epochMs: number): number {
  const local = epochMs + zoneOffsetMs(timeZone, epochMs);
  return Math.floor(local / DAY_MS) * DAY_MS;
}

/** The instant of local midnight of a local date given as UTC-midnight epoch. */
export function localMidnightInstant(timeZone: string, localDate: number): number {
  // Offset taken at local noon: DST switches happen at night, so noon has the day's "main" offset.
  const offset = zoneOffsetMs(timeZone, localDate + 12 * HOUR_MS);
  return localDate - offset;
}

/** Local weekday (0 = Sunday) of an instant. */
export function localWeekday(timeZone: string, epochMs: number): number {
  return new Date(epochMs + zoneOffsetMs(timeZone, epochMs)).getUTCDay();
}
