/**
 * Preparing a proposal: every check before anything is stored (unknown product or category, a field the platform
 * cannot write, a text over the limit, a stale fingerprint, nothing to change), then the proposal and its items with
 * the field-by-field preview against the current values, in one transaction.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { ShopRef } from '../capabilities/context.js';
import type { WriteMode } from '../auth/scopes.js';
import type { Db } from '../db/knex.js';
import { CONTENT_LIMITS } from '../content/limits.js';
import { fingerprint } from '../content/hash.js';
import { AppError } from '../errors.js';
import { getClaimsSettingsDocument } from './claimsSettings.js';
import { getContentCapabilities } from '../queries/content.js';
import {
  AVAILABILITY_FIELDS, CATEGORY_TEXT_FIELDS, INITIAL_STATUS, PRODUCT_TEXT_FIELDS, PROPOSAL_EXPIRY_MS, TEXT_COLUMNS,
  type AvailabilityField, type ClaimsSettingPath, type ProposalKind, type TextField,
} from './model.js';

export interface ProposalAuthor {
  accountId: string;
  shop: ShopRef;
  writeMode: WriteMode;
  /** `key:<id>` or `oauth:<id>`. */
  createdBy: string;
}

export type Value = string | number | boolean | null;

interface NewItem {
  entity: 'product' | 'category' | 'availability' | 'claims_settings';
  entityId: string;
  entityName: string | null;
  changes: Record<string, Value>;
  before: Record<string, Value>;
}

export interface TextEntry {
  id: string;
  fingerprint: string;
  fields: Partial<Record<TextField, string>>;
}

/** Stores a proposal and its items; returns the proposal's draft id. */
async function store(db: Db | Knex.Transaction, author: ProposalAuthor, kind: ProposalKind, items: NewItem[], note: string | null, now: Date): Promise<string> {
  const draftId = `prp_${crypto.randomBytes(8).toString('hex')}`;
  const run = async (trx: Knex.Transaction) => {
    const [row] = await trx('proposals').insert({
      draft_id: draftId, account_id: author.accountId, shop_id: author.shop.id, kind, status: INITIAL_STATUS[kind], write_mode: author.writeMode,
      note, created_by: author.createdBy, created_at: now, expires_at: new Date(now.getTime() + PROPOSAL_EXPIRY_MS),
    }).returning('id');
    await trx('proposal_items').insert(items.map((item, position) => ({
      proposal_id: row.id, position, entity: item.entity, entity_id: item.entityId, entity_name: item.entityName,
      changes: JSON.stringify(item.changes), before: JSON.stringify(item.before),
    })));
  };
  if ('commit' in db) await run(db as Knex.Transaction);
  else await (db as Db).transaction(run);
  return draftId;
}

function assertEntityCount(count: number, param: string): void {
  if (count > CONTENT_LIMITS.maxEntitiesPerProposal) {
    throw new AppError('INVALID_PARAMETER', `A proposal changes at most ${CONTENT_LIMITS.maxEntitiesPerProposal} records; got ${count}.`, { param, reason: 'too_many' });
  }
}

function assertUnique(ids: string[], param: string): void {
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw new AppError('INVALID_PARAMETER', `\`${id}\` appears twice; name each record once.`, { param, reason: 'duplicate', id });
    seen.add(id);
  }
}

/** Checks proposed texts against the current ones and the platform; returns the items of the changed fields. */
export async function prepareTextItems(db: Db, shop: ShopRef, entity: 'product' | 'category', entries: TextEntry[], options: { checkFingerprint: boolean }): Promise<NewItem[]> {
  const param = entity === 'product' ? 'products' : 'categories';
  assertEntityCount(entries.length, param);
  assertUnique(entries.map((e) => e.id), param);
  const fields = entity === 'product' ? PRODUCT_TEXT_FIELDS : CATEGORY_TEXT_FIELDS;
  const capabilities = await getContentCapabilities(db, shop.id);
  const writable = new Set<string>(entity === 'product' ? capabilities.productFields : capabilities.categoryFields);
  const table = entity === 'product' ? 'products' : 'categories';
  const key = entity === 'product' ? 'code' : 'guid';
  const rows = await db(table).where({ shop_id: shop.id }).whereIn(key, entries.map((e) => e.id))
    .select(key, 'name', ...fields.map((f) => TEXT_COLUMNS[f]));
  const byId = new Map(rows.map((r) => [r[key] as string, r]));
  const items: NewItem[] = [];
  for (const entry of entries) {
    const row = byId.get(entry.id);
    if (!row) throw new AppError('PROPOSAL_TARGET_NOT_FOUND', `Shop \`${shop.code}\` has no ${entity} \`${entry.id}\`.`, { entity, id: entry.id });
    const proposed = Object.entries(entry.fields).filter(([, v]) => v !== undefined) as Array<[TextField, string]>;
    if (proposed.length === 0) throw new AppError('INVALID_PARAMETER', `No field to change for ${entity} \`${entry.id}\`.`, { param, reason: 'no_fields', id: entry.id });
    for (const [field, text] of proposed) {
      if (!(fields as readonly string[]).includes(field)) {
        throw new AppError('FIELD_NOT_WRITABLE', `A ${entity} has no text field \`${field}\`.`, { entity, id: entry.id, field });
      }
      if (!writable.has(field)) {
        throw new AppError('FIELD_NOT_WRITABLE', `The platform of shop \`${shop.code}\` does not let the service write the ${entity} field \`${field}\`.`, { entity, id: entry.id, field, writableFields: [...writable] });
      }
      const max = CONTENT_LIMITS.maxFieldLength[field];
      if (text.length > max) {
        throw new AppError('TEXT_TOO_LONG', `\`${field}\` of ${entity} \`${entry.id}\` has ${text.length} characters; the platform stores at most ${max}.`, { entity, id: entry.id, field, maxLength: max, length: text.length });
      }
    }
    const current = Object.fromEntries(fields.map((f) => [f, (row[TEXT_COLUMNS[f]] ?? null) as string | null]));
    if (options.checkFingerprint) {
      const currentFingerprint = fingerprint(fields.map((f) => [f, current[f]] as const));
      if (entry.fingerprint !== currentFingerprint) {
        throw new AppError('STALE_FINGERPRINT', `The texts of ${entity} \`${entry.id}\` changed since they were read; read them again (${entity === 'product' ? 'products_content_get' : 'categories_content_get'}).`, { entity, id: entry.id, currentFingerprint });
      }
    }
    const changed = proposed.filter(([field, text]) => (current[field] ?? '') !== text);
    if (changed.length === 0) continue;
    items.push({
      entity, entityId: entry.id, entityName: row.name as string,
      changes: Object.fromEntries(changed), before: Object.fromEntries(changed.map(([f]) => [f, current[f]])),
    });
  }
  return items;
}

