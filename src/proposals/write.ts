/**
 * Writing one approved proposal item, idempotently: the item's result is stored in Postgres in the transaction that
 * records what the shop kept (and its content-change event), so a repeated call — a retried activity after a worker
 * died — returns the stored result instead of writing again. The value "before" is fixed before the shop is called,
 * so a retry after a write the shop already took still compares with the text that was there before it.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/knex.js';
import { fieldHash } from '../content/hash.js';
import type { PlatformRegistry } from '../platforms/registry.js';
import type { ContentTexts, PlatformWrite, ShopPlatformAdapter } from '../platforms/types.js';
import { platformUnsupported } from '../platforms/unsupported.js';
import { getContentCapabilities } from '../queries/content.js';
import { getSyncShop, type SyncShop } from '../sync/shops.js';
import { getClaimsSettingsDocument, writeClaimsSetting } from './claimsSettings.js';
import { readPath, type Value } from './create.js';
import { recordContentWrite } from './contentWrites.js';
import { AVAILABILITY_FIELDS, orderedFields, TEXT_COLUMNS, type AvailabilityField, type ItemOutcome, type ItemStatus, type TextField } from './model.js';

export interface ProposalWriteDeps {
  db: Db;
  platforms: PlatformRegistry;
  /** A test seam: runs after the shop took an item's write and before its result is stored. */
  afterShopWrite?: (itemId: string) => Promise<void>;
}

export interface ItemResult {
  stored: Record<string, Value> | null;
  afterHash: Record<string, string> | null;
  warnings: string[];
  error: { code: string; message: string } | null;
  eventId: string | null;
}

interface ItemRow {
  id: string;
  proposal_id: string;
  entity: 'product' | 'category' | 'availability' | 'claims_settings';
  entity_id: string;
  changes: Record<string, Value>;
  before: Record<string, Value>;
  before_write: Record<string, Value> | null;
  status: ItemStatus;
  result: ItemResult | null;
  draft_id: string;
  account_id: string;
  shop_id: string;
  write_mode: string;
}

const outcomeOf = (row: { status: ItemStatus; result: ItemResult | null }): ItemOutcome => ({ status: row.status, warnings: row.result?.warnings ?? [] });

async function loadItem(db: Db | Knex.Transaction, itemId: string, lock = false): Promise<ItemRow> {
  const q = db('proposal_items as i').join('proposals as p', 'p.id', 'i.proposal_id')
    .where('i.id', itemId)
    .first('i.id', 'i.proposal_id', 'i.entity', 'i.entity_id', 'i.changes', 'i.before', 'i.before_write', 'i.status', 'i.result', 'p.draft_id', 'p.account_id', 'p.shop_id', 'p.write_mode');
  if (lock) q.forUpdate('i');
  const row = await q;
  if (!row) throw new Error(`No proposal item ${itemId}`);
  return { ...row, id: String(row.id), proposal_id: String(row.proposal_id), account_id: String(row.account_id), shop_id: String(row.shop_id) };
}

/** The current values of the item's fields in our records (as of the last sync or write). */
async function currentValues(db: Db, item: ItemRow): Promise<Record<string, Value> | null> {
  const fields = Object.keys(item.changes);
  if (item.entity === 'product' || item.entity === 'category') {
    const row = await db(item.entity === 'product' ? 'products' : 'categories')
      .where({ shop_id: item.shop_id, [item.entity === 'product' ? 'code' : 'guid']: item.entity_id }).first(...fields.map((f) => TEXT_COLUMNS[f as TextField]));
    return row ? Object.fromEntries(fields.map((f) => [f, (row[TEXT_COLUMNS[f as TextField]] ?? null) as Value])) : null;
  }
  if (item.entity === 'availability') {
    const row = await db('availabilities').where({ shop_id: item.shop_id, availability_id: item.entity_id }).first();
    return row ? Object.fromEntries(fields.map((f) => [f, row[AVAILABILITY_FIELDS[f as AvailabilityField]] as Value])) : null;
  }
  const document = await getClaimsSettingsDocument(db, item.shop_id);
  return document ? { value: readPath(document, item.entity_id) } : null;
}

const same = (a: Value, b: Value) => (typeof a === 'string' || a === null) && (typeof b === 'string' || b === null) ? fieldHash(a as string | null) === fieldHash(b as string | null) : a === b;

async function finishItem(db: Db, itemId: string, status: ItemStatus, result: ItemResult, apply?: (trx: Knex.Transaction, item: ItemRow) => Promise<Partial<ItemResult>>): Promise<ItemOutcome> {
  return db.transaction(async (trx) => {
    const item = await loadItem(trx, itemId, true);
    // Another attempt of this activity finished first: its result stands.
    if (item.status !== 'pending') return outcomeOf(item);
    const extra = apply ? await apply(trx, item) : {};
    const final = { ...result, ...extra };
    const finalStatus = status === 'written' && apply && extra.eventId === null && item.entity !== 'availability' && item.entity !== 'claims_settings' ? 'unchanged' : status;
    await trx('proposal_items').where({ id: itemId }).update({ status: finalStatus, result: JSON.stringify(final), written_at: trx.fn.now() });
    return { status: finalStatus, warnings: final.warnings };
  });
}

const failure = (code: string, message: string): ItemResult => ({ stored: null, afterHash: null, warnings: [], error: { code, message }, eventId: null });

/** The item's failure when the shop's platform does not take the write (nothing was sent to the shop). */
function unsupported(shop: SyncShop, write: PlatformWrite): ItemResult {
  const error = platformUnsupported(shop.platform, write, shop.code);
  return failure(error.code, error.message);
}

