/**
 * Search-console activity of a demo shop: one archive sync a day in the early morning, an occasional failure, and now
 * and then a few days in which the property's access is lost (syncs fail until it is restored). A function of
 * (seed, shop, time), like the orders.
 */
import type { ShopDefinition } from './catalogue.js';
import { createRandom } from './random.js';
import { DAY_MS, HOUR_MS, localDateUtc, localMidnightInstant } from './time.js';
import type { GeneratedSearchConsoleProperty, GeneratedSearchConsoleRun, SearchConsoleStatus } from './types.js';

const BLOCK_DAYS = 30;
const SEARCH_TYPES = ['web', 'image'];

const isoDate = (localDate: number) => new Date(localDate).toISOString().slice(0, 10);

/** The property of a shop: its domain property. */
export function searchConsoleProperty(shop: ShopDefinition): string {
  return `sc-domain:${new URL(shop.baseUrl).hostname.replace(/^www\./, '')}`;
}

/** Access-lost episodes: at most one per 30-day block, deterministic per block. */
function lossEpisode(seed: number, shop: ShopDefinition, block: number): { fromMs: number; toMs: number } | null {
  const rng = createRandom(seed, 'sc-block', shop.code, block);
  if (!rng.chance(0.12)) return null;
  const fromMs = block * BLOCK_DAYS * DAY_MS + rng.int(0, BLOCK_DAYS - 4) * DAY_MS + rng.int(0, 23) * HOUR_MS;
  return { fromMs, toMs: fromMs + rng.int(20, 72) * HOUR_MS };
}

function episodesAround(seed: number, shop: ShopDefinition, fromMs: number, toMs: number) {
  const out: Array<{ fromMs: number; toMs: number }> = [];
  for (let b = Math.floor(fromMs / (BLOCK_DAYS * DAY_MS)) - 1; b <= Math.floor(toMs / (BLOCK_DAYS * DAY_MS)); b++) {
    const e = lossEpisode(seed, shop, b);
    if (e) out.push(e);
  }
  return out;
}

/** Connection state changes of the property in (sinceMs, untilMs], oldest first. */
function statusChanges(seed: number, shop: ShopDefinition, sinceMs: number, untilMs: number): Array<{ status: SearchConsoleStatus; at: number }> {
  const out: Array<{ status: SearchConsoleStatus; at: number }> = [];
  for (const e of episodesAround(seed, shop, sinceMs, untilMs)) {
    if (e.fromMs > sinceMs && e.fromMs <= untilMs) out.push({ status: 'access_lost', at: e.fromMs });
    if (e.toMs > sinceMs && e.toMs <= untilMs) out.push({ status: 'connected', at: e.toMs });
  }
  return out.sort((a, b) => a.at - b.at);
}

function lostAt(seed: number, shop: ShopDefinition, atMs: number): boolean {
  return episodesAround(seed, shop, atMs, atMs).some((e) => e.fromMs <= atMs && atMs < e.toMs);
}

/** The run of one local date (every date has one). */
function runOn(seed: number, shop: ShopDefinition, localDate: number): GeneratedSearchConsoleRun {
  const rng = createRandom(seed, 'sc-run', shop.code, localDate);
  const ranMs = localMidnightInstant(shop.timeZone, localDate) + 5 * HOUR_MS + rng.int(0, 40 * 60_000);
  const property = searchConsoleProperty(shop);
  const lost = lostAt(seed, shop, ranMs);
  const failed = lost || rng.chance(0.04);
  const base = {
    key: isoDate(localDate), ranAt: new Date(ranMs), property, searchTypes: SEARCH_TYPES, syncVersion: Math.round(localDate / DAY_MS),
  };
  if (failed) {
    let previous: number | null = null;
    for (let d = localDate - DAY_MS, tries = 0; tries < 30 && previous === null; d -= DAY_MS, tries++) {
      const r = runOn(seed, shop, d);
      if (r.status === 'completed') previous = r.ranAt.getTime();
    }
    return {
      ...base, status: 'failed', dataState: 'unchanged', finalDataThrough: null, freshDataThrough: null, daysUpserted: 0, revisedDates: [],
      error: lost ? 'The account has no permission for this property' : 'Search Console returned a backend error',
      errorCode: lost ? 'PERMISSION_DENIED' : 'BACKEND_ERROR',
      lastSuccessfulSyncAt: previous === null ? null : new Date(previous),
      retryAt: new Date(localMidnightInstant(shop.timeZone, localDate + DAY_MS) + 5 * HOUR_MS),
    };
  }
  // Final data lags about three days; fresh data reaches yesterday. Recent final days are revised.
  const revised = [3, 2].map((n) => isoDate(localDate - n * DAY_MS));
  return {
    ...base, status: 'completed', dataState: 'fresh', finalDataThrough: isoDate(localDate - 3 * DAY_MS), freshDataThrough: isoDate(localDate - DAY_MS),
    daysUpserted: 3 + (rng.chance(0.3) ? 1 : 0), revisedDates: revised, error: null, errorCode: null, lastSuccessfulSyncAt: null, retryAt: null,
  };
}

/** Runs in (sinceMs, untilMs], oldest first; `sinceMs` null means from `earliestMs`. */
export function searchConsoleRuns(seed: number, shop: ShopDefinition, sinceMs: number | null, untilMs: number, earliestMs: number): GeneratedSearchConsoleRun[] {
  const from = Math.max(sinceMs ?? earliestMs, earliestMs);
  const out: GeneratedSearchConsoleRun[] = [];
  for (let d = localDateUtc(shop.timeZone, from) - DAY_MS; d <= localDateUtc(shop.timeZone, untilMs); d += DAY_MS) {
    const run = runOn(seed, shop, d);
    const t = run.ranAt.getTime();
    if (t > from && t <= untilMs && (sinceMs !== null || t >= earliestMs)) out.push(run);
  }
  return out;
}

/** The property's connection as of `atMs`, with every state change since the history began (`earliestMs`). */
export function searchConsolePropertyAt(seed: number, shop: ShopDefinition, atMs: number, earliestMs: number): GeneratedSearchConsoleProperty {
  const history: Array<{ status: SearchConsoleStatus; at: Date }> = [{ status: lostAt(seed, shop, earliestMs) ? 'access_lost' : 'connected', at: new Date(earliestMs) }];
  for (const c of statusChanges(seed, shop, earliestMs, atMs)) {
    if (c.status !== history[history.length - 1].status) history.push({ status: c.status, at: new Date(c.at) });
  }
  const current = history[history.length - 1];
  const runs = searchConsoleRuns(seed, shop, atMs - 3 * DAY_MS, atMs, earliestMs);
  const lastRun = runs[runs.length - 1] ?? null;
  const lastSuccess = [...runs].reverse().find((r) => r.status === 'completed') ?? null;
  return {
    property: searchConsoleProperty(shop),
    status: current.status,
    statusChangedAt: current.at,
    statusHistory: history,
    lastSyncAt: lastRun ? lastRun.ranAt : null,
    lastSuccessfulSyncAt: lastSuccess ? lastSuccess.ranAt : lastRun?.lastSuccessfulSyncAt ?? null,
    syncVersion: lastSuccess ? lastSuccess.syncVersion : null,
    finalDataThrough: lastSuccess ? lastSuccess.finalDataThrough : null,
    freshDataThrough: lastSuccess ? lastSuccess.freshDataThrough : null,
  };
}
