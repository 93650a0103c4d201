/**
 * Visits, tracked orders and their revenue per shop, local day, channel and source: recomputed per day from
 * `web_visits` and `order_tracking` joined with the orders (cancelled ones left out), in the transaction that writes
 * either of them or changes an order of the day (decisions N1).
 */
import type { SqlRunner } from './orders.js';
import { CANCELLED_STATUS_ID } from './orders.js';

/** Recomputes the given local days (YYYY-MM-DD), or every day when `days` is null. */
export async function refreshChannelDays(run: SqlRunner, shopId: string, days: string[] | null): Promise<void> {
  await run(`delete from channel_daily_rollups where shop_id = $1 and ($2::date[] is null or day = any($2::date[]))`, [shopId, days]);
  const trackedOrders = days === null
    ? `select (o.created_at at time zone tz.time_zone)::date as day, o.code, o.total_with_vat, o.eur_rate, o.status_id from orders o, tz where o.shop_id = $1`
    : `select r.day, o.code, o.total_with_vat, o.eur_rate, o.status_id
       from (select d.day, (d.day::timestamp at time zone tz.time_zone) as start_at, ((d.day + 1)::timestamp at time zone tz.time_zone) as end_at
             from unnest($2::date[]) as d(day), tz) r
       join orders o on o.shop_id = $1 and o.created_at >= r.start_at and o.created_at < r.end_at`;
  await run(`
    with tz as (select time_zone from shops where id = $1),
    o as (${trackedOrders})
    insert into channel_daily_rollups (shop_id, day, channel, source, visits, orders_count, revenue_with_vat_eur)
    select $1, day, channel, source, sum(visits)::int, sum(orders)::int, sum(revenue)
    from (
      select day, channel, source, visits, 0 as orders, 0::numeric as revenue
      from web_visits where shop_id = $1 and ($2::date[] is null or day = any($2::date[]))
      union all
      select o.day, t.channel, t.source, 0, 1, o.total_with_vat * o.eur_rate
      from o join order_tracking t on t.shop_id = $1 and t.order_code = o.code
      where o.status_id <> ${CANCELLED_STATUS_ID}
    ) x
    group by day, channel, source`, [shopId, days]);
}
