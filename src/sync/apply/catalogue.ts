/**
 * The catalogue area: the platform's content capabilities, the availability dictionary, product and category texts
 * (with each product's availability), content pages and blog articles. Every statement writes only what differs, so
 * a re-read of unchanged content writes nothing. Texts changed in the shop's own panel are not content-change events
 * (SPEC "Content-change events"): the sync announces nothing here. The demo loader writes its history end with the
 * same statements over its own connection.
 */
import type { Knex } from 'knex';
import type { CatalogueRecord } from '../../platforms/types.js';
import { articleRow, availabilityRow, categoryTextsRow, contentCapabilitiesRow, productTextsRow, type Row } from '../rows.js';
import type { SyncShop } from '../shops.js';

/** Runs one statement with `$n` placeholders (each used once, in order) and returns the rows it affected. */
export type Exec = (sql: string, bindings: unknown[]) => Promise<number>;

const json = (rows: Row[]) => JSON.stringify(rows);
const distinct = (alias: string, columns: string[], other: string) =>
  `(${columns.map((c) => `${alias}.${c}`).join(', ')}) is distinct from (${columns.map((c) => `${other}.${c}`).join(', ')})`;

const CAPABILITY_COLUMNS = ['product_fields', 'category_fields', 'availability_manageable', 'availability_reason'];
const AVAILABILITY_COLUMNS = ['name', 'description', 'on_stock_hours', 'delivery_hours', 'meaning', 'color', 'system', 'default_roles', 'pairing_rows', 'position'];
const PRODUCT_COLUMNS = ['availability_id', 'description', 'short_description', 'meta_title', 'meta_description', 'content_updated_at'];
const CATEGORY_COLUMNS = ['description', 'description_bottom', 'meta_title', 'meta_description', 'content_updated_at'];
const ARTICLE_COLUMNS = ['kind', 'title', 'text', 'url', 'preview_image_url', 'published_at', 'updated_at'];

/** An upsert from a JSON batch that changes a stored row only when a column differs. */
function upsert(table: string, key: string[], columns: string[], stamp: boolean): string {
  const all = [...key, ...columns];
  const insertColumns = stamp ? [...all, 'updated_at'] : all;
  const values = stamp ? [...all.map((c) => `x.${c}`), 'now()'] : all.map((c) => `x.${c}`);
  return `insert into ${table} (${insertColumns.join(', ')}) select ${values.join(', ')} from jsonb_populate_recordset(null::${table}, $1::jsonb) x
    on conflict (${key.join(', ')}) do update set ${[...columns, ...(stamp ? ['updated_at'] : [])].map((c) => `${c} = ${c === 'updated_at' && stamp ? 'now()' : `excluded.${c}`}`).join(', ')}
    where ${distinct(table, columns, 'excluded')}`;
}

/** Writes catalogue records of one shop; returns the rows changed. */
export async function writeCatalogueRecords(exec: Exec, shopId: string, records: CatalogueRecord[]): Promise<number> {
  const of = <K extends CatalogueRecord['kind']>(kind: K) => records.filter((r): r is Extract<CatalogueRecord, { kind: K }> => r.kind === kind);
  let written = 0;
  const capabilities = of('capabilities').map((r) => contentCapabilitiesRow(shopId, r.capabilities));
  if (capabilities.length) written += await exec(upsert('shop_content_capabilities', ['shop_id'], CAPABILITY_COLUMNS, true), [json(capabilities)]);
  const availabilities = of('availability').map((r) => availabilityRow(shopId, r.availability));
  if (availabilities.length) written += await exec(upsert('availabilities', ['shop_id', 'availability_id'], AVAILABILITY_COLUMNS, true), [json(availabilities)]);
  const categories = of('category').map((r) => categoryTextsRow(r.category));
  if (categories.length) {
    written += await exec(`update categories c set ${CATEGORY_COLUMNS.map((col) => `${col} = x.${col}`).join(', ')}
      from jsonb_populate_recordset(null::categories, $1::jsonb) x where c.shop_id = $2 and c.guid = x.guid and ${distinct('c', CATEGORY_COLUMNS, 'x')}`, [json(categories), shopId]);
  }
  const products = of('product').map((r) => productTextsRow(r.product));
  if (products.length) {
    written += await exec(`update products p set ${PRODUCT_COLUMNS.map((col) => `${col} = x.${col}`).join(', ')}
      from jsonb_populate_recordset(null::products, $1::jsonb) x where p.shop_id = $2 and p.code = x.code and ${distinct('p', PRODUCT_COLUMNS, 'x')}`, [json(products), shopId]);
  }
  const articles = of('article').map((r) => articleRow(shopId, r.article));
  if (articles.length) written += await exec(upsert('content_articles', ['shop_id', 'article_id'], ARTICLE_COLUMNS, false), [json(articles)]);
  return written;
}

/** Runs `$n` statements on a knex transaction. */
export function knexExec(trx: Knex | Knex.Transaction): Exec {
  return async (sql, bindings) => (await trx.raw(sql.replace(/\$\d+/g, '?'), bindings as Knex.RawBinding[])).rowCount ?? 0;
}

export async function applyCatalogue(trx: Knex.Transaction, shop: SyncShop, records: CatalogueRecord[]): Promise<number> {
  return writeCatalogueRecords(knexExec(trx), shop.id, records);
}
