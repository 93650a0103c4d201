/**
 * Customer performance: pseudonymous rows per (customer, currency) ranked by revenue, from the customer rollups —
 * lifetime rows without a period, the per-day rollups summed over the period's local days with one.
 */
import type { Knex } from 'knex';
import type { CapabilityContext } from '../capabilities/context.js';
import { cursorFingerprint, encodeCursor, type KeysetPosition } from '../capabilities/cursor.js';
import { LIST_LIMIT } from '../capabilities/params.js';
import type { Period } from '../capabilities/period.js';
import { AppError } from '../errors.js';
import { money } from '../money.js';
import { CANCELLED_STATUS_ID } from '../rollups/orders.js';
import { byCurrency } from './customers.js';

interface PerformanceRow {
  customer_key: string;
  currency: string;
  orders: number;
  revenue: string;
  first_at: Date;
  last_at: Date;
  lifetime_orders: number;
  lifetime_revenue: string;
}

/** The filtered rows as a query: one row per (customer, currency) with its period (or lifetime) figures. */
function filteredRows(ctx: CapabilityContext, period: Period | null): Knex.QueryBuilder {
  const db = ctx.db;
  const shopId = ctx.shop!.id;
  if (!period) {
    return db('customer_rollups').where({ shop_id: shopId }).whereRaw('orders_count > cancelled_count')
      .select('customer_key', 'currency', db.raw('orders_count - cancelled_count as orders'), 'revenue_with_vat as revenue');
  }
  return db('customer_daily_rollups').where({ shop_id: shopId }).whereBetween('day', [period.from, period.to])
    .groupBy('customer_key', 'currency').havingRaw('sum(orders_count - cancelled_count) > 0')
    .select('customer_key', 'currency', db.raw('sum(orders_count - cancelled_count)::int as orders'), db.raw('sum(revenue_with_vat) as revenue'));
}

/** One page of performance rows and the totals of the whole filter. */
export async function customerPerformance(ctx: CapabilityContext, period: Period | null, params: Record<string, unknown>, after: KeysetPosition | null) {
  const { cursor: _cursor, limit: limitParam, ...bound } = params as { cursor?: string; limit?: number };
  const limit = limitParam ?? LIST_LIMIT.default;
  if (limit < 1 || limit > LIST_LIMIT.max) {
    throw new AppError('LIMIT_OUT_OF_RANGE', `\`limit\` must be between 1 and ${LIST_LIMIT.max}; got ${limit}.`, { param: 'limit', min: 1, max: LIST_LIMIT.max });
  }
  const db = ctx.db;
  // The runner verified an incoming cursor with this same fingerprint (D7); the summary encodes the next one itself.
  const fingerprint = cursorFingerprint({ capability: 'customers.performance', account: ctx.caller.account.id, shopId: ctx.shop!.id, ...bound });

  // A period that covers every order day of the shop gives the lifetime figures: read the lifetime rows (indexed by
  // revenue) instead of summing a year of per-day rows.
  const span = period ? await db('order_daily_rollups').where({ shop_id: ctx.shop!.id }).first(db.raw('min(day)::text as first'), db.raw('max(day)::text as last')) : null;
  const effective = period && span?.first && period.from <= span.first && period.to >= span.last ? null : period;
  const { rows, totals, customers } = effective ? await periodFigures(ctx, effective, limit, after) : await lifetimeFigures(ctx, limit, after);
  const distinct = { customers };
  await addOrderTimes(ctx, effective, rows);

  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  const nextCursor = hasMore && last ? encodeCursor({ key: last.revenue, id: `${last.customer_key}|${last.currency}` }, period, fingerprint, ctx.cursorSecret) : null;
  return {
    customers: kept.map((r) => {
      const currency = r.currency.trim();
      const [revenue] = byCurrency([{ currency, amount: r.revenue }]);
      return {
        customerKey: r.customer_key.trim(),
        currency,
        ordersCount: r.orders,
        revenue,
        averageOrder: averageMoney(r.revenue, r.orders, currency),
        firstOrderAt: r.first_at.toISOString(),
        lastOrderAt: r.last_at.toISOString(),
        repeatPurchase: r.lifetime_orders >= 2,
        lifetimeOrdersCount: r.lifetime_orders,
        lifetimeValue: byCurrency([{ currency, amount: r.lifetime_revenue }])[0],
      };
    }),
    totals: {
      customers: (distinct as { customers: number } | undefined)?.customers ?? 0,
      ordersCount: totals.reduce((n, t) => n + Number(t.orders), 0),
      revenueByCurrency: byCurrency(totals.map((t) => ({ currency: t.currency, amount: t.revenue }))),
    },
    hasMore: nextCursor !== null,
    nextCursor,
  };
}

