/**
 * Sales: revenue per order in EUR with whole-period totals (from the rollups), and sales per product from invoices
 * and credit notes of a period, with purchase cost at document time from matching the lines with the catalogue.
 */
import type { CapabilityContext } from '../capabilities/context.js';
import { cursorFingerprint, encodeCursor, type KeysetPosition } from '../capabilities/cursor.js';
import { LIST_LIMIT } from '../capabilities/params.js';
import type { Period } from '../capabilities/period.js';
import { AppError } from '../errors.js';
import { money } from '../money.js';
import { CANCELLED_STATUS_ID } from '../rollups/orders.js';
import { financialSummary, marginPercent, minus } from './reports.js';

const eur = (amount: string) => money(amount, 'EUR');

export function checkLimit(limit: number | undefined): number {
  const value = limit ?? LIST_LIMIT.default;
  if (value < 1 || value > LIST_LIMIT.max) {
    throw new AppError('LIMIT_OUT_OF_RANGE', `\`limit\` must be between 1 and ${LIST_LIMIT.max}; got ${value}.`, { param: 'limit', min: 1, max: LIST_LIMIT.max });
  }
  return value;
}

interface OrderRow {
  id: string;
  code: string;
  created_at: Date;
  status_name: string;
  currency: string;
  total_with_vat: string;
  eur_rate: string;
  revenue_with_vat_eur: string;
  revenue_without_vat_eur: string;
  cost_eur: string | null;
}

/** A page of the period's orders (newest first) with EUR figures, and the totals of the whole period. */
export async function orderPerformance(ctx: CapabilityContext, name: string, period: Period, params: Record<string, unknown>, after: KeysetPosition | null) {
  const { cursor: _cursor, limit: limitParam, ...bound } = params as { cursor?: string; limit?: number };
  const limit = checkLimit(limitParam);
  const db = ctx.db;
  const shopId = ctx.shop!.id;
  const fingerprint = cursorFingerprint({ capability: name, account: ctx.caller.account.id, shopId, ...bound });
  const q = db('orders as o')
    .select('o.id', 'o.code', 'o.created_at', 'o.status_name', 'o.currency', 'o.total_with_vat', 'o.eur_rate',
      db.raw('round(o.total_with_vat * o.eur_rate, 2)::text as revenue_with_vat_eur'),
      db.raw('round(o.total_without_vat * o.eur_rate, 2)::text as revenue_without_vat_eur'),
      // Cost only when every product line has a purchase price; otherwise unknown, never a partial cost.
      db.raw(`(select case when bool_and(i.purchase_price_without_vat is not null) then round(coalesce(sum(i.quantity * i.purchase_price_without_vat), 0) * o.eur_rate, 2)::text end
               from order_items i where i.order_id = o.id and i.kind = 'product') as cost_eur`))
    .where('o.shop_id', shopId).whereNot('o.status_id', CANCELLED_STATUS_ID)
    .whereRaw('o.created_at >= (?::date)::timestamp at time zone ?', [period.from, period.timeZone])
    .whereRaw('o.created_at < ((?::date) + 1)::timestamp at time zone ?', [period.to, period.timeZone])
    .orderBy([{ column: 'o.created_at', order: 'desc' }, { column: 'o.id', order: 'desc' }])
    .limit(limit + 1);
  if (after) q.whereRaw('(o.created_at, o.id) < (?::timestamptz, ?::bigint)', [after.key, after.id]);
  const [rows, totals] = await Promise.all([q as unknown as Promise<OrderRow[]>, financialSummary(db, shopId, period)]);
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  const nextCursor = hasMore && last ? encodeCursor({ key: last.created_at.toISOString(), id: String(last.id) }, period, fingerprint, ctx.cursorSecret) : null;
  return {
    orders: kept.map((r) => {
      const profit = r.cost_eur === null ? null : minus(r.revenue_without_vat_eur, r.cost_eur);
      return {
        orderCode: r.code,
        createdAt: r.created_at.toISOString(),
        status: r.status_name,
        totalWithVat: money(r.total_with_vat, r.currency),
        eurRate: Number(r.eur_rate),
        revenueWithVat: eur(r.revenue_with_vat_eur),
        revenueWithoutVat: eur(r.revenue_without_vat_eur),
        cost: r.cost_eur === null ? null : eur(r.cost_eur),
        profit: profit === null ? null : eur(profit),
        margin: profit === null ? null : marginPercent(profit, r.revenue_without_vat_eur),
      };
    }),
    totals: {
      orders: totals.orders,
      revenueWithVat: totals.revenueWithVat,
      revenueWithoutVat: totals.revenueWithoutVat,
      averageOrderValue: totals.averageOrderValue,
      cogs: totals.cogs,
      cogsCoverage: totals.cogsCoverage,
      ...(totals.grossProfit ? { grossProfit: totals.grossProfit, grossMargin: totals.grossMargin } : {}),
    },
    hasMore: nextCursor !== null,
    nextCursor,
  };
}

