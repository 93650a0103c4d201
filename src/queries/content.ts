/** Reads of a shop's catalogue content: texts with hashes and writability, the availability dictionary, the platform's content capabilities, articles. */
import type { Db } from '../db/knex.js';
import { fieldHash, fingerprint } from '../content/hash.js';

export const PRODUCT_FIELDS = [
  ['description', 'description'], ['shortDescription', 'short_description'], ['metaTitle', 'meta_title'], ['metaDescription', 'meta_description'],
] as const;
export const CATEGORY_FIELDS = [
  ['description', 'description'], ['descriptionBottom', 'description_bottom'], ['metaTitle', 'meta_title'], ['metaDescription', 'meta_description'],
] as const;

export interface ContentCapabilities {
  productFields: string[];
  categoryFields: string[];
  availabilityManageable: boolean;
  availabilityReason: 'PLATFORMA' | 'BEZ_ROZSIRENIA' | 'PROSTREDIE' | null;
}

/** What the shop's platform lets the service write, as last synced; nothing writable before the first sync. */
export async function getContentCapabilities(db: Db, shopId: string): Promise<ContentCapabilities> {
  const row = await db('shop_content_capabilities').where({ shop_id: shopId }).first();
  if (!row) return { productFields: [], categoryFields: [], availabilityManageable: false, availabilityReason: 'PLATFORMA' };
  return { productFields: row.product_fields, categoryFields: row.category_fields, availabilityManageable: row.availability_manageable, availabilityReason: row.availability_reason };
}

export interface TextField {
  value: string | null;
  hash: string;
  writable: boolean;
}

function texts<F extends string>(row: Record<string, any>, fields: ReadonlyArray<readonly [F, string]>, writable: string[]) {
  return {
    fingerprint: fingerprint(fields.map(([name, column]) => [name, row[column] ?? null] as const)),
    fields: Object.fromEntries(fields.map(([name, column]) => [name, { value: (row[column] ?? null) as string | null, hash: fieldHash(row[column]), writable: writable.includes(name) }])) as Record<F, TextField>,
  };
}

/** A product's texts with a hash per field, the fingerprint and per-field writability; null when the shop has no such product. */
export async function getProductContent(db: Db, shopId: string, code: string) {
  const row = await db('products').where({ shop_id: shopId, code }).first('code', 'name', 'availability_id', 'content_updated_at', ...PRODUCT_FIELDS.map(([, c]) => c));
  if (!row) return null;
  const capabilities = await getContentCapabilities(db, shopId);
  return {
    code: row.code as string, name: row.name as string, availabilityId: row.availability_id as string | null,
    updatedAt: row.content_updated_at ? (row.content_updated_at as Date).toISOString() : null, ...texts(row, PRODUCT_FIELDS, capabilities.productFields),
  };
}

/** A category's texts, as getProductContent. */
export async function getCategoryContent(db: Db, shopId: string, guid: string) {
  const row = await db('categories').where({ shop_id: shopId, guid }).first('guid', 'name', 'content_updated_at', ...CATEGORY_FIELDS.map(([, c]) => c));
  if (!row) return null;
  const capabilities = await getContentCapabilities(db, shopId);
  return {
    guid: row.guid as string, name: row.name as string,
    updatedAt: row.content_updated_at ? (row.content_updated_at as Date).toISOString() : null, ...texts(row, CATEGORY_FIELDS, capabilities.categoryFields),
  };
}

/** The shop's availability dictionary in its display order. */
export async function listAvailabilities(db: Db, shopId: string) {
  const rows = await db('availabilities').where({ shop_id: shopId }).orderBy([{ column: 'position' }, { column: 'availability_id' }]);
  return rows.map((r) => ({
    id: r.availability_id as string, name: r.name as string, description: r.description as string | null, onStockHours: r.on_stock_hours as number | null,
    deliveryHours: r.delivery_hours as number | null, meaning: r.meaning as 'in_stock' | 'backorder' | 'preorder' | 'out_of_stock', color: r.color as string | null,
    system: r.system as boolean, defaultRoles: r.default_roles as string[], pairingRows: r.pairing_rows as number,
  }));
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Articles and content pages: with `text`, those whose title or text contains it, most similar first (trigram index); otherwise newest first. */
export async function searchArticles(db: Db, shopId: string, text: string | undefined, kind: 'article' | 'page' | undefined, limit: number) {
  const q = db('content_articles').where({ shop_id: shopId })
    .select('article_id', 'kind', 'title', 'text', 'url', 'preview_image_url', 'published_at', 'updated_at');
  if (kind) q.where({ kind });
  if (text !== undefined) {
    const needle = text.toLowerCase();
    q.whereRaw('search like ?', [`%${escapeLike(needle)}%`])
      .orderByRaw('(lower(title) like ?) desc, similarity(search, ?) desc', [`%${escapeLike(needle)}%`, needle]);
  }
  const rows = await q.orderBy([{ column: 'published_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit);
  return rows.map((r) => ({
    id: r.article_id as string, kind: r.kind as 'article' | 'page', title: r.title as string, text: r.text as string, url: r.url as string,
    previewImageUrl: r.preview_image_url as string | null, publishedAt: r.published_at ? (r.published_at as Date).toISOString() : null,
    updatedAt: (r.updated_at as Date).toISOString(),
  }));
}
