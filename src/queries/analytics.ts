/**
 * Analytics of a shop from the rollups: orders and revenue per local day and hour (order rollups), visits and tracked
 * orders per channel (channel rollups), advertising spend per day. Money in EUR at each record's stored rate (D23).
 */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import { addDays, daysInclusive } from '../capabilities/period.js';
import { money, type Money } from '../money.js';
import { AI_CHANNEL } from '../analytics/channels.js';

const eur = (amount: string) => money(amount, 'EUR');
/** A ratio with 4 decimals, or null when the denominator is zero. */
const ratio = (a: number, b: number): number | null => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);
/** Relative change in percent, 2 decimals, or null without a base. */
const change = (current: number, previous: number): number | null => (previous === 0 ? null : Math.round(((current - previous) / previous) * 10_000) / 100);

interface Totals {
  orders: number;
  revenue: string;
  visits: number;
  trackedOrders: number;
  trackedRevenue: string;
  aiVisits: number;
  aiOrders: number;
  aiRevenue: string;
}

/** The period's orders and revenue (all orders) and visits and tracked orders (web analytics), in one round trip. */
export async function periodTotals(db: Db, shopId: string, from: string, to: string): Promise<Totals> {
  const r = await db.raw(`
    select
      (select coalesce(sum(orders_count), 0)::int from order_daily_rollups where shop_id = :shop and day between :from::date and :to::date) as orders,
      (select round(coalesce(sum(revenue_with_vat_eur), 0), 2)::text from order_daily_rollups where shop_id = :shop and day between :from::date and :to::date) as revenue,
      coalesce(sum(visits), 0)::int as visits, coalesce(sum(orders_count), 0)::int as tracked_orders,
      round(coalesce(sum(revenue_with_vat_eur), 0), 2)::text as tracked_revenue,
      coalesce(sum(visits) filter (where channel = :ai), 0)::int as ai_visits,
      coalesce(sum(orders_count) filter (where channel = :ai), 0)::int as ai_orders,
      round(coalesce(sum(revenue_with_vat_eur) filter (where channel = :ai), 0), 2)::text as ai_revenue
    from channel_daily_rollups where shop_id = :shop and day between :from::date and :to::date`, { shop: shopId, from, to, ai: AI_CHANNEL });
  const row = r.rows[0];
  return {
    orders: row.orders, revenue: row.revenue, visits: row.visits, trackedOrders: row.tracked_orders, trackedRevenue: row.tracked_revenue,
    aiVisits: row.ai_visits, aiOrders: row.ai_orders, aiRevenue: row.ai_revenue,
  };
}

function aiShare(t: Totals) {
  return {
    visits: t.aiVisits,
    orders: t.aiOrders,
    revenueWithVat: eur(t.aiRevenue),
    visitsShare: ratio(t.aiVisits, t.visits),
    ordersShare: ratio(t.aiOrders, t.orders),
    revenueShare: ratio(Number(t.aiRevenue), Number(t.revenue)),
  };
}

function headline(t: Totals) {
  return {
    visits: t.visits,
    orders: t.orders,
    revenueWithVat: eur(t.revenue),
    conversionRate: ratio(t.orders, t.visits),
    averageOrderValue: t.orders ? eur((Math.round((Number(t.revenue) / t.orders) * 100) / 100).toFixed(2)) : null,
  };
}

/** Visits, orders, revenue, conversion rate, AOV and the AI assistants' share. */
export async function analyticsOverview(db: Db, shopId: string, period: Period) {
  const t = await periodTotals(db, shopId, period.from, period.to);
  return { currency: 'EUR' as const, ...headline(t), trackedOrders: t.trackedOrders, aiAssistants: aiShare(t) };
}

