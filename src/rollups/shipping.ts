/**
 * Rollups of shipments, so shipping stats over a year read a few thousand rows instead of every shipment and its
 * tracking events (decisions N-series, issue 9):
 * - `shipping_daily_rollups`: counts per outcome and measured shipments per (local created day, carrier, country);
 * - `shipment_delivery_times`: one row per measured shipment (hand-over to first delivery event, in ms) — the exact
 *   values percentiles are picked from, indexed by value;
 * - `shipping_delivery_histograms`: per (carrier, country) the running count of measured shipments up to each local
 *   day per 15-minute bucket, one dense array, written only on days the group changes; a period's histogram is the
 *   array as of `to` minus the one before `from`.
 * Everything is recomputed from the raw rows for the days a change touches, in the transaction that writes the
 * shipments, so a shipment delivered later moves out of `in_transit` and into the times exactly once.
 */
import type { SqlRunner } from './orders.js';

/** Width of a delivery-time histogram bucket: 15 minutes, so the exact pick scans a small slice of the index. */
export const DELIVERY_BUCKET_MS = 900_000;
/**
 * Buckets below -1 day and from 30 days on are clamped into the first and last bucket, so one odd scan cannot make
 * every histogram array thousands of entries long; the order of buckets still follows the order of values.
 */
export const FIRST_BUCKET = -96;
export const LAST_BUCKET = 2880;

/** The shipments of the shop created on the local days `$2` (or all of them when `someDays` is false), with their times. */
function dayShipments(someDays: boolean): string {
  const source = someDays
    ? `(select d.day, (d.day::timestamp at time zone tz.time_zone) as start_at, ((d.day + 1)::timestamp at time zone tz.time_zone) as end_at
         from unnest($2::date[]) as d(day), tz) r
       join shipments s on s.shop_id = $1 and s.created_at >= r.start_at and s.created_at < r.end_at`
    : `shipments s, tz`;
  const day = someDays ? 'r.day' : '(s.created_at at time zone tz.time_zone)::date';
  return `
  tz as (select time_zone from shops where id = $1),
  s as (
    select ${day} as day, s.id, s.carrier_code, trim(s.country) as country, s.outcome,
           -- Hand-over to the FIRST delivery event, only for a shipment that is not cancelled (as shipping stats define it).
           case when s.outcome <> 'cancelled' then (extract(epoch from (fd.first_delivery_at - s.handed_over_at)) * 1000)::bigint end as delivery_ms
    from ${source}
    left join lateral (
      select min(e.occurred_at) as first_delivery_at from shipment_tracking_events e where e.shipment_id = s.id and e.is_delivery
    ) fd on true
    where s.shop_id = $1
  )`;
}

