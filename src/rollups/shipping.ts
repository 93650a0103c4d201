/**
 * Rollups of shipments, so shipping stats over a year read a few thousand rows instead of every shipment and its
 * tracking events (decisions N-series, issue 9):
 * - `shipping_daily_rollups`: counts per outcome and measured shipments per (local created day, carrier, country);
 * - `shipment_delivery_times`: one row per measured shipment (hand-over to first delivery event, in ms) — the exact
 *   values percentiles are picked from, indexed by value;
 * - `shipping_delivery_cumulative`: per (carrier, country, 15-minute bucket) the running count of measured shipments
 *   up to each local day, written only on days the count changes; a period's histogram is cum(to) - cum(from - 1).
 * Everything is recomputed from the raw rows for the days a change touches, in the transaction that writes the
 * shipments, so a shipment delivered later moves out of `in_transit` and into the times exactly once.
 */
import type { SqlRunner } from './orders.js';

/** Width of a delivery-time histogram bucket: 15 minutes, so the exact pick scans a small slice of the index. */
export const DELIVERY_BUCKET_MS = 900_000;

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
  const dayFilter = `($2::date[] is null or day = any($2::date[]))`;
  await run(`delete from shipping_daily_rollups where shop_id = $1 and ${dayFilter}`, [shopId, days]);
  await run(`delete from shipment_delivery_times where shop_id = $1 and ${dayFilter}`, [shopId, days]);
  await run(`
    with ${dayShipments(days !== null)}
    insert into shipping_daily_rollups (shop_id, day, carrier_code, country, total, delivered, returned, failed, in_transit, cancelled, measured)
    select $1, day, carrier_code, country,
      count(*) filter (where outcome <> 'cancelled'), count(*) filter (where outcome = 'delivered'),
      count(*) filter (where outcome = 'returned'), count(*) filter (where outcome = 'failed'),
      count(*) filter (where outcome = 'in_transit'), count(*) filter (where outcome = 'cancelled'), count(delivery_ms)
    from s group by day, carrier_code, country`, days ? [shopId, days] : [shopId]);
  await run(`
    with ${dayShipments(days !== null)}
    insert into shipment_delivery_times (shop_id, shipment_id, day, carrier_code, country, delivery_ms, bucket)
    select $1, id, day, carrier_code, country, delivery_ms, floor(delivery_ms::numeric / ${DELIVERY_BUCKET_MS})::int
    from s where delivery_ms is not null`, days ? [shopId, days] : [shopId]);
  // The running counts change from the earliest touched day on: rewrite them from there.
  const since = days ? days.reduce((a, b) => (a < b ? a : b)) : null;
  await run(`delete from shipping_delivery_cumulative where shop_id = $1 and ($2::date is null or day >= $2::date)`, [shopId, since]);
  await run(`
    insert into shipping_delivery_keys (shop_id, carrier_code, country, bucket)
    select distinct $1::bigint, carrier_code, country, bucket from shipment_delivery_times where shop_id = $1 and ($2::date is null or day >= $2::date)
    on conflict do nothing`, [shopId, since]);
  await run(`
    with daily as (
      select carrier_code, country, bucket, day, count(*) as n
      from shipment_delivery_times where shop_id = $1 and ($2::date is null or day >= $2::date)
      group by carrier_code, country, bucket, day
    ),
    base as (
      select k.carrier_code, k.country, k.bucket,
        coalesce((select c.cumulative from shipping_delivery_cumulative c
                  where c.shop_id = $1 and c.carrier_code = k.carrier_code and c.country = k.country and c.bucket = k.bucket and c.day < $2::date
                  order by c.day desc limit 1), 0) as base
      from (select distinct carrier_code, country, bucket from daily) k
    )
    insert into shipping_delivery_cumulative (shop_id, carrier_code, country, bucket, day, cumulative)
    select $1, d.carrier_code, d.country, d.bucket, d.day,
           b.base + sum(d.n) over (partition by d.carrier_code, d.country, d.bucket order by d.day)
    from daily d join base b using (carrier_code, country, bucket)`, [shopId, since]);
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
