/**
 * A person's own writes of product and category texts in the application (issue 25.4, SPEC "Content-change events"):
 * the product card, the bulk edit, the import and the category screen all end in `writeTextBatch`. Each entry is
 * checked like a proposal (writable field, length, optionally the fingerprint it was read with), written through the
 * shop's platform adapter, stored as the shop kept it and, when a field really changed, one event with `source: ui` —
 * a product's carrying the batch id as `source_run_id`, a category's none (SPEC). Who may: the permission `texts:edit`.
 */
import crypto from 'node:crypto';
import type { Db } from '../db/knex.js';
import { AppError, toAppError, type ErrorCode } from '../errors.js';
import { logger } from '../logger.js';
import { hasPermission, type Person } from '../people/model.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import { platformUnsupported } from '../platforms/unsupported.js';
import { prepareTextItems, type TextEntry } from '../proposals/create.js';
import { recordContentWrite } from '../proposals/contentWrites.js';
import type { TextField } from '../proposals/model.js';
import type { ShopRef } from '../capabilities/context.js';
import { findShopByCode } from '../queries/shops.js';
import { getSyncShop } from '../sync/shops.js';

export type TextEntity = 'product' | 'category';
export type BatchKind = 'card' | 'bulk' | 'import';

/** Whether the person may write texts directly (UT1); everyone else reads them. */
export function mayEditTexts(person: Person): boolean {
  return hasPermission(person, 'texts:edit');
}

export function requireTextEditor(person: Person): void {
  if (!mayEditTexts(person)) throw new AppError('INSUFFICIENT_SCOPE', 'You do not have the permission to edit texts.', { permission: 'texts:edit' });
}

/** The shop of a code, if the person may see it (account and shops checked). */
export async function shopOfPerson(db: Db, person: Person, shopCode: string): Promise<ShopRef> {
  if (person.shopCodes && !person.shopCodes.has(shopCode)) throw new AppError('SHOP_FORBIDDEN', `You may not see shop ${shopCode}.`, { market: shopCode });
  const shop = await findShopByCode(db, person.accountId, shopCode);
  if (!shop) throw new AppError('SHOP_NOT_FOUND', `No shop ${shopCode}.`, { market: shopCode });
  return shop;
}

/** A new write-batch id (`wb_…`), the `source_run_id` of the batch's product events. */
export function newBatchId(): string {
  return `wb_${crypto.randomBytes(8).toString('hex')}`;
}

export interface ItemResult {
  id: string;
  status: 'written' | 'unchanged' | 'failed';
  changedFields: string[];
  warnings: string[];
  code?: ErrorCode;
  message?: string;
}

export interface BatchOptions {
  kind: BatchKind;
  /** Refuse an entry whose texts changed since they were read (card, import); a bulk edit sets a field whatever it held. */
  checkFingerprint: boolean;
  /** An import confirms the batch its preview made; other writes get a new id. */
  batchId?: string;
}

/**
 * Writes one shop's texts entry by entry; an entry that fails (stale, not writable, refused by the shop) does not stop
 * the others. The batch and its per-entry results are kept (`text_edit_batches`).
 */
