/** Accounting documents: issued once and never changed; an issued invoice is `invoice.created`. */
import type { Knex } from 'knex';
import type { PlatformDocument } from '../../platforms/types.js';
import type { EventSink } from '../events.js';
import { refreshDocumentDays } from '../../rollups/products.js';
import { bulkInsert } from '../bulk.js';
import { documentRow } from '../rows.js';
import type { SyncShop } from '../shops.js';

export async function applyDocuments(trx: Knex.Transaction, shop: SyncShop, documents: PlatformDocument[], sink: EventSink): Promise<number> {
  if (!documents.length) return 0;
  const inserted = await bulkInsert<{ id: string; type: string; code: string }>(trx, 'documents', documents.map((d) => documentRow(shop.id, d)), {
    ignoreConflictOn: ['shop_id', 'type', 'code'], returning: ['id', 'type', 'code'],
  });
  // Sales per product of the new documents' business days, in this batch's transaction.
  await refreshDocumentDays(trx, shop.id, inserted.map((r) => String(r.id)));
  const fresh = new Set(inserted.map((r) => `${r.type}|${r.code}`));
  for (const d of documents) {
    if (d.type === 'invoice' && fresh.has(`${d.type}|${d.code}`)) sink.emit('invoice.created', d.code, { invoice_code: d.code, order_code: d.orderCode }, d.issuedAt);
  }
  return inserted.length;
}
