/**
 * The financial summary and order performance of a shop, in EUR at each record's stored sync-time rate (D23), from the
 * daily order rollups and the monthly company costs. Every figure is computed in Postgres as NUMERIC and rounded once,
 * half away from zero, to cents.
 */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import { money } from '../money.js';

/**
 * Cost of goods is reported only when at least this share of the period's product lines has a known purchase price;
 * below it `cogs` is null and profit, margin and result are absent (SPEC partial-data guard).
 */
export const COGS_COVERAGE_MIN = 0.9;

const eur = (amount: string) => money(amount, 'EUR');

interface SummaryRow {
  orders: number;
  cancelled: number;
  revenue_with_vat: string;
  revenue_without_vat: string;
  vat: string;
  shipping: string;
  discounts: string;
  aov: string | null;
  product_lines: number;
  priced_lines: number;
  coverage: string | null;
  cogs: string | null;
  company_costs: string;
}

/**
 * Sums of the rollup days of a period plus the company costs prorated by the days of each month inside it. COGS are
 * the known purchase costs scaled to the goods revenue of the lines without a price (their share is `cogsCoverage`).
 */
export async function periodFigures(db: Db, shopId: string, period: Period): Promise<SummaryRow> {
  const r = await db.raw(`
    with d as (
      select coalesce(sum(orders_count), 0)::int as orders, coalesce(sum(cancelled_count), 0)::int as cancelled,
             coalesce(sum(revenue_with_vat_eur), 0) as rwv, coalesce(sum(revenue_without_vat_eur), 0) as rwov, coalesce(sum(vat_eur), 0) as vat,
             coalesce(sum(shipping_with_vat_eur), 0) as shipping, coalesce(sum(discount_with_vat_eur), 0) as discounts,
             coalesce(sum(product_lines), 0)::int as product_lines, coalesce(sum(priced_lines), 0)::int as priced_lines,
             coalesce(sum(cogs_eur), 0) as cogs_known, coalesce(sum(product_revenue_without_vat_eur), 0) as goods,
             coalesce(sum(priced_revenue_without_vat_eur), 0) as priced_goods
      from order_daily_rollups where shop_id = :shop and day between :from::date and :to::date
    ),
    c as (
      select coalesce(sum(amount * eur_rate
               * ((least((month + interval '1 month')::date - 1, :to::date) - greatest(month, :from::date) + 1)::numeric
               / ((month + interval '1 month')::date - month))), 0) as costs
      from company_costs where shop_id = :shop and month <= :to::date and (month + interval '1 month')::date > :from::date
    )
    select d.orders, d.cancelled, round(d.rwv, 2)::text as revenue_with_vat, round(d.rwov, 2)::text as revenue_without_vat,
           round(d.vat, 2)::text as vat, round(d.shipping, 2)::text as shipping, round(d.discounts, 2)::text as discounts,
           case when d.orders > 0 then round(d.rwv / d.orders, 2)::text end as aov,
           d.product_lines, d.priced_lines,
           case when d.product_lines > 0 then round(d.priced_lines::numeric / d.product_lines, 4)::text end as coverage,
           case when d.product_lines > 0 and d.priced_lines::numeric / d.product_lines >= :min and d.priced_goods > 0
                then round(d.cogs_known * d.goods / d.priced_goods, 2)::text
                when d.product_lines = 0 then '0.00' end as cogs,
           round(c.costs, 2)::text as company_costs
    from d, c`, { shop: shopId, from: period.from, to: period.to, min: COGS_COVERAGE_MIN });
  return r.rows[0];
}

const minus = (a: string, ...b: string[]) => {
  const cents = (x: string) => BigInt(x.replace('.', '').replace(/^(-?)0+(?=\d)/, '$1'));
  const total = b.reduce((n, x) => n - cents(x), cents(a));
  const negative = total < 0n;
  const abs = negative ? -total : total;
  return `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
};

/** Margin in percent with 2 decimals (half away from zero), or null without revenue. */
function marginPercent(profit: string, revenue: string): number | null {
  const r = Number(revenue);
  if (r === 0) return null;
  const value = (Number(profit) / r) * 100;
  return Math.sign(value) * Math.round(Math.abs(value) * 100) / 100;
}

/** The financial summary of a period; purchase-price fields are removed by the capability without their scope. */
export async function financialSummary(db: Db, shopId: string, period: Period) {
  const f = await periodFigures(db, shopId, period);
  const known = f.cogs !== null;
  const grossProfit = known ? minus(f.revenue_without_vat, f.cogs!) : null;
  return {
    currency: 'EUR' as const,
    orders: f.orders,
    cancelledOrders: f.cancelled,
    revenueWithVat: eur(f.revenue_with_vat),
    revenueWithoutVat: eur(f.revenue_without_vat),
    vat: eur(f.vat),
    averageOrderValue: f.aov === null ? null : eur(f.aov),
    discounts: eur(f.discounts),
    cogs: known ? eur(f.cogs!) : null,
    cogsCoverage: f.coverage === null ? null : Number(f.coverage),
    productLines: f.product_lines,
    pricedLines: f.priced_lines,
    ...(grossProfit !== null ? {
      grossProfit: eur(grossProfit),
      grossMargin: marginPercent(grossProfit, f.revenue_without_vat),
    } : {}),
    shipping: eur(f.shipping),
    companyCosts: eur(f.company_costs),
    ...(grossProfit !== null ? { resultAfterCosts: eur(minus(grossProfit, f.shipping, f.company_costs)) } : {}),
  };
}

export { minus, marginPercent };
