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
