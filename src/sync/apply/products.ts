/**
 * Products area: categories and products as the platform has them now, upserted by their shop keys (category guid,
 * product code); a re-read of unchanged records writes nothing. SPEC names no catalogue event (a price change emits
 * nothing), so the area announces nothing.
 */
import type { Knex } from 'knex';
import type { AreaRecords, PlatformCategory, PlatformProduct } from '../../platforms/types.js';
import { formatMinor } from '../../records/money.js';
import type { SyncShop } from '../shops.js';

const CATEGORY_COLUMNS = ['name', 'parent_guid', 'position', 'url', 'created_at', 'updated_at'];
const PRODUCT_COLUMNS = ['name', 'ean', 'plu', 'category_guid', 'currency', 'price_with_vat', 'vat_rate', 'purchase_price', 'active', 'url', 'created_at', 'updated_at'];

function categoryRow(shopId: string, c: PlatformCategory) {
  return { shop_id: shopId, guid: c.guid, name: c.name, parent_guid: c.parentGuid, position: c.position, url: c.url ?? null, created_at: c.createdAt, updated_at: c.updatedAt };
}

function productRow(shopId: string, p: PlatformProduct) {
  return {
    shop_id: shopId, code: p.code, name: p.name, ean: p.ean || null, plu: p.plu, category_guid: p.categoryGuid || null, currency: p.currency,
    price_with_vat: formatMinor(p.priceWithVatMinor), vat_rate: p.vatRate.toFixed(2),
    purchase_price: p.purchasePriceMinor === null ? null : formatMinor(p.purchasePriceMinor), active: p.active, url: p.url ?? null,
    created_at: p.createdAt, updated_at: p.updatedAt,
  };
}

/** Insert, or update only when a column differs (`is distinct from`), counting the rows really written. */
async function upsert(trx: Knex.Transaction, table: string, key: string[], columns: string[], rows: Array<Record<string, unknown>>): Promise<number> {
  if (!rows.length) return 0;
  const changed = columns.map((c) => `${table}.${c} is distinct from excluded.${c}`).join(' or ');
  const result = await trx(table).insert(rows).onConflict(key).merge(columns).whereRaw(changed).returning('id');
  return result.length;
}

export async function applyProducts(trx: Knex.Transaction, shop: SyncShop, records: Array<AreaRecords['products']>): Promise<number> {
  // The last record of a key wins (a batch may read the same product twice: once by itself, once by a variant).
  const categories = new Map(records.flatMap((r) => (r.kind === 'category' ? [[r.category.guid, categoryRow(shop.id, r.category)] as const] : [])));
  const products = new Map(records.flatMap((r) => (r.kind === 'product' ? [[r.product.code, productRow(shop.id, r.product)] as const] : [])));
  return (await upsert(trx, 'categories', ['shop_id', 'guid'], CATEGORY_COLUMNS, [...categories.values()]))
    + (await upsert(trx, 'products', ['shop_id', 'code'], PRODUCT_COLUMNS, [...products.values()]));
}
