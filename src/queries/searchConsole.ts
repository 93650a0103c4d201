/** Search console of a shop: the property's connection and sync state, its rows by cursor, and SEO summaries by query or page. */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { iso } from './keyset.js';

/** Connection, property, permission, sync state and the archive range of the stored rows. */
export async function searchConsoleStatus(db: Db, shopId: string) {
  const [property, archive, checkpoint, runs] = await Promise.all([
    db('search_console_properties').where({ shop_id: shopId }).first(),
    db('search_console_rows').where({ shop_id: shopId }).first(
      db.raw('min(day)::text as first_day'), db.raw('max(day)::text as last_day'), db.raw('count(distinct day)::int as days'), db.raw('count(*)::int as rows'),
      db.raw(`max(day) filter (where data_state = 'final')::text as final_through`)),
    db('sync_checkpoints').where({ shop_id: shopId, area: 'search_console_data' }).first('through', 'updated_at'),
    db('search_console_sync_runs').where({ shop_id: shopId }).orderBy('ran_at', 'desc').limit(5)
      .select('ran_at', 'status', 'data_state', 'days_upserted', 'error', 'error_code', 'retry_at'),
  ]);
  const status: string = property?.status ?? 'not_connected';
  return {
    connection: status as 'connected' | 'access_lost' | 'not_connected',
    property: property?.property ?? null,
    permission: status === 'connected' ? 'granted' as const : status === 'access_lost' ? 'lost' as const : 'none' as const,
    statusChangedAt: iso(property?.status_changed_at),
    sync: {
      lastSyncAt: iso(property?.last_sync_at),
      lastSuccessfulSyncAt: iso(property?.last_successful_sync_at),
      syncVersion: property?.sync_version ?? null,
      storedThrough: iso(checkpoint?.through),
      recentRuns: runs.map((r: Record<string, any>) => ({
        ranAt: r.ran_at.toISOString(), status: r.status, dataState: r.data_state, daysUpserted: r.days_upserted, error: r.error, errorCode: r.error_code, retryAt: iso(r.retry_at),
      })),
    },
    archive: {
      from: archive?.first_day ?? null,
      to: archive?.last_day ?? null,
      finalThrough: archive?.final_through ?? null,
      days: archive?.days ?? 0,
      rows: archive?.rows ?? 0,
    },
  };
}

export interface RowFilters {
  searchQuery?: string;
  page?: string;
  country?: string;
  device?: string;
}

/** A page of rows of the period, newest day first, optionally filtered on one or more dimensions. */
export async function searchConsoleRows(db: Db, shopId: string, period: Period, filters: RowFilters, page: PageRequest) {
  const q = db('search_console_rows').where({ shop_id: shopId }).whereBetween('day', [period.from, period.to])
    .select('id', db.raw('day::text as day'), 'query', 'page', 'country', 'device', 'clicks', 'impressions', 'position', 'data_state', 'content_hash');
  if (filters.searchQuery !== undefined) q.where('query', filters.searchQuery);
  if (filters.page !== undefined) q.where('page', filters.page);
  if (filters.country !== undefined) q.where('country', filters.country.toLowerCase());
  if (filters.device !== undefined) q.where('device', filters.device);
  if (page.after) q.whereRaw('(day, id) < (?::date, ?::bigint)', [page.after.key, page.after.id]);
  const rows: Array<Record<string, any>> = await q.orderBy([{ column: 'day', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(page.limit + 1);
  const hasMore = rows.length > page.limit;
  const kept = hasMore ? rows.slice(0, page.limit) : rows;
  const last = kept[kept.length - 1];
  return {
    items: kept.map((r) => ({
      day: r.day, query: r.query, page: r.page, country: r.country.trim(), device: r.device, clicks: r.clicks, impressions: r.impressions,
      ctr: r.impressions ? Math.round((r.clicks / r.impressions) * 10_000) / 10_000 : null, position: Number(r.position), dataState: r.data_state,
      contentHash: r.content_hash.trim(),
    })),
    hasMore,
    last: last ? { key: last.day, id: String(last.id) } : null,
  };
}

/** Clicks, impressions, CTR and impression-weighted position by query or by page, most clicks first, with totals. */
export async function seoSummary(db: Db, shopId: string, period: Period, by: 'query' | 'page', limit: number) {
  const base = db('search_console_rows').where({ shop_id: shopId }).whereBetween('day', [period.from, period.to]);
  const [rows, totals, state] = await Promise.all([
    base.clone().groupBy(by).select(db.raw('?? as key', [by]), db.raw('sum(clicks)::int as clicks'), db.raw('sum(impressions)::int as impressions'),
      db.raw('round(sum(position * impressions) / nullif(sum(impressions), 0), 2)::float8 as position'))
      .orderByRaw('sum(clicks) desc, ?? asc', [by]).limit(limit),
    base.clone().first(db.raw('coalesce(sum(clicks), 0)::int as clicks'), db.raw('coalesce(sum(impressions), 0)::int as impressions'),
      db.raw(`count(distinct ${by === 'query' ? 'query' : 'page'})::int as keys`),
      db.raw('round(sum(position * impressions) / nullif(sum(impressions), 0), 2)::float8 as position')),
    base.clone().first(db.raw(`max(day) filter (where data_state = 'final')::text as final_through`), db.raw(`max(day)::text as through`)),
  ]);
  const ctr = (c: number, i: number) => (i ? Math.round((c / i) * 10_000) / 10_000 : null);
  return {
    by,
    rows: (rows as Array<{ key: string; clicks: number; impressions: number; position: number | null }>).map((r) => ({
      [by]: r.key, clicks: r.clicks, impressions: r.impressions, ctr: ctr(r.clicks, r.impressions), position: r.position,
    })) as Array<{ query?: string; page?: string; clicks: number; impressions: number; ctr: number | null; position: number | null }>,
    totals: {
      [by === 'query' ? 'queries' : 'pages']: totals.keys,
      clicks: totals.clicks, impressions: totals.impressions, ctr: ctr(totals.clicks, totals.impressions), position: totals.position,
    } as { queries?: number; pages?: number; clicks: number; impressions: number; ctr: number | null; position: number | null },
    dataThrough: state?.through ?? null,
    finalDataThrough: state?.final_through ?? null,
  };
}