/** Visits, tracked orders and revenue per channel and source, most revenue first; AI assistants as their own channel. */
export async function analyticsChannels(db: Db, shopId: string, period: Period) {
  const rows: Array<{ channel: string; source: string; visits: number; orders: number; revenue: string }> = await db('channel_daily_rollups')
    .where({ shop_id: shopId }).whereBetween('day', [period.from, period.to]).groupBy('channel', 'source')
    .select('channel', 'source', db.raw('sum(visits)::int as visits'), db.raw('sum(orders_count)::int as orders'), db.raw('round(sum(revenue_with_vat_eur), 2)::text as revenue'));
  const t = await periodTotals(db, shopId, period.from, period.to);
  const channels = new Map<string, { visits: number; orders: number; cents: number; sources: typeof rows }>();
  for (const r of rows) {
    const c = channels.get(r.channel) ?? { visits: 0, orders: 0, cents: 0, sources: [] };
    c.visits += r.visits;
    c.orders += r.orders;
    c.cents += Math.round(Number(r.revenue) * 100);
    c.sources.push(r);
    channels.set(r.channel, c);
  }
  const byRevenue = <T extends { revenueWithVat: { amount: string }; name: string }>(a: T, b: T) =>
    Number(b.revenueWithVat.amount) - Number(a.revenueWithVat.amount) || (a.name < b.name ? -1 : 1);
  const list = [...channels.entries()].map(([name, c]) => ({
    name,
    channel: name,
    aiAssistant: name === AI_CHANNEL,
    visits: c.visits,
    orders: c.orders,
    revenueWithVat: eur((c.cents / 100).toFixed(2)),
    conversionRate: ratio(c.orders, c.visits),
    revenueShare: ratio(c.cents / 100, Number(t.revenue)),
    sources: c.sources.map((s) => ({ name: s.source, source: s.source, visits: s.visits, orders: s.orders, revenueWithVat: eur(s.revenue), conversionRate: ratio(s.orders, s.visits) }))
      .sort(byRevenue).map(({ name: _n, ...s }) => s),
  })).sort(byRevenue).map(({ name: _n, ...c }) => c);
  const untrackedCents = Math.round(Number(t.revenue) * 100) - Math.round(Number(t.trackedRevenue) * 100);
  return {
    currency: 'EUR' as const,
    channels: list,
    untracked: { orders: t.orders - t.trackedOrders, revenueWithVat: eur((untrackedCents / 100).toFixed(2)) },
    totals: { ...headline(t), trackedOrders: t.trackedOrders },
  };
}

/** Coverage of orders and revenue by web-analytics tracking. */
export async function orderCoverage(db: Db, shopId: string, period: Period) {
  const t = await periodTotals(db, shopId, period.from, period.to);
  return {
    currency: 'EUR' as const,
    orders: t.orders,
    trackedOrders: t.trackedOrders,
    untrackedOrders: t.orders - t.trackedOrders,
    orderCoverage: ratio(t.trackedOrders, t.orders),
    revenueWithVat: eur(t.revenue),
    trackedRevenueWithVat: eur(t.trackedRevenue),
    revenueCoverage: ratio(Number(t.trackedRevenue), Number(t.revenue)),
  };
}

/** The period to compare with: the same number of days just before, or the same dates a year earlier. */
export function comparisonPeriod(period: Period, compareTo: 'previous_period' | 'previous_year'): Period {
  if (compareTo === 'previous_year') {
    const back = (d: string) => {
      const [y, m, day] = d.split('-').map(Number);
      // 29 February maps to 28 February.
      const last = new Date(Date.UTC(y - 1, m, 0)).getUTCDate();
      return `${y - 1}-${String(m).padStart(2, '0')}-${String(Math.min(day, last)).padStart(2, '0')}`;
    };
    return { from: back(period.from), to: back(period.to), timeZone: period.timeZone };
  }
  const days = daysInclusive(period.from, period.to);
  return { from: addDays(period.from, -days), to: addDays(period.from, -1), timeZone: period.timeZone };
}

/** Revenue, orders, AOV, visits, conversion rate and AI share against the previous period or year. */
export async function analyticsComparison(db: Db, shopId: string, period: Period, compareTo: 'previous_period' | 'previous_year') {
  const previous = comparisonPeriod(period, compareTo);
  const [a, b] = await Promise.all([periodTotals(db, shopId, period.from, period.to), periodTotals(db, shopId, previous.from, previous.to)]);
  const figures = (t: Totals, p: Period) => ({ from: p.from, to: p.to, ...headline(t), aiRevenueShare: ratio(Number(t.aiRevenue), Number(t.revenue)) });
  const current = figures(a, period);
  const before = figures(b, previous);
  return {
    currency: 'EUR' as const,
    compareTo,
    current,
    previous: before,
    changePercent: {
      revenueWithVat: change(Number(a.revenue), Number(b.revenue)),
      orders: change(a.orders, b.orders),
      averageOrderValue: change(Number(current.averageOrderValue?.amount ?? 0), Number(before.averageOrderValue?.amount ?? 0)),
      visits: change(a.visits, b.visits),
      conversionRate: change(current.conversionRate ?? 0, before.conversionRate ?? 0),
      aiRevenueShare: change(current.aiRevenueShare ?? 0, before.aiRevenueShare ?? 0),
    },
  };
}

