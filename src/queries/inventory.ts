/** Reads of stock, always within one shop. */
import type { Db } from '../db/knex.js';

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