/** Recomputes the given local created days (YYYY-MM-DD) of a shop, or every day when `days` is null. */
export async function refreshShippingDays(run: SqlRunner, shopId: string, days: string[] | null): Promise<void> {
  if (days && !days.length) return;
  // The planner overestimates a day's shipments (a range over computed instants) about tenfold, which made it JIT-compile
  // these statements: ~150 ms of compiling for ~10 ms of work per sync batch. Off for the rest of this transaction.
  await run('set local jit = off', []);
  const dayFilter = `($2::date[] is null or day = any($2::date[]))`;
  await run(`delete from shipping_daily_rollups where shop_id = $1 and ${dayFilter}`, [shopId, days]);
  await run(`delete from shipment_delivery_times where shop_id = $1 and ${dayFilter}`, [shopId, days]);
  // One pass over the days' shipments (and their first delivery events) writes both tables.
  await run(`
    with ${dayShipments(days !== null)},
    counted as (
      insert into shipping_daily_rollups (shop_id, day, carrier_code, country, total, delivered, returned, failed, in_transit, cancelled, measured)
      select $1, day, carrier_code, country,
        count(*) filter (where outcome <> 'cancelled'), count(*) filter (where outcome = 'delivered'),
        count(*) filter (where outcome = 'returned'), count(*) filter (where outcome = 'failed'),
        count(*) filter (where outcome = 'in_transit'), count(*) filter (where outcome = 'cancelled'), count(delivery_ms)
      from s group by day, carrier_code, country
    )
    insert into shipment_delivery_times (shop_id, shipment_id, day, carrier_code, country, delivery_ms, bucket)
    select $1, id, day, carrier_code, country, delivery_ms,
           greatest(${FIRST_BUCKET}, least(${LAST_BUCKET}, floor(delivery_ms::numeric / ${DELIVERY_BUCKET_MS})))::int
    from s where delivery_ms is not null`, days ? [shopId, days] : [shopId]);
  // The running counts change from the earliest touched day on: rewrite them from there.
  const since = days ? days.reduce((a, b) => (a < b ? a : b)) : null;
  await run(`delete from shipping_delivery_histograms where shop_id = $1 and ($2::date is null or day >= $2::date)`, [shopId, since]);
  await run(`
    insert into shipping_delivery_groups (shop_id, carrier_code, country)
    select distinct $1::bigint, carrier_code, country from shipment_delivery_times where shop_id = $1 and ($2::date is null or day >= $2::date)
    on conflict do nothing`, [shopId, since]);
  await run(`
    with daily as (
      select carrier_code, country, day, bucket, count(*)::int as n
      from shipment_delivery_times where shop_id = $1 and ($2::date is null or day >= $2::date)
      group by carrier_code, country, day, bucket
    ),
    -- Each group's last histogram before the rewritten days, bucket by bucket: the base the running counts go on from.
    prior as (
      select h.carrier_code, h.country, h.first_bucket + u.i::int - 1 as bucket, u.n
      from (select distinct on (carrier_code, country) carrier_code, country, first_bucket, counts
            from shipping_delivery_histograms where shop_id = $1 and day < $2::date order by carrier_code, country, day desc) h,
           unnest(h.counts) with ordinality as u(n, i)
    ),
    ranges as (
      select carrier_code, country, min(bucket) as lo, max(bucket) as hi
      from (select carrier_code, country, bucket from daily union all select carrier_code, country, bucket from prior) x
      group by carrier_code, country
    ),
    -- Every bucket of the group's range on every rewritten day (zero), plus the day's counts and the base (placed
    -- before all days): a running sum per bucket over days, then one dense array per group and day. Unions and
    -- window sums only, no joins of the large sets, so a missing statistic cannot turn it into a nested loop.
    cells as (
      select d.carrier_code, d.country, d.day, b.bucket, 0 as n, true as grid
      from (select distinct carrier_code, country, day from daily) d
      join ranges r on r.carrier_code = d.carrier_code and r.country = d.country
      cross join lateral generate_series(r.lo, r.hi) as b(bucket)
      union all
      select carrier_code, country, day, bucket, n, false from daily
      union all
      select carrier_code, country, '-infinity'::date, bucket, n, false from prior
    ),
    running as (
      select carrier_code, country, day, bucket, grid,
             sum(n) over (partition by carrier_code, country, bucket order by day range unbounded preceding) as n
      from cells
    )
    insert into shipping_delivery_histograms (shop_id, carrier_code, country, day, first_bucket, counts)
    select $1, carrier_code, country, day, min(bucket), array_agg(n::int order by bucket)
    from running where grid group by carrier_code, country, day`, [shopId, since]);
}

/** The local created days (YYYY-MM-DD) of the given shipments of a shop. */
export async function shipmentDays(run: SqlRunner, shopId: string, shipmentIds: string[]): Promise<string[]> {
  if (!shipmentIds.length) return [];
  const rows = await run(`
    select coalesce(array_agg(distinct ((s.created_at at time zone sh.time_zone)::date)::text), '{}') as days
    from shipments s join shops sh on sh.id = s.shop_id
    where s.shop_id = $1 and s.id = any($2::bigint[])`, [shopId, shipmentIds]);
  return rows[0].days as string[];
}

/**
 * Recomputes the days of the given shipments (already written in this transaction) and `previousDays` (their local
 * created days before the change, should a re-synced shipment have moved to another day).
 */
export async function refreshShipmentRollups(run: SqlRunner, shopId: string, shipmentIds: string[], previousDays: string[] = []): Promise<void> {
  const days = [...new Set([...(await shipmentDays(run, shopId, shipmentIds)), ...previousDays])];
  await refreshShippingDays(run, shopId, days);
}
