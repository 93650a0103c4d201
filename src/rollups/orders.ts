/**
 * Rollups of orders: per shop and local day (and hour), and per customer pseudonym (lifetime and per day). They are
 * refreshed by recomputing every day and every customer a change touches from the raw rows, inside the transaction
 * that writes those rows: a re-synced order replaces its day's figures instead of adding to them, so a rollup is never
 * stale and never counts a record twice. The demo loader and migration 008 build them the same way for a whole shop.
 */
import type { Knex } from 'knex';
import { ORDER_STATUSES } from '../records/statuses.js';
import { refreshChannelDays } from './channels.js';

/** Runs one statement with $n parameters: a knex transaction and a bare pg connection (the loader's COPY transaction) both fit. */
export type SqlRunner = (text: string, values: unknown[]) => Promise<Array<Record<string, unknown>>>;

/** A SqlRunner over knex (knex binds `?`, so each $n occurrence becomes one positional binding). */
export function knexRunner(db: Knex | Knex.Transaction): SqlRunner {
  return async (text, values) => {
    const bindings: unknown[] = [];
    const sql = text.replace(/\$(\d+)/g, (_m, n: string) => {
      bindings.push(values[Number(n) - 1]);
      return '?';
    });
    const result = await db.raw(sql, bindings as Knex.RawBinding[]);
    return result.rows;
  };
}

/**
 * Status of a cancelled order: it counts as `cancelled`, never in orders, revenue or cost (decisions N3).
 * Exported so the tests' raw SQL uses the same rule.
 */
export const CANCELLED_STATUS_ID = ORDER_STATUSES.cancelled.id;

/**
 * The orders of the shop whose local day is in `days` ($2, YYYY-MM-DD[]), or every order when `someDays` is false, each
 * with its local day and hour. A day is matched by its instant range, so the keyset index serves it.
 */
function dayOrders(someDays: boolean): string {
  const source = someDays
    ? `ranges r join orders o on o.shop_id = $1 and o.created_at >= r.start_at and o.created_at < r.end_at, tz`
    : `orders o, tz`;
  return `
  tz as (select time_zone from shops where id = $1),
  ranges as (
    select d.day, (d.day::timestamp at time zone tz.time_zone) as start_at, ((d.day + 1)::timestamp at time zone tz.time_zone) as end_at
    from unnest($2::date[]) as d(day), tz
  ),
  o as (
    select (o.created_at at time zone tz.time_zone)::date as day,
           extract(hour from o.created_at at time zone tz.time_zone)::int as hour,
           o.id, o.currency, o.status_id = ${CANCELLED_STATUS_ID} as cancelled, o.total_with_vat, o.total_without_vat, o.total_vat,
           o.shipping_with_vat, o.discount_with_vat, o.eur_rate
    from ${source}
    where o.shop_id = $1
  )`;
}

async function refreshDays(run: SqlRunner, shopId: string, days: string[] | null): Promise<void> {
  const dayFilter = `($2::date[] is null or day = any($2::date[]))`;
  await run(`delete from order_daily_rollups where shop_id = $1 and ${dayFilter}`, [shopId, days]);
  await run(`delete from order_hourly_rollups where shop_id = $1 and ${dayFilter}`, [shopId, days]);
  await run(`
    with ${dayOrders(days !== null)},
    lines as (
      select i.order_id,
             count(*) filter (where i.kind = 'product') as product_lines,
             count(*) filter (where i.kind = 'product' and i.purchase_price_without_vat is not null) as priced_lines,
             coalesce(sum(i.quantity * i.purchase_price_without_vat) filter (where i.kind = 'product'), 0) as cogs,
             coalesce(sum(i.quantity * i.unit_price_without_vat) filter (where i.kind = 'product'), 0) as product_revenue,
             coalesce(sum(i.quantity * i.unit_price_without_vat) filter (where i.kind = 'product' and i.purchase_price_without_vat is not null), 0) as priced_revenue
      from order_items i join o on o.id = i.order_id
      group by i.order_id
    )
    insert into order_daily_rollups (
      shop_id, day, currency, orders_count, cancelled_count,
      revenue_with_vat, revenue_with_vat_eur, revenue_without_vat, revenue_without_vat_eur, vat, vat_eur,
      shipping_with_vat, shipping_with_vat_eur, discount_with_vat, discount_with_vat_eur,
      product_lines, priced_lines, cogs_eur, product_revenue_without_vat_eur, priced_revenue_without_vat_eur)
    select $1, o.day, o.currency,
      count(*) filter (where not o.cancelled), count(*) filter (where o.cancelled),
      coalesce(sum(o.total_with_vat) filter (where not o.cancelled), 0), coalesce(sum(o.total_with_vat * o.eur_rate) filter (where not o.cancelled), 0),
      coalesce(sum(o.total_without_vat) filter (where not o.cancelled), 0), coalesce(sum(o.total_without_vat * o.eur_rate) filter (where not o.cancelled), 0),
      coalesce(sum(o.total_vat) filter (where not o.cancelled), 0), coalesce(sum(o.total_vat * o.eur_rate) filter (where not o.cancelled), 0),
      coalesce(sum(o.shipping_with_vat) filter (where not o.cancelled), 0), coalesce(sum(o.shipping_with_vat * o.eur_rate) filter (where not o.cancelled), 0),
      coalesce(sum(o.discount_with_vat) filter (where not o.cancelled), 0), coalesce(sum(o.discount_with_vat * o.eur_rate) filter (where not o.cancelled), 0),
      coalesce(sum(l.product_lines) filter (where not o.cancelled), 0), coalesce(sum(l.priced_lines) filter (where not o.cancelled), 0),
      coalesce(sum(l.cogs * o.eur_rate) filter (where not o.cancelled), 0), coalesce(sum(l.product_revenue * o.eur_rate) filter (where not o.cancelled), 0),
      coalesce(sum(l.priced_revenue * o.eur_rate) filter (where not o.cancelled), 0)
    from o left join lines l on l.order_id = o.id
    group by o.day, o.currency`, [shopId, days]);
  await run(`
    with ${dayOrders(days !== null)}
    insert into order_hourly_rollups (shop_id, day, hour, orders_count, revenue_with_vat_eur)
    select $1, day, hour, count(*), sum(total_with_vat * eur_rate)
    from o where not cancelled
    group by day, hour`, [shopId, days]);
}