interface Figures {
  rows: PerformanceRow[];
  totals: Array<{ currency: string; orders: number; revenue: string }>;
  customers: number;
}

/** A period: its per-customer-day rows summed once, the page cut from them, the distinct count over them. */
async function periodFigures(ctx: CapabilityContext, period: Period, limit: number, after: KeysetPosition | null): Promise<Figures> {
  const db = ctx.db;
  // One statement: the filtered rows are aggregated once (materialized); the page is cut from them first and only its
  // rows are joined with their lifetime figures; the distinct-customer count reads the same rows.
  const page = db.from('f').select('*')
    .orderBy([{ column: 'revenue', order: 'desc' }, { column: 'customer_key', order: 'asc' }, { column: 'currency', order: 'asc' }])
    .limit(limit + 1);
  if (after) {
    const [key, currency] = after.id.split('|');
    page.whereRaw('(revenue < ?::numeric or (revenue = ?::numeric and (customer_key, currency) > (?, ?)))', [after.key, after.key, key, currency]);
  }
  const statement = db.withMaterialized('f', filteredRows(ctx, period))
    .with('p', page)
    .with('t', db.from('f').select('currency', db.raw('sum(orders)::int as orders'), db.raw('sum(revenue) as revenue')).groupBy('currency'))
    // With one currency in the period every customer has one row, so the rows are the customers; else count them.
    .with('d', db.select(db.raw(`case when (select count(*) from t) <= 1 then (select count(*) from f)
      else (select count(*) from (select distinct customer_key from f) k) end::int as customers`)))
    .from('d')
    .joinRaw('left join (p left join customer_rollups as cr on cr.shop_id = ? and cr.customer_key = p.customer_key and cr.currency = p.currency) on true', [ctx.shop!.id])
    .select('p.*', 'd.customers',
      db.raw(`(select coalesce(json_agg(json_build_object('currency', t.currency, 'orders', t.orders, 'revenue', t.revenue::text) order by t.currency), '[]') from t) as totals`),
      db.raw('coalesce(cr.orders_count - cr.cancelled_count, 0)::int as lifetime_orders'), db.raw('coalesce(cr.revenue_with_vat, 0) as lifetime_revenue'))
    .orderBy([{ column: 'p.revenue', order: 'desc' }, { column: 'p.customer_key', order: 'asc' }, { column: 'p.currency', order: 'asc' }]);
  const result = await statement as unknown as Array<PerformanceRow & { customers: number; totals: Array<{ currency: string; orders: number; revenue: string }> }>;
  // Without a page (a cursor past the end) the one row carries only the totals.
  return { rows: result.filter((r) => r.customer_key !== null), totals: result[0]?.totals ?? [], customers: result[0]?.customers ?? 0 };
}

/**
 * The whole history: the page straight from the lifetime rows by their revenue index, orders and revenue from the
 * shop's daily rollups (the same non-cancelled orders), and the buyer count the orders sync keeps.
 */
