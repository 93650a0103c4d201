/** Stock: each movement the shop reports is stored once (by its id) and is one `inventory.stock_changed`; item figures follow. */
import type { Knex } from 'knex';
import type { AreaRecords } from '../../platforms/types.js';
import type { EventSink } from '../events.js';
import { bulkInsert } from '../bulk.js';
import { movementRow, stockItemRow } from '../rows.js';
import type { SyncShop } from '../shops.js';

const FIGURES = ['source', 'quantity', 'physical', 'reserved', 'available'] as const;

export async function applyStock(trx: Knex.Transaction, shop: SyncShop, records: Array<AreaRecords['stock']>, sink: EventSink): Promise<number> {
  let written = 0;
  const movements = records.flatMap((r) => (r.kind === 'movement' ? [r.movement] : []));
  if (movements.length) {
    const inserted = await bulkInsert<{ movement_id: string }>(trx, 'stock_movements', movements.map((m) => movementRow(shop.id, m)), {
      ignoreConflictOn: ['shop_id', 'movement_id'], returning: ['movement_id'],
    });
    const fresh = new Set(inserted.map((r) => r.movement_id));
    for (const m of movements) {
      if (fresh.has(m.id)) sink.emit('inventory.stock_changed', m.productCode, { item_id: m.productCode, sku: m.productCode, kind: m.kind }, m.occurredAt);
    }
    written += inserted.length;
  }
  const items = records.flatMap((r) => (r.kind === 'item' ? [r.item] : []));
  if (items.length) {
    const stored = new Map<string, Record<string, unknown>>(
      (await trx('stock_items').where({ shop_id: shop.id }).whereIn('code', items.map((i) => i.code)).select('id', 'code', ...FIGURES)).map((r) => [r.code, r]),
    );
    const fresh = [];
    for (const record of records) {
      if (record.kind !== 'item') continue;
      const item = record.item;
      const row = stockItemRow(shop.id, item);
      const s = stored.get(item.code);
      const changed = !s || FIGURES.some((f) => s[f] !== row[f]);
      if (!s) fresh.push(row);
      else if (changed) {
        await trx('stock_items').where({ id: s.id as string }).update(Object.fromEntries([...FIGURES, 'updated_at'].map((f) => [f, row[f]])));
        written++;
      }
      // A platform without movements announces the changed figures themselves (never a re-read of unchanged ones).
      // `item_id` is the platform's inventory item; a platform that keys stock by product code has no other id.
      if (changed && record.announce) sink.emit('inventory.stock_changed', item.code, { item_id: item.itemId ?? item.code, sku: item.sku, kind: record.announce }, item.updatedAt);
    }
    await bulkInsert(trx, 'stock_items', fresh);
    written += fresh.length;
  }
  return written;
}