export async function writeTextBatch(
  db: Db, platforms: PlatformRegistry | undefined, person: Person, shop: ShopRef, entity: TextEntity, entries: TextEntry[], options: BatchOptions, now: Date,
): Promise<{ batchId: string; results: ItemResult[] }> {
  requireTextEditor(person);
  if (!platforms) throw new AppError('WRITES_UNAVAILABLE', 'This service instance has no shop platform adapters.');
  const syncShop = await getSyncShop(db, shop.id);
  const adapter = platforms.get(syncShop.platform);
  if (!adapter) throw new AppError('WRITES_UNAVAILABLE', `No adapter for platform ${syncShop.platform}.`);
  const write = entity === 'product' ? 'product_texts' : 'category_texts';
  if (!adapter.capabilities.writes.includes(write)) throw platformUnsupported(syncShop.platform, write, shop.code);
  const batchId = options.batchId ?? newBatchId();
  const results: ItemResult[] = [];
  for (const entry of entries) {
    try {
      const [item] = await prepareTextItems(db, shop, entity, [entry], { checkFingerprint: options.checkFingerprint });
      // Every text equals the current one: nothing is sent to the shop and nothing is emitted.
      if (!item) {
        results.push({ id: entry.id, status: 'unchanged', changedFields: [], warnings: [] });
        continue;
      }
      const texts = item.changes as Record<TextField, string>;
      const kept = entity === 'product' ? await adapter.writeProductTexts(syncShop, entry.id, texts) : await adapter.writeCategoryTexts(syncShop, entry.id, texts);
      const after = Object.fromEntries(Object.keys(texts).map((f) => [f, kept[f as TextField] ?? null])) as Record<TextField, string | null>;
      const warnings = Object.keys(texts).filter((f) => after[f as TextField] !== texts[f as TextField]).map((f) => `The shop changed ${f} on saving (markup removed).`);
      const recorded = await db.transaction((trx) => recordContentWrite(trx, {
        accountId: person.accountId, shop: { id: shop.id, code: shop.code }, entity, entityId: entry.id, before: item.before as Record<TextField, string | null>, after,
        source: 'ui', sourceRunId: entity === 'product' ? batchId : null, writtenBy: `person:${person.id}`, at: now,
      }));
      results.push({ id: entry.id, status: recorded.changedFields.length > 0 ? 'written' : 'unchanged', changedFields: recorded.changedFields, warnings });
    } catch (error) {
      const appError = toAppError(error);
      if (appError.code === 'INTERNAL_ERROR') logger.error({ err: error, batchId, entity, id: entry.id }, 'text write failed');
      results.push({ id: entry.id, status: 'failed', changedFields: [], warnings: [], code: appError.code, message: appError.message });
    }
  }
  const row = { status: 'written', results: JSON.stringify(results), written_at: now };
  if (options.batchId) {
    await db('text_edit_batches').where({ id: batchId, account_id: person.accountId }).update(row);
  } else {
    await db('text_edit_batches').insert({
      id: batchId, account_id: person.accountId, shop_id: shop.id, person_id: person.id, entity, kind: options.kind, items: JSON.stringify([]), created_at: now, ...row,
    });
  }
  return { batchId, results };
}

/** One entity's texts from its card or screen: a failure is the page's error, not a result line. */
export async function saveEntityTexts(
  db: Db, platforms: PlatformRegistry | undefined, person: Person, shopCode: string, entity: TextEntity, id: string,
  fingerprint: string, fields: Partial<Record<TextField, string>>, now: Date,
): Promise<ItemResult & { batchId: string }> {
  requireTextEditor(person);
  const shop = await shopOfPerson(db, person, shopCode);
  const { batchId, results: [result] } = await writeTextBatch(db, platforms, person, shop, entity, [{ id, fingerprint, fields }], { kind: 'card', checkFingerprint: true }, now);
  if (result.status === 'failed') throw new AppError(result.code ?? 'INTERNAL_ERROR', result.message ?? 'The text could not be written.');
  return { ...result, batchId };
}

/** The latest writes of one product or category in this shop, newest first (the card's "last writes"). */
export async function lastWrites(db: Db, accountId: string, shop: ShopRef, entity: TextEntity, id: string, limit = 10) {
  const rows = await db('content_writes').where({ account_id: accountId, shop_id: shop.id, entity, entity_id: id })
    .orderBy([{ column: 'written_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit)
    .select('source', 'source_run_id', 'changed_fields', 'written_by', 'written_at', 'event_id');
  return rows.map((r) => ({
    source: r.source as string, sourceRunId: r.source_run_id as string | null, changedFields: r.changed_fields as string[],
    writtenBy: r.written_by as string, writtenAt: (r.written_at as Date).toISOString(), eventId: r.event_id as string | null,
  }));
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Products (or categories) of a shop for the text screens: by code/guid, or containing `search` in code or name. */
export async function listEntities(db: Db, shop: ShopRef, entity: TextEntity, search: string, page: { limit: number; offset: number }) {
  const key = entity === 'product' ? 'code' : 'guid';
  const q = db(entity === 'product' ? 'products' : 'categories').where({ shop_id: shop.id }).select(key, 'name', 'content_updated_at');
  if (search) q.where((w) => w.whereRaw(`lower(${key}) like ?`, [`%${escapeLike(search.toLowerCase())}%`]).orWhereRaw('lower(name) like ?', [`%${escapeLike(search.toLowerCase())}%`]));
  const rows = await q.orderBy(key).limit(page.limit).offset(page.offset);
  return rows.map((r) => ({ id: r[key] as string, name: r.name as string, updatedAt: r.content_updated_at ? (r.content_updated_at as Date).toISOString() : null }));
}
