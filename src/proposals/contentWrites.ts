/**
 * Every text write of the service ends here, in the transaction that stores what the shop kept: the write is logged
 * and, when a field really changed, one content-change event is recorded for the write and shop (SPEC "Content-change
 * events": `before_hash`/`after_hash` per changed field, `after_hash` of what the shop stored, not of what was sent).
 */
import type { Knex } from 'knex';
import { fieldHash } from '../content/hash.js';
import { recordEvent } from '../events/outbox.js';
import { orderedFields, TEXT_COLUMNS, type TextField } from './model.js';

export type ContentSource = 'ui' | 'assistant' | 'mcp' | 'autonomous';

export interface ContentWrite {
  accountId: string;
  shop: { id: string; code: string };
  entity: 'product' | 'category';
  entityId: string;
  /** field -> text before the write; field -> text the shop stored (only the fields written). */
  before: Partial<Record<TextField, string | null>>;
  after: Partial<Record<TextField, string | null>>;
  source: ContentSource;
  sourceRunId: string | null;
  writtenBy: string;
  at: Date;
}

/** Stores the texts the shop kept in our catalogue and logs the write; returns the changed fields and the event id (null when nothing changed). */
export async function recordContentWrite(trx: Knex.Transaction, write: ContentWrite): Promise<{ changedFields: TextField[]; eventId: string | null }> {
  const fields = orderedFields(Object.keys(write.after)) as TextField[];
  const changedFields = fields.filter((f) => fieldHash(write.before[f]) !== fieldHash(write.after[f]));
  const table = write.entity === 'product' ? 'products' : 'categories';
  const key = write.entity === 'product' ? 'code' : 'guid';
  if (changedFields.length > 0) {
    await trx(table).where({ shop_id: write.shop.id, [key]: write.entityId })
      .update({ ...Object.fromEntries(changedFields.map((f) => [TEXT_COLUMNS[f], write.after[f] ?? null])), content_updated_at: write.at });
  }
  const beforeHash = Object.fromEntries(changedFields.map((f) => [f, fieldHash(write.before[f])]));
  const afterHash = Object.fromEntries(changedFields.map((f) => [f, fieldHash(write.after[f])]));
  let eventId: string | null = null;
  if (changedFields.length > 0) {
    // The page's public address as the platform gave it with the catalogue (null when it does not know one).
    const page = await trx(table).where({ shop_id: write.shop.id, [key]: write.entityId }).first('url');
    const event = await recordEvent(trx, {
      accountId: write.accountId, shop: write.shop, type: write.entity === 'product' ? 'product_content.changed' : 'category_content.changed',
      resource: { id: write.entityId },
      data: {
        store_id: write.shop.code, market: write.shop.code, entity: write.entity, entity_id: write.entityId,
        canonical_url: page?.url ?? null,
        source: write.source, source_run_id: write.sourceRunId, changed_fields: changedFields, before_hash: beforeHash, after_hash: afterHash,
        changed_at: write.at.toISOString(),
      },
      occurredAt: write.at,
    });
    eventId = event.eventId;
  }
  await trx('content_writes').insert({
    account_id: write.accountId, shop_id: write.shop.id, entity: write.entity, entity_id: write.entityId, source: write.source,
    source_run_id: write.sourceRunId, changed_fields: changedFields, before_hash: JSON.stringify(beforeHash), after_hash: JSON.stringify(afterHash),
    written_by: write.writtenBy, event_id: eventId, written_at: write.at,
  });
  return { changedFields, eventId };
}