async function lifetimeFigures(ctx: CapabilityContext, limit: number, after: KeysetPosition | null): Promise<Figures> {
  const db = ctx.db;
  const shopId = ctx.shop!.id;
  const page = db('customer_rollups').where({ shop_id: shopId }).whereRaw('orders_count > cancelled_count')
    .select('customer_key', 'currency', db.raw('(orders_count - cancelled_count)::int as orders'), 'revenue_with_vat as revenue',
      db.raw('(orders_count - cancelled_count)::int as lifetime_orders'), 'revenue_with_vat as lifetime_revenue')
    .orderBy([{ column: 'revenue_with_vat', order: 'desc' }, { column: 'customer_key', order: 'asc' }, { column: 'currency', order: 'asc' }])
    .limit(limit + 1);
  if (after) {
    const [key, currency] = after.id.split('|');
    page.whereRaw('(revenue_with_vat < ?::numeric or (revenue_with_vat = ?::numeric and (customer_key, currency) > (?, ?)))', [after.key, after.key, key, currency]);
  }
  const totals = db('order_daily_rollups').where({ shop_id: shopId }).groupBy('currency').havingRaw('sum(orders_count) > 0')
    .select('currency', db.raw('sum(orders_count)::int as orders'), db.raw('sum(revenue_with_vat)::text as revenue')).orderBy('currency');
  // The buyer count the orders sync keeps; counted here only for a shop that has none yet.
  const customers = db('shop_buyer_counts').where({ shop_id: shopId }).first('buyers as customers').then((kept: { customers: number } | undefined) => kept
    ?? db.from(db('customer_rollups').where({ shop_id: shopId }).whereRaw('orders_count > cancelled_count').distinct('customer_key').as('k'))
      .first(db.raw('count(*)::int as customers')));
  const [rows, sums, count] = await Promise.all([page, totals, customers]) as unknown as [PerformanceRow[], Figures['totals'], { customers: number } | undefined];
  return { rows, totals: sums, customers: count?.customers ?? 0 };
}

/**
 * First and last non-cancelled order in the period (or ever) of the page's rows only, from their orders by the
 * customer index: the rollups' first/last times include cancelled orders (the directory counts every order placed),
 * and leaving them out of the period aggregation keeps its rows narrow.
 */
async function addOrderTimes(ctx: CapabilityContext, period: Period | null, rows: PerformanceRow[]): Promise<void> {
  if (!rows.length) return;
  const range = period
    ? `and o.created_at >= (?::date)::timestamp at time zone ? and o.created_at < ((?::date) + 1)::timestamp at time zone ?`
    : '';
  const { rows: times } = await ctx.db.raw(`
    select k.key, k.currency, min(o.created_at) as first_at, max(o.created_at) as last_at
    from unnest(?::text[], ?::text[]) as k(key, currency)
    join orders o on o.shop_id = ? and o.customer_email_hash = k.key::char(64) and o.currency = k.currency::char(3) and o.status_id <> ? ${range}
    group by k.key, k.currency`, [
    rows.map((r) => r.customer_key), rows.map((r) => r.currency), ctx.shop!.id, CANCELLED_STATUS_ID,
    ...(period ? [period.from, period.timeZone, period.to, period.timeZone] : []),
  ]);
  const byKey = new Map((times as Array<{ key: string; currency: string; first_at: Date; last_at: Date }>).map((t) => [`${t.key}|${t.currency}`, t]));
  for (const r of rows) {
    const t = byKey.get(`${r.customer_key}|${r.currency}`);
    if (t) {
      r.first_at = t.first_at;
      r.last_at = t.last_at;
    }
  }
}

/** revenue / orders rounded half away from zero to cents, in exact integer arithmetic. */
function averageMoney(revenue: string, orders: number, currency: string) {
  const [whole, fraction = ''] = revenue.replace('-', '').split('.');
  const cents = BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2));
  const avg = (cents * 2n + BigInt(orders)) / (2n * BigInt(orders));
  const sign = revenue.startsWith('-') ? '-' : '';
  return money(`${sign}${avg / 100n}.${String(avg % 100n).padStart(2, '0')}`, currency);
}
