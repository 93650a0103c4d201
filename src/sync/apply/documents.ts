/**
 * Accounting documents: the issued content is stored once and never changed (an issued invoice is `invoice.created`);
 * the state (lifecycle, state in the source, validity) follows the shop. A document that arrives as news gets its PDF
 * rendered and stored in the same transaction; history is rendered on its first PDF read (src/documents/store.ts).
 */
import type { Knex } from 'knex';
import { ensureDocumentPdfs } from '../../documents/store.js';
import type { PlatformDocument } from '../../platforms/types.js';
import type { EventSink } from '../events.js';
import { bulkInsert } from '../bulk.js';
import { documentRow, documentStateColumns } from '../rows.js';
import type { SyncShop } from '../shops.js';

const STATE = ['lifecycle', 'source_state', 'valid', 'updated_at'] as const;
const key = (type: string, code: string) => `${type}|${code}`;

export async function applyDocuments(trx: Knex.Transaction, shop: SyncShop, documents: PlatformDocument[], sink: EventSink): Promise<number> {
  if (!documents.length) return 0;
  const inserted = await bulkInsert<{ id: string; type: string; code: string }>(trx, 'documents', documents.map((d) => documentRow(shop.id, d)), {
    ignoreConflictOn: ['shop_id', 'type', 'code'], returning: ['id', 'type', 'code'],
  });
  const fresh = new Map(inserted.map((r) => [key(r.type, r.code), String(r.id)]));
  const known = documents.filter((d) => !fresh.has(key(d.type, d.code)));
  let updated = 0;
  if (known.length) {
    const stored = new Map<string, Record<string, unknown>>(
      (await trx('documents').where({ shop_id: shop.id }).whereIn(['type', 'code'], known.map((d) => [d.type, d.code])).select('id', 'type', 'code', ...STATE))
        .map((r) => [key(r.type, r.code), r]),
    );
    for (const d of known) {
      const s = stored.get(key(d.type, d.code));
      const state = documentStateColumns(d);
      if (!s || STATE.every((c) => (c === 'updated_at' ? (s[c] as Date | null)?.getTime() === (state[c] as Date).getTime() : s[c] === state[c]))) continue;
      await trx('documents').where({ id: s.id as string }).update(state);
      updated++;
    }
  }
  const news: string[] = [];
  for (const d of documents) {
    const id = fresh.get(key(d.type, d.code));
    if (id === undefined) continue;
    if (d.type === 'invoice') sink.emit('invoice.created', d.code, { invoice_code: d.code, order_code: d.orderCode }, d.issuedAt);
    if (sink.isNews(d.issuedAt)) news.push(id);
  }
  await ensureDocumentPdfs(trx, news);
  return inserted.length + updated;
}