function adapterOf(platforms: PlatformRegistry, shop: SyncShop): ShopPlatformAdapter {
  const adapter = platforms.get(shop.platform);
  if (!adapter) throw new Error(`No adapter for platform ${shop.platform}`);
  return adapter;
}

/** Writes one item of an approved proposal (or returns its stored result); never writes an item whose result is stored. */
export async function writeProposalItem(deps: ProposalWriteDeps, itemId: string, now: Date = new Date()): Promise<ItemOutcome> {
  const { db } = deps;
  let item = await loadItem(db, itemId);
  if (item.status !== 'pending') return outcomeOf(item);
  const shop = await getSyncShop(db, item.shop_id);

  if (item.before_write === null) {
    // First attempt: the record must still hold what the proposal was prepared against.
    const current = await currentValues(db, item);
    if (!current) return finishItem(db, itemId, 'failed', failure('PROPOSAL_TARGET_NOT_FOUND', `The shop no longer has ${item.entity} ${item.entity_id}.`));
    const moved = Object.keys(item.changes).filter((f) => !same(current[f], item.before[f] ?? null));
    if (moved.length > 0) {
      return finishItem(db, itemId, 'failed', failure('STALE_FINGERPRINT', `${moved.join(', ')} changed since the proposal was prepared; nothing was written.`));
    }
    if (item.entity === 'product' || item.entity === 'category') {
      const caps = await getContentCapabilities(db, item.shop_id);
      const writable = item.entity === 'product' ? caps.productFields : caps.categoryFields;
      const refused = Object.keys(item.changes).filter((f) => !writable.includes(f));
      if (refused.length > 0) return finishItem(db, itemId, 'failed', failure('FIELD_NOT_WRITABLE', `The platform no longer lets the service write ${refused.join(', ')}.`));
    }
    await db('proposal_items').where({ id: itemId }).whereNull('before_write').update({ before_write: JSON.stringify(current) });
    item = await loadItem(db, itemId);
  }
  const before = item.before_write!;

  if (item.entity === 'product' || item.entity === 'category') {
    const adapter = adapterOf(deps.platforms, shop);
    const write = item.entity === 'product' ? 'product_texts' : 'category_texts';
    if (!adapter.capabilities.writes.includes(write)) return finishItem(db, itemId, 'failed', unsupported(shop, write));
    const texts = item.changes as ContentTexts;
    const kept = item.entity === 'product' ? await adapter.writeProductTexts(shop, item.entity_id, texts) : await adapter.writeCategoryTexts(shop, item.entity_id, texts);
    await deps.afterShopWrite?.(itemId);
    const fields = orderedFields(Object.keys(texts)) as TextField[];
    const stored = Object.fromEntries(fields.map((f) => [f, kept[f] ?? null])) as Record<TextField, string | null>;
    const warnings = fields.filter((f) => stored[f] !== texts[f]).map((f) => `The shop changed \`${f}\` on saving (markup it does not keep was removed); the stored text is what the result and the event hash.`);
    return finishItem(db, itemId, 'written', { stored, afterHash: Object.fromEntries(fields.map((f) => [f, fieldHash(stored[f])])), warnings, error: null, eventId: null }, async (trx, locked) => {
      const { eventId } = await recordContentWrite(trx, {
        accountId: locked.account_id, shop: { id: shop.id, code: shop.code }, entity: locked.entity as 'product' | 'category', entityId: locked.entity_id,
        before: before as Record<TextField, string | null>, after: stored, source: locked.write_mode === 'autonomous' ? 'autonomous' : 'mcp',
        sourceRunId: locked.draft_id, writtenBy: `proposal:${locked.draft_id}`, at: now,
      });
      return { eventId };
    });
  }

  if (item.entity === 'availability') {
    const adapter = adapterOf(deps.platforms, shop);
    if (!adapter.capabilities.writes.includes('availability')) return finishItem(db, itemId, 'failed', unsupported(shop, 'availability'));
    const row = await db('availabilities').where({ shop_id: item.shop_id, availability_id: item.entity_id }).first();
    if (!row) return finishItem(db, itemId, 'failed', failure('PROPOSAL_TARGET_NOT_FOUND', `The shop no longer has availability ${item.entity_id}.`));
    const entry = {
      id: item.entity_id, name: row.name as string, meaning: row.meaning, onStockHours: row.on_stock_hours as number | null, deliveryHours: row.delivery_hours as number | null,
      ...(item.changes as Record<string, never>),
    };
    const [kept] = await adapter.writeAvailabilities(shop, [entry]);
    await deps.afterShopWrite?.(itemId);
    const fields = Object.keys(item.changes) as AvailabilityField[];
    const stored = Object.fromEntries(fields.map((f) => [f, kept[f] as Value]));
    return finishItem(db, itemId, 'written', { stored, afterHash: null, warnings: [], error: null, eventId: null }, async (trx) => {
      await trx('availabilities').where({ shop_id: item.shop_id, availability_id: item.entity_id })
        .update({ ...Object.fromEntries(fields.map((f) => [AVAILABILITY_FIELDS[f], stored[f]])), updated_at: trx.fn.now() });
      return {};
    });
  }

  // Claims settings are the service's own data: the write and its result are one transaction.
  const value = item.changes.value;
  return finishItem(db, itemId, 'written', { stored: { value }, afterHash: null, warnings: [], error: null, eventId: null }, async (trx) => {
    await writeClaimsSetting(trx, item.shop_id, item.entity_id, value);
    return {};
  });
}
