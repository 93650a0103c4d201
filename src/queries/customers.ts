/**
 * The customer directory and customer performance, read from the customer rollups (never by adding up orders in
 * Node). A customer is a pseudonym (D22 `customerKey` = the orders' `customerEmailHash`); identity fields come from
 * the customer's latest order in the shop. Every read is within one account and the shops the caller may see (D9).
 */
import type { Db } from '../db/knex.js';
import type { CapabilityContext } from '../capabilities/context.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { AppError } from '../errors.js';
import { money, type Money } from '../money.js';
import { inferGender } from '../customers/gender.js';
import { iso } from './keyset.js';

interface DirectoryRow {
  customer_key: string;
  currency: string;
  orders_count: number;
  cancelled_count: number;
  revenue_with_vat: string;
  first_order_at: Date;
  last_order_at: Date;
  sort_at: Date;
  period_orders?: number;
  customer_first_name: string | null;
  customer_last_name: string | null;
  customer_company: string | null;
  customer_email: string | null;
  customer_phone: string | null;
  customer_country: string | null;
}

interface ShopFigures {
  shop_code: string;
  customer_key: string;
  currency: string;
  orders_count: number;
  cancelled_count: number;
  revenue_with_vat: string;
  first_order_at: Date;
  last_order_at: Date;
}

/** Money per currency (D4, SPEC "Customer records" rule 2), sorted by currency code. */
function byCurrency(entries: Array<{ currency: string; amount: string }>): Money[] {
  const sums = new Map<string, bigint>();
  for (const e of entries) {
    const c = e.currency.trim();
    sums.set(c, (sums.get(c) ?? 0n) + toCents(e.amount));
  }
  return [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, cents]) => money(fromCents(cents), c));
}

function toCents(amount: string): bigint {
  const negative = amount.startsWith('-');
  const [whole, fraction = ''] = amount.replace('-', '').split('.');
  const cents = BigInt(whole) * 100n + BigInt((fraction + '00').slice(0, 2));
  return negative ? -cents : cents;
}