/** A product- or category-text proposal. */
export async function createTextProposal(db: Db, author: ProposalAuthor, entity: 'product' | 'category', entries: TextEntry[], note: string | null, now: Date): Promise<string> {
  const items = await prepareTextItems(db, author.shop, entity, entries, { checkFingerprint: true });
  if (items.length === 0) throw new AppError('PROPOSAL_EMPTY', 'Every proposed text equals the current one; nothing to propose.');
  return store(db, author, entity === 'product' ? 'product_texts' : 'category_texts', items, note, now);
}

export interface AvailabilityChange {
  id: string;
  name?: string;
  meaning?: 'in_stock' | 'backorder' | 'preorder' | 'out_of_stock';
  onStockHours?: number | null;
  deliveryHours?: number | null;
}

/** An availability-dictionary proposal: changes of existing entries of a manageable dictionary. */
export async function createAvailabilityProposal(db: Db, author: ProposalAuthor, entries: AvailabilityChange[], note: string | null, now: Date): Promise<string> {
  assertEntityCount(entries.length, 'entries');
  assertUnique(entries.map((e) => e.id), 'entries');
  const capabilities = await getContentCapabilities(db, author.shop.id);
  if (!capabilities.availabilityManageable) {
    throw new AppError('DICTIONARY_NOT_MANAGEABLE', `The availability dictionary of shop \`${author.shop.code}\` cannot be changed through the service (${capabilities.availabilityReason}).`, { reason: capabilities.availabilityReason });
  }
  const rows = await db('availabilities').where({ shop_id: author.shop.id }).whereIn('availability_id', entries.map((e) => e.id));
  const byId = new Map(rows.map((r) => [r.availability_id as string, r]));
  const items: NewItem[] = [];
  for (const entry of entries) {
    const row = byId.get(entry.id);
    if (!row) throw new AppError('PROPOSAL_TARGET_NOT_FOUND', `Shop \`${author.shop.code}\` has no availability \`${entry.id}\` (see /availabilities).`, { entity: 'availability', id: entry.id });
    const changed = (Object.keys(AVAILABILITY_FIELDS) as AvailabilityField[])
      .filter((f) => entry[f] !== undefined && entry[f] !== row[AVAILABILITY_FIELDS[f]]);
    if (changed.length === 0) continue;
    items.push({
      entity: 'availability', entityId: entry.id, entityName: row.name as string,
      changes: Object.fromEntries(changed.map((f) => [f, entry[f] as Value])), before: Object.fromEntries(changed.map((f) => [f, row[AVAILABILITY_FIELDS[f]] as Value])),
    });
  }
  if (items.length === 0) throw new AppError('PROPOSAL_EMPTY', 'Every proposed value equals the current one; nothing to propose.');
  return store(db, author, 'availabilities', items, note, now);
}

/** A claims-settings proposal: one item per changed setting. */
export async function createClaimsProposal(db: Db, author: ProposalAuthor, changes: Partial<Record<ClaimsSettingPath, Value>>, note: string | null, now: Date): Promise<string> {
  const document = await getClaimsSettingsDocument(db, author.shop.id);
  if (!document) throw new AppError('PROPOSAL_TARGET_NOT_FOUND', `Shop \`${author.shop.code}\` has no claims settings yet.`, { entity: 'claims_settings', id: author.shop.code });
  const items: NewItem[] = [];
  for (const [path, value] of Object.entries(changes) as Array<[ClaimsSettingPath, Value]>) {
    if (value === undefined) continue;
    const current = readPath(document, path);
    if (current === value) continue;
    items.push({ entity: 'claims_settings', entityId: path, entityName: null, changes: { value }, before: { value: current } });
  }
  if (items.length === 0) throw new AppError('PROPOSAL_EMPTY', 'Every proposed setting equals the current one; nothing to propose.');
  return store(db, author, 'claims_settings', items, note, now);
}

/** The value at a dotted path of a settings document. */
export function readPath(document: Record<string, unknown>, path: string): Value {
  let node: unknown = document;
  for (const part of path.split('.')) node = (node as Record<string, unknown> | null)?.[part];
  return (node ?? null) as Value;
}
