/** Reads of stock, always within one shop. */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { keysetPage, toPage, wherePeriod } from './keyset.js';

const decimal = (v: string | null) => v;

/** One stock item of a shop by its code (with the product's name when the catalogue has it), or null. */
export async function getStockItem(db: Db, shopId: string, code: string) {
  const row = await db('stock_items as i')
    .leftJoin('products as p', (j) => j.on('p.shop_id', 'i.shop_id').andOn('p.code', 'i.code'))
    .where({ 'i.shop_id': shopId, 'i.code': code })
    .first('i.code', 'i.sku', 'p.name', 'i.source', 'i.quantity', 'i.physical', 'i.reserved', 'i.available', 'i.updated_at');
  if (!row) return null;
  return {
    code: row.code as string,
    sku: row.sku as string,
    name: (row.name ?? null) as string | null,
    quantity: row.quantity as string,
    source: row.source as 'balance' | 'product_card' | 'variants',
    physical: decimal(row.physical),
    available: decimal(row.available),
    reserved: decimal(row.reserved),
    updatedAt: (row.updated_at as Date).toISOString(),
  };
}

/** Stock of several items of a shop at once; codes that do not exist are returned apart, not as an error. */
export async function getStockItems(db: Db, shopId: string, codes: string[]) {
  const rows = await db('stock_items as i')
    .leftJoin('products as p', (j) => j.on('p.shop_id', 'i.shop_id').andOn('p.code', 'i.code'))
    .where('i.shop_id', shopId).whereIn('i.code', codes)
    .select('i.code', 'i.sku', 'p.name', 'i.source', 'i.quantity', 'i.physical', 'i.reserved', 'i.available', 'i.updated_at');
  const byCode = new Map(rows.map((row) => [row.code as string, {
    code: row.code as string,
    sku: row.sku as string,
    name: (row.name ?? null) as string | null,
    quantity: row.quantity as string,
    source: row.source as 'balance' | 'product_card' | 'variants',
    physical: decimal(row.physical),
    available: decimal(row.available),
    reserved: decimal(row.reserved),
    updatedAt: (row.updated_at as Date).toISOString(),
  }]));
  // In the order asked, each code once.
  const unique = [...new Set(codes)];
  return { items: unique.flatMap((c) => byCode.get(c) ?? []), notFound: unique.filter((c) => !byCode.has(c)) };
}

export type MovementOrigin = 'order' | 'claim' | 'purchase';

export interface MovementFilters {
  code?: string;
  kind?: string;
  origin?: MovementOrigin;
  orderCode?: string;
}

/** A page of a shop's stock movements, newest first, optionally within a period and filtered. */
export async function listMovements(db: Db, shopId: string, filters: MovementFilters, period: Period | null, page: PageRequest) {
  const q = db('stock_movements as m')
    .leftJoin('products as p', (j) => j.on('p.shop_id', 'm.shop_id').andOn('p.code', 'm.item_code'))
    .where('m.shop_id', shopId)
    .select('m.id', 'm.movement_id', 'm.item_code', 'p.name', 'm.kind', 'm.quantity', 'm.occurred_at', 'm.order_code', 'm.claim_code');
  if (filters.code !== undefined) q.where('m.item_code', filters.code);
  if (filters.kind !== undefined) q.where('m.kind', filters.kind);
  if (filters.orderCode !== undefined) q.where('m.order_code', filters.orderCode);
  if (filters.origin === 'claim') q.whereNotNull('m.claim_code');
  if (filters.origin === 'order') q.whereNotNull('m.order_code').whereNull('m.claim_code');
  if (filters.origin === 'purchase') q.whereNull('m.order_code').whereNull('m.claim_code');
  wherePeriod(q, 'm.occurred_at', period);
  const rows: Array<Record<string, any> & { id: string; occurred_at: Date }> = await keysetPage(q, 'm.occurred_at', 'm.id', page);
  const result = toPage(rows, page, (r) => r.occurred_at, (r) => ({
    movementId: r.movement_id as string,
    itemCode: r.item_code as string,
    name: (r.name ?? null) as string | null,
    kind: r.kind as 'receipt' | 'sale' | 'return',
    quantity: r.quantity as string,
    occurredAt: r.occurred_at.toISOString(),
    origin: (r.claim_code ? 'claim' : r.order_code ? 'order' : 'purchase') as MovementOrigin,
    orderCode: r.order_code as string | null,
    claimCode: r.claim_code as string | null,
  }));
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}