function fromCents(cents: bigint): string {
  const negative = cents < 0n;
  const abs = negative ? -cents : cents;
  return `${negative ? '-' : ''}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

/** Average of a sum over a count per currency, rounded half away from zero to cents. */
function averageOf(total: Money[], counts: Map<string, number>): Money[] {
  return total.flatMap((m) => {
    const n = counts.get(m.currency) ?? 0;
    if (n === 0) return [];
    const cents = toCents(m.amount);
    const sign = cents < 0n ? -1n : 1n;
    const abs = cents < 0n ? -cents : cents;
    return [money(fromCents(sign * ((abs * 2n + BigInt(n)) / (2n * BigInt(n)))), m.currency)];
  });
}

/** The shops of the account the caller may see, by id. */
async function visibleShops(ctx: CapabilityContext): Promise<Map<string, { code: string; language: string }>> {
  const q = ctx.db('shops').select('id', 'code', 'language').where({ account_id: ctx.caller.account.id }).whereNull('removed_at');
  if (ctx.caller.shopCodes) q.whereIn('code', [...ctx.caller.shopCodes]);
  const rows: Array<{ id: string; code: string; language: string }> = await q;
  return new Map(rows.map((r) => [String(r.id), { code: r.code, language: r.language }]));
}

/** Lifetime figures of the given customers in every shop the caller may see. */
async function figuresAcrossShops(db: Db, shopIds: string[], keys: string[]): Promise<ShopFigures[]> {
  if (!keys.length || !shopIds.length) return [];
  return db('customer_rollups as cr').join('shops as s', 's.id', 'cr.shop_id')
    .select('s.code as shop_code', 'cr.customer_key', 'cr.currency', 'cr.orders_count', 'cr.cancelled_count', 'cr.revenue_with_vat', 'cr.first_order_at', 'cr.last_order_at')
    .whereIn('cr.shop_id', shopIds).whereIn('cr.customer_key', keys)
    .orderBy([{ column: 's.code' }, { column: 'cr.currency' }]);
}

export interface DirectoryFilter {
  /** Purchase activity: customers with at least one order in these local days (SPEC rule 3). */
  purchase: Period | null;
  /** Text search: a customerKey prefix, and name/company/e-mail only when the caller may read them (`personal`). */
  search?: { text: string; personal: boolean } | null;
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function toDirectoryEntry(row: DirectoryRow, language: string, across: ShopFigures[], period: { period: Period; orders: number; revenue: Money[] } | null) {
  const shopCurrencyRevenue = byCurrency([{ currency: row.currency, amount: row.revenue_with_vat }]);
  const lifetime = byCurrency(across.map((f) => ({ currency: f.currency, amount: f.revenue_with_vat })));
  const lifetimeCounts = new Map<string, number>();
  for (const f of across) lifetimeCounts.set(f.currency.trim(), (lifetimeCounts.get(f.currency.trim()) ?? 0) + f.orders_count - f.cancelled_count);
  const gender = inferGender(row.customer_first_name, row.customer_company, row.customer_country?.trim() ?? null);
  return {
    customerKey: row.customer_key.trim(),
    shops: [...new Set(across.map((f) => f.shop_code))].sort(),
    country: row.customer_country?.trim() ?? null,
    language: { code: language, source: 'store_locale' as const },
    ordersCount: row.orders_count,
    cancelledOrdersCount: row.cancelled_count,
    firstOrderAt: row.first_order_at.toISOString(),
    lastOrderAt: row.last_order_at.toISOString(),
    firstName: row.customer_first_name,
    lastName: row.customer_last_name,
    company: row.customer_company,
    email: row.customer_email,
    phone: row.customer_phone,
    ...gender,
    revenue: shopCurrencyRevenue,
    averageOrder: averageOf(shopCurrencyRevenue, new Map([[row.currency.trim(), row.orders_count - row.cancelled_count]])),
    lifetimeRevenue: lifetime,
    lifetimeAverageOrder: averageOf(lifetime, lifetimeCounts),
    ...(period ? {
      periodFrom: period.period.from,
      periodTo: period.period.to,
      periodOrdersCount: period.orders,
      periodRevenueByCurrency: period.revenue,
    } : {}),
  };
}

const identityColumns = ['o.customer_first_name', 'o.customer_last_name', 'o.customer_company', 'o.customer_email', 'o.customer_phone', 'o.customer_country'];

/** A page of the shop's directory, newest activity first (within the purchase period when one is given). */
export async function listCustomers(ctx: CapabilityContext, filter: DirectoryFilter, page: PageRequest) {
  const shop = ctx.shop!;
  const db = ctx.db;
  const q = db('customer_rollups as cr').join('orders as o', 'o.id', 'cr.last_order_id')
    .select('cr.customer_key', 'cr.currency', 'cr.orders_count', 'cr.cancelled_count', 'cr.revenue_with_vat', 'cr.first_order_at', 'cr.last_order_at', ...identityColumns)
    .where('cr.shop_id', shop.id);
  if (filter.purchase) {
    const active = db('customer_daily_rollups').select('customer_key').max('last_order_at as period_last').sum('orders_count as period_orders')
      .where({ shop_id: shop.id }).whereBetween('day', [filter.purchase.from, filter.purchase.to]).groupBy('customer_key');
    q.join(active.as('p'), 'p.customer_key', 'cr.customer_key').select('p.period_last as sort_at', 'p.period_orders');
  } else {
    q.select('cr.last_order_at as sort_at');
  }
  if (filter.search) {
    const needle = filter.search.text.toLowerCase();
    const contains = `%${escapeLike(needle)}%`;
    q.where((w) => {
      w.whereRaw('cr.customer_key like ?', [`${escapeLike(needle)}%`]);
      if (filter.search!.personal) {
        w.orWhereRaw(`lower(concat_ws(' ', o.customer_first_name, o.customer_last_name)) like ?`, [contains])
          .orWhereRaw('lower(o.customer_company) like ?', [contains]).orWhereRaw('lower(o.customer_email) like ?', [contains]);
      }
    });
  }
  const sortColumn = filter.purchase ? 'p.period_last' : 'cr.last_order_at';
  if (page.after) q.whereRaw(`(${sortColumn}, cr.customer_key) < (?::timestamptz, ?)`, [page.after.key, page.after.id]);
  const rows: DirectoryRow[] = await q.orderBy([{ column: sortColumn, order: 'desc' }, { column: 'cr.customer_key', order: 'desc' }]).limit(page.limit + 1);
  const hasMore = rows.length > page.limit;
  const kept = hasMore ? rows.slice(0, page.limit) : rows;
  const keys = kept.map((r) => r.customer_key);
  const shops = await visibleShops(ctx);
  const across = await figuresAcrossShops(db, [...shops.keys()], keys);
  const periodRevenue = new Map<string, Money[]>();
  if (filter.purchase && keys.length) {
    const rowsByCurrency: Array<{ customer_key: string; currency: string; revenue: string }> = await db('customer_daily_rollups')
      .select('customer_key', 'currency').sum('revenue_with_vat as revenue')
      .where({ shop_id: shop.id }).whereIn('customer_key', keys).whereBetween('day', [filter.purchase.from, filter.purchase.to])
      .groupBy('customer_key', 'currency');
    for (const r of rowsByCurrency) {
      periodRevenue.set(r.customer_key, byCurrency([...(periodRevenue.get(r.customer_key) ?? []), { currency: r.currency, amount: r.revenue }]));
    }
  }
  const language = shops.get(shop.id)?.language ?? '';
  const items = kept.map((r) => toDirectoryEntry(r, language, across.filter((f) => f.customer_key === r.customer_key),
    filter.purchase ? { period: filter.purchase, orders: Number(r.period_orders), revenue: periodRevenue.get(r.customer_key) ?? [] } : null));
  const lastRow = kept[kept.length - 1];
  return { items, hasMore, last: lastRow ? { key: lastRow.sort_at.toISOString(), id: lastRow.customer_key } : null };
}

/** One directory customer of the shop with the per-shop breakdown over the shops the caller may see. */
export async function getCustomer(ctx: CapabilityContext, customerKey: string) {
  const shop = ctx.shop!;
  const row: DirectoryRow | undefined = await ctx.db('customer_rollups as cr').join('orders as o', 'o.id', 'cr.last_order_id')
    .select('cr.customer_key', 'cr.currency', 'cr.orders_count', 'cr.cancelled_count', 'cr.revenue_with_vat', 'cr.first_order_at', 'cr.last_order_at', 'cr.last_order_at as sort_at', ...identityColumns)
    .where({ 'cr.shop_id': shop.id, 'cr.customer_key': customerKey }).first();
  if (!row) throw new AppError('NOT_FOUND', `No customer \`${customerKey}\` in shop \`${shop.code}\`.`, { param: 'customerKey' });
  const shops = await visibleShops(ctx);
  const across = await figuresAcrossShops(ctx.db, [...shops.keys()], [customerKey]);
  return {
    ...toDirectoryEntry(row, shops.get(shop.id)?.language ?? '', across, null),
    perShop: across.map((f) => {
      const revenue = byCurrency([{ currency: f.currency, amount: f.revenue_with_vat }]);
      return {
        market: f.shop_code,
        currency: f.currency.trim(),
        ordersCount: f.orders_count,
        cancelledOrdersCount: f.cancelled_count,
        firstOrderAt: f.first_order_at.toISOString(),
        lastOrderAt: f.last_order_at.toISOString(),
        revenue,
        averageOrder: averageOf(revenue, new Map([[f.currency.trim(), f.orders_count - f.cancelled_count]])),
      };
    }),
  };
}

export { byCurrency, averageOf, iso };