async function refreshCustomers(run: SqlRunner, shopId: string, keys: string[] | null): Promise<void> {
  const keyFilter = `($2::text[] is null or customer_key = any($2::text[]))`;
  await run(`delete from customer_rollups where shop_id = $1 and ${keyFilter}`, [shopId, keys]);
  await run(`delete from customer_daily_rollups where shop_id = $1 and ${keyFilter}`, [shopId, keys]);
  const customerOrders = `
    select o.*, o.status_id = ${CANCELLED_STATUS_ID} as cancelled, (o.created_at at time zone s.time_zone)::date as day
    from orders o join shops s on s.id = o.shop_id
    where o.shop_id = $1 and ($2::text[] is null or o.customer_email_hash = any($2::text[]))`;
  await run(`
    insert into customer_rollups (shop_id, customer_key, currency, orders_count, cancelled_count, revenue_with_vat, first_order_at, last_order_at, last_order_id)
    select $1, customer_email_hash, currency, count(*), count(*) filter (where cancelled),
           coalesce(sum(total_with_vat) filter (where not cancelled), 0), min(created_at), max(created_at),
           (array_agg(id order by created_at desc, id desc))[1]
    from (${customerOrders}) co
    group by customer_email_hash, currency`, [shopId, keys]);
  await run(`
    insert into customer_daily_rollups (shop_id, customer_key, day, currency, orders_count, cancelled_count, revenue_with_vat, first_order_at, last_order_at)
    select $1, customer_email_hash, day, currency, count(*), count(*) filter (where cancelled), coalesce(sum(total_with_vat) filter (where not cancelled), 0), min(created_at), max(created_at)
    from (${customerOrders}) co
    group by customer_email_hash, day, currency`, [shopId, keys]);
}

/** Customers among `keys` with at least one non-cancelled order in the shop. */
async function buyersAmong(run: SqlRunner, shopId: string, keys: string[]): Promise<number> {
  const rows = await run(`
    select count(distinct customer_key)::int as n from customer_rollups
    where shop_id = $1 and customer_key = any($2::char(64)[]) and orders_count > cancelled_count`, [shopId, keys]);
  return Number(rows[0].n);
}

/**
 * Recounts the shop's buyers (customers with at least one non-cancelled order) from its customer rollups: after a bulk
 * load and when migration 018 creates the count. Customers performance over the whole history reads it.
 */
export async function rebuildBuyerCount(run: SqlRunner, shopId: string): Promise<void> {
  await run(`
    insert into shop_buyer_counts (shop_id, buyers)
    select $1, count(distinct customer_key) from customer_rollups where shop_id = $1 and orders_count > cancelled_count
    on conflict (shop_id) do update set buyers = excluded.buyers`, [shopId]);
}

/** Recomputes the days and customers of the given orders (already written in this transaction). */
export async function refreshOrderRollups(trx: Knex.Transaction, shopId: string, orderIds: string[]): Promise<void> {
  if (!orderIds.length) return;
  const run = knexRunner(trx);
  const touched = await run(`
    select array_agg(distinct ((o.created_at at time zone s.time_zone)::date)::text) as days, array_agg(distinct o.customer_email_hash::text) as keys
    from orders o join shops s on s.id = o.shop_id
    where o.shop_id = $1 and o.id = any($2::bigint[])`, [shopId, orderIds]);
  const { days, keys } = touched[0] as { days: string[] | null; keys: string[] | null };
  if (!days || !keys) return;
  await refreshDays(run, shopId, days);
  // The shop's buyer count moves by the change among the touched customers; the row lock makes concurrent batches of a
  // shop take turns, so each one counts "before" on the committed state.
  await run(`
    insert into shop_buyer_counts (shop_id, buyers)
    select $1, count(distinct customer_key) from customer_rollups where shop_id = $1 and orders_count > cancelled_count
    on conflict (shop_id) do nothing`, [shopId]);
  await run('select 1 from shop_buyer_counts where shop_id = $1 for update', [shopId]);
  const before = await buyersAmong(run, shopId, keys);
  await refreshCustomers(run, shopId, keys);
  const after = await buyersAmong(run, shopId, keys);
  if (after !== before) await run('update shop_buyer_counts set buyers = buyers + $2 where shop_id = $1', [shopId, after - before]);
  // Tracked revenue per channel follows the orders' status too.
  await refreshChannelDays(run, shopId, days);
}

/** Rebuilds every order rollup of a shop from its raw rows (after a bulk load, or when the tables are first created). */
export async function rebuildShopRollups(db: Knex | Knex.Transaction | SqlRunner, shopId: string): Promise<void> {
  const run = typeof db === 'function' && !('raw' in db) ? (db as SqlRunner) : knexRunner(db as Knex);
  await refreshDays(run, shopId, null);
  await refreshCustomers(run, shopId, null);
  await refreshChannelDays(run, shopId, null);
}
