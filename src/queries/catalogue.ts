/** Reads of a shop's catalogue: products (listing, search, one) and categories with product counts. */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { money } from '../money.js';
import { keysetPage, toPage, wherePeriod } from './keyset.js';

const productColumns = ['p.id', 'p.code', 'p.name', 'p.ean', 'p.plu', 'p.category_guid', 'c.name as category_name', 'p.currency', 'p.price_with_vat', 'p.vat_rate', 'p.purchase_price', 'p.active', 'p.created_at', 'p.updated_at'];

type ProductRow = Record<string, any> & { id: string; created_at: Date };

function toProduct(row: ProductRow) {
  const currency = row.currency.trim();
  return {
    code: row.code,
    name: row.name,
    ean: row.ean,
    plu: row.plu,
    category: row.category_guid ? { guid: row.category_guid, name: row.category_name ?? null } : null,
    priceWithVat: money(row.price_with_vat, currency),
    vatRate: row.vat_rate,
    purchasePrice: row.purchase_price === null ? null : money(row.purchase_price, currency),
    active: row.active,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function productQuery(db: Db, shopId: string) {
  return db('products as p')
    .leftJoin('categories as c', (j) => j.on('c.shop_id', 'p.shop_id').andOn('c.guid', 'p.category_guid'))
    .select(productColumns).where('p.shop_id', shopId);
}

/** A page of a shop's products, newest first, optionally created within a period. */
export async function listProducts(db: Db, shopId: string, period: Period | null, page: PageRequest) {
  const q = productQuery(db, shopId);
  wherePeriod(q, 'p.created_at', period);
  const rows: ProductRow[] = await keysetPage(q, 'p.created_at', 'p.id', page);
  const result = toPage(rows, page, (r) => r.created_at, toProduct);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/**
 * The product search's SQL: one arm per index, each within the shop — exact code, EAN or PLU (b-tree), then names
 * starting with the text, then names or codes containing it (pg_trgm GIN on lower(name) and lower(code)). Exported so a
 * test can EXPLAIN exactly what runs.
 */
export function searchProductsSql(shopId: string, text: string, limit: number): { sql: string; bindings: Knex.RawBinding[] } {
  const needle = text.toLowerCase();
  const escaped = needle.replace(/[\\%_]/g, (c) => `\\${c}`);
  const arms: Array<[string, Knex.RawBinding[]]> = [
    ['select id, 0 as rank from products where shop_id = ? and lower(code) = ?', [shopId, needle]],
    ['select id, 0 from products where shop_id = ? and ean = ?', [shopId, text]],
    ['select id, 0 from products where shop_id = ? and plu = ?', [shopId, text]],
    ['select id, case when lower(name) like ? then 1 else 2 end from products where lower(name) like ? and shop_id = ?', [`${escaped}%`, `%${escaped}%`, shopId]],
    ['select id, 2 from products where lower(code) like ? and shop_id = ?', [`%${escaped}%`, shopId]],
  ];
  return {
    sql: `select h.id from (${arms.map((a) => a[0]).join(' union all ')}) h join products p on p.id = h.id group by h.id, p.name order by min(h.rank), p.name, h.id limit ?`,
    bindings: [...arms.flatMap((a) => a[1]), limit],
  };
}

/**
 * Search by name, code, EAN or PLU, most relevant first: exact code/EAN/PLU, then name starting with the text,
 * then name or code containing it. At most `limit` records, no pagination (SPEC REST conventions 5).
 */
export async function searchProducts(db: Db, shopId: string, text: string, limit: number) {
  const { sql, bindings } = searchProductsSql(shopId, text, limit);
  const ids: string[] = (await db.raw(sql, bindings)).rows.map((r: { id: string }) => String(r.id));
  if (!ids.length) return [];
  const rows: ProductRow[] = await productQuery(db, shopId).whereIn('p.id', ids);
  const byId = new Map(rows.map((r) => [String(r.id), r]));
  return ids.map((id) => toProduct(byId.get(id)!));
}

export async function getProduct(db: Db, shopId: string, code: string) {
  const row: ProductRow | undefined = await productQuery(db, shopId).where('p.code', code).first();
  return row ? toProduct(row) : null;
}

/** All categories of a shop with the number of products directly in each, in tree order by position. */
export async function listCategories(db: Db, shopId: string) {
  const rows = await db('categories as c')
    .select('c.guid', 'c.name', 'c.parent_guid', 'c.position', db.raw('count(p.id)::int as products_count'))
    .leftJoin('products as p', (j) => j.on('p.shop_id', 'c.shop_id').andOn('p.category_guid', 'c.guid'))
    .where('c.shop_id', shopId)
    .groupBy('c.id')
    .orderBy([{ column: 'c.position' }, { column: 'c.name' }, { column: 'c.guid' }]);
  return rows.map((r) => ({ guid: r.guid, name: r.name, parentGuid: r.parent_guid, position: r.position, productsCount: r.products_count }));
}