/** Revenue, orders and visits per calendar month of the shop, over whole months [fromMonth, toMonth]. */
export async function analyticsMonthly(db: Db, shopId: string, fromMonth: string, toMonth: string) {
  const from = `${fromMonth}-01`;
  const [y, m] = toMonth.split('-').map(Number);
  const to = new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
  const r = await db.raw(`
    with months as (select generate_series(:from::date, :to::date, interval '1 month')::date as month),
    o as (select date_trunc('month', day)::date as month, sum(orders_count)::int as orders, round(sum(revenue_with_vat_eur), 2) as revenue
          from order_daily_rollups where shop_id = :shop and day between :from::date and :to::date group by 1),
    v as (select date_trunc('month', day)::date as month, sum(visits)::int as visits
          from channel_daily_rollups where shop_id = :shop and day between :from::date and :to::date group by 1)
    select to_char(months.month, 'YYYY-MM') as month, coalesce(o.orders, 0) as orders, coalesce(o.revenue, 0)::text as revenue, coalesce(v.visits, 0) as visits
    from months left join o using (month) left join v using (month) order by months.month`, { shop: shopId, from, to });
  return {
    currency: 'EUR' as const,
    period: { from, to },
    months: r.rows.map((row: { month: string; orders: number; revenue: string; visits: number }) => ({
      month: row.month, orders: row.orders, revenueWithVat: eur(Number(row.revenue).toFixed(2)), visits: row.visits, conversionRate: ratio(row.orders, row.visits),
    })),
  };
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** Orders by weekday x hour in the shop's time zone, with the strongest weekday, hour and cell. */
export async function orderHeatmap(db: Db, shopId: string, period: Period) {
  const rows: Array<{ weekday: number; hour: number; orders: number; revenue: string }> = (await db.raw(`
    select extract(isodow from day)::int as weekday, hour, sum(orders_count)::int as orders, round(sum(revenue_with_vat_eur), 2)::text as revenue
    from order_hourly_rollups where shop_id = ? and day between ?::date and ?::date group by 1, 2`, [shopId, period.from, period.to])).rows;
  const cells = [];
  const byWeekday = new Array(7).fill(0);
  const byHour = new Array(24).fill(0);
  for (let w = 1; w <= 7; w++) {
    for (let h = 0; h < 24; h++) {
      const found = rows.find((r) => r.weekday === w && r.hour === h);
      const orders = found?.orders ?? 0;
      byWeekday[w - 1] += orders;
      byHour[h] += orders;
      cells.push({ weekday: WEEKDAYS[w - 1], hour: h, orders });
    }
  }
  const maxIndex = (values: number[]) => values.reduce((best, v, i) => (v > values[best] ? i : best), 0);
  const total = byWeekday.reduce((a, b) => a + b, 0);
  const strongestCell = cells.reduce((best, c) => (c.orders > best.orders ? c : best), cells[0]);
  return {
    timeZone: period.timeZone,
    orders: total,
    cells,
    byWeekday: WEEKDAYS.map((weekday, i) => ({ weekday, orders: byWeekday[i] })),
    byHour: byHour.map((orders, hour) => ({ hour, orders })),
    strongestWeekday: total ? WEEKDAYS[maxIndex(byWeekday)] : null,
    strongestHour: total ? maxIndex(byHour) : null,
    strongestCell: total ? strongestCell : null,
  };
}

/** Where revenue comes from: every channel's tracked revenue, the AI assistants, affiliate, and what is untracked. */
export async function revenueSources(db: Db, shopId: string, period: Period) {
  const c = await analyticsChannels(db, shopId, period);
  const revenue = Number(c.totals.revenueWithVat.amount);
  const pick = (name: string) => c.channels.find((x) => x.channel === name);
  const part = (x: { orders: number; revenueWithVat: Money } | undefined) => ({
    orders: x?.orders ?? 0, revenueWithVat: x?.revenueWithVat ?? eur('0.00'), revenueShare: ratio(Number(x?.revenueWithVat.amount ?? 0), revenue),
  });
  return {
    currency: 'EUR' as const,
    revenueWithVat: c.totals.revenueWithVat,
    orders: c.totals.orders,
    channels: c.channels.map((x) => ({ channel: x.channel, aiAssistant: x.aiAssistant, orders: x.orders, revenueWithVat: x.revenueWithVat, revenueShare: x.revenueShare, visits: x.visits })),
    aiAssistants: part(pick(AI_CHANNEL)),
    affiliate: part(pick('affiliate')),
    paid: part({ orders: (pick('paid_search')?.orders ?? 0) + (pick('paid_social')?.orders ?? 0),
      revenueWithVat: eur(((Math.round(Number(pick('paid_search')?.revenueWithVat.amount ?? 0) * 100) + Math.round(Number(pick('paid_social')?.revenueWithVat.amount ?? 0) * 100)) / 100).toFixed(2)) }),
    untracked: { ...c.untracked, revenueShare: ratio(Number(c.untracked.revenueWithVat.amount), revenue) },
  };
}

/** How far back advertising analytics reaches (SPEC "Limits": 6 months). */
export const ADVERTISING_HISTORY_MONTHS = 6;

async function adFigures(db: Db, shopId: string, from: string, to: string) {
  const rows: Array<{ platform: string; spend: string; budget: string; clicks: number; impressions: number; conversions: number; value: string }> = (await db.raw(`
    select platform, round(sum(spend * eur_rate), 2)::text as spend, round(sum(budget * eur_rate), 2)::text as budget, sum(clicks)::int as clicks,
           sum(impressions)::int as impressions, sum(conversions)::int as conversions, round(sum(conversion_value * eur_rate), 2)::text as value
    from ad_spend_daily where shop_id = ? and day between ?::date and ?::date group by platform order by platform`, [shopId, from, to])).rows;
  const t = await periodTotals(db, shopId, from, to);
  const paid = (await db.raw(`select coalesce(sum(visits), 0)::int as visits from channel_daily_rollups
      where shop_id = ? and day between ?::date and ?::date and channel in ('paid_search', 'paid_social')`, [shopId, from, to])).rows[0].visits as number;
  const sumCents = (xs: string[]) => xs.reduce((n, x) => n + Math.round(Number(x) * 100), 0);
  const spend = sumCents(rows.map((r) => r.spend)) / 100;
  const value = sumCents(rows.map((r) => r.value)) / 100;
  const conversions = rows.reduce((n, r) => n + r.conversions, 0);
  const revenue = Number(t.revenue);
  const money2 = (x: number) => eur(x.toFixed(2));
  const per = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 100) / 100);
  return {
    from, to,
    platforms: rows.map((r) => ({
      platform: r.platform, spend: eur(r.spend), budget: eur(r.budget), budgetUse: ratio(Number(r.spend), Number(r.budget)), clicks: r.clicks,
      impressions: r.impressions, conversions: r.conversions, conversionValue: eur(r.value), roas: per(Number(r.value), Number(r.spend)),
      cpa: per(Number(r.spend), r.conversions) === null ? null : money2(per(Number(r.spend), r.conversions)!),
    })),
    spend: money2(spend),
    budget: money2(sumCents(rows.map((r) => r.budget)) / 100),
    clicks: rows.reduce((n, r) => n + r.clicks, 0),
    clicksInWebAnalytics: paid,
    conversions,
    conversionValue: money2(value),
    roas: per(value, spend),
    cpa: per(spend, conversions) === null ? null : money2(per(spend, conversions)!),
    revenueWithVat: eur(t.revenue),
    orders: t.orders,
    averageOrderValue: t.orders ? money2(Math.round((revenue / t.orders) * 100) / 100) : null,
    spendShareOfRevenue: ratio(spend, revenue),
    mer: per(revenue, spend),
  };
}

/** Advertising over both platforms with the previous period of the same length for comparison. */
export async function advertising(db: Db, shopId: string, period: Period) {
  const previous = comparisonPeriod(period, 'previous_period');
  const [current, before] = await Promise.all([adFigures(db, shopId, period.from, period.to), adFigures(db, shopId, previous.from, previous.to)]);
  return {
    currency: 'EUR' as const,
    ...current,
    comparison: {
      from: before.from, to: before.to, spend: before.spend, revenueWithVat: before.revenueWithVat, roas: before.roas, mer: before.mer, cpa: before.cpa,
      changePercent: {
        spend: change(Number(current.spend.amount), Number(before.spend.amount)),
        revenueWithVat: change(Number(current.revenueWithVat.amount), Number(before.revenueWithVat.amount)),
        roas: change(current.roas ?? 0, before.roas ?? 0),
        mer: change(current.mer ?? 0, before.mer ?? 0),
      },
    },
  };
}