interface ProductRow {
  product_code: string;
  mapped: boolean;
  name: string;
  quantity: string;
  revenue_without_vat: string;
  revenue_with_vat: string;
  cost: string | null;
  lines: number;
  credited_lines: number;
}

/** Sales per product of a period (business days of invoices and credit notes), highest revenue first, with totals. */
export async function productPerformance(ctx: CapabilityContext, name: string, period: Period, params: Record<string, unknown>, after: KeysetPosition | null) {
  const { cursor: _cursor, limit: limitParam, ...bound } = params as { cursor?: string; limit?: number };
  const limit = checkLimit(limitParam);
  const db = ctx.db;
  const shopId = ctx.shop!.id;
  const fingerprint = cursorFingerprint({ capability: name, account: ctx.caller.account.id, shopId, ...bound });
  const grouped = db('product_daily_rollups').where({ shop_id: shopId }).whereBetween('day', [period.from, period.to]).groupBy('product_code')
    .select('product_code', db.raw('bool_and(mapped) as mapped'), db.raw('max(name) as name'), db.raw('sum(quantity)::text as quantity'),
      db.raw('round(sum(revenue_without_vat_eur), 2) as revenue_without_vat'), db.raw('round(sum(revenue_with_vat_eur), 2)::text as revenue_with_vat'),
      // A product's cost only when every one of its lines has a purchase price: never a partial cost, never a wrong margin.
      db.raw('case when sum(costed_lines) = sum(lines) then round(sum(cost_eur), 2)::text end as cost'),
      db.raw('sum(lines)::int as lines'), db.raw('sum(credited_lines)::int as credited_lines'));
  const page = db.with('g', grouped).from('g').select('*', db.raw('revenue_without_vat::text as revenue_without_vat'))
    .orderBy([{ column: 'g.revenue_without_vat', order: 'desc' }, { column: 'g.product_code', order: 'asc' }]).limit(limit + 1);
  if (after) page.whereRaw('(g.revenue_without_vat < ?::numeric or (g.revenue_without_vat = ?::numeric and g.product_code > ?))', [after.key, after.key, after.id]);
  const totalsQuery = db.with('g', grouped).from('g').first(
    db.raw('count(*)::int as products'), db.raw('coalesce(sum(quantity::numeric), 0)::text as quantity'),
    db.raw('coalesce(sum(revenue_without_vat), 0)::text as revenue_without_vat'), db.raw('coalesce(sum(revenue_with_vat::numeric), 0)::text as revenue_with_vat'),
    db.raw('coalesce(sum(cost::numeric), 0)::text as cost'), db.raw('coalesce(sum(revenue_without_vat) filter (where cost is not null), 0)::text as costed_revenue'),
    db.raw('coalesce(sum(lines), 0)::int as lines'), db.raw('coalesce(sum(lines) filter (where not mapped), 0)::int as unmapped_lines'),
    db.raw('count(*) filter (where cost is null)::int as products_without_cost'));
  const [rows, totals] = await Promise.all([page as unknown as Promise<ProductRow[]>, totalsQuery as unknown as Promise<Record<string, string | number>>]);
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  const nextCursor = hasMore && last ? encodeCursor({ key: last.revenue_without_vat, id: last.product_code }, period, fingerprint, ctx.cursorSecret) : null;
  const costedMargin = minus(String(totals.costed_revenue), String(totals.cost));
  return {
    products: kept.map((r) => {
      const margin = r.cost === null ? null : minus(r.revenue_without_vat, r.cost);
      return {
        productCode: r.product_code,
        name: r.name,
        mapped: r.mapped,
        quantity: r.quantity,
        revenueWithoutVat: eur(r.revenue_without_vat),
        revenueWithVat: eur(r.revenue_with_vat),
        lines: r.lines,
        creditedLines: r.credited_lines,
        purchaseCostWithoutVat: r.cost === null ? null : eur(r.cost),
        marginWithoutVat: margin === null ? null : eur(margin),
        marginPercent: margin === null ? null : marginPercent(margin, r.revenue_without_vat),
      };
    }),
    totals: {
      products: Number(totals.products),
      quantity: String(totals.quantity),
      revenueWithoutVat: eur(String(totals.revenue_without_vat)),
      revenueWithVat: eur(String(totals.revenue_with_vat)),
      lines: Number(totals.lines),
      unmappedLines: Number(totals.unmapped_lines),
      productsWithoutCost: Number(totals.products_without_cost),
      purchaseCostWithoutVat: eur(String(totals.cost)),
      costedRevenueWithoutVat: eur(String(totals.costed_revenue)),
      marginWithoutVat: eur(costedMargin),
      marginPercent: marginPercent(costedMargin, String(totals.costed_revenue)),
    },
    unmappedLines: Number(totals.unmapped_lines),
    hasMore: nextCursor !== null,
    nextCursor,
  };
}
