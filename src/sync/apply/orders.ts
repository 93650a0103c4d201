/** Orders: new orders are inserted with their items; known ones take the shop's current status and payment. */
import type { Knex } from 'knex';
import type { PlatformOrder } from '../../platforms/types.js';
import type { EventSink } from '../events.js';
import { refreshOrderRollups } from '../../rollups/orders.js';
import { bulkInsert } from '../bulk.js';
import { orderItemRows, orderRow } from '../rows.js';
import type { SyncShop } from '../shops.js';

interface StoredOrder {
  id: string;
  code: string;
  status_id: number;
  status_changed_at: Date | null;
  paid: boolean;
  updated_at: Date;
}

/** Events of the status changes after `afterMs`, with the status before each from the shop's own history. */
function statusEvents(sink: EventSink, o: PlatformOrder, afterMs: number): void {
  for (let i = 1; i < o.statusHistory.length; i++) {
    const change = o.statusHistory[i];
    if (change.at.getTime() <= afterMs) continue;
    sink.emit('order.status_changed', o.code, { order_code: o.code, status_id: change.statusId, previous_status_id: o.statusHistory[i - 1].statusId }, change.at);
  }
}

export async function applyOrders(trx: Knex.Transaction, shop: SyncShop, orders: PlatformOrder[], sink: EventSink): Promise<number> {
  const stored = new Map<string, StoredOrder>(
    (await trx('orders').where({ shop_id: shop.id }).whereIn('code', orders.map((o) => o.code))
      .select('id', 'code', 'status_id', 'status_changed_at', 'paid', 'updated_at') as StoredOrder[]).map((r) => [r.code, r]),
  );
  const fresh: PlatformOrder[] = [];
  // Orders written in this batch; their days and customers are recomputed before the batch commits.
  const touched: string[] = [];
  let written = 0;
  for (const o of orders) {
    const s = stored.get(o.code);
    if (!s) {
      fresh.push(o);
      continue;
    }
    if (s.updated_at.getTime() === o.updatedAt.getTime() && s.status_id === o.statusId && s.paid === o.paid) continue;
    statusEvents(sink, o, (s.status_changed_at ?? s.updated_at).getTime());
    if (!s.paid && o.paid) sink.emit('order.paid', o.code, { order_code: o.code }, o.paidAt!);
    await trx('orders').where({ id: s.id }).update({
      updated_at: o.updatedAt, status_id: o.statusId, status_name: o.statusName, status_changed_at: o.statusChangedAt, paid: o.paid, paid_at: o.paidAt,
    });
    touched.push(String(s.id));
    written++;
  }
  if (fresh.length) {
    const ids = await bulkInsert<{ id: string; code: string }>(trx, 'orders', fresh.map((o) => orderRow(shop.id, o)), { returning: ['id', 'code'] });
    const idByCode = new Map(ids.map((r) => [r.code, String(r.id)]));
    await bulkInsert(trx, 'order_items', fresh.flatMap((o) => orderItemRows(idByCode.get(o.code)!, o)));
    for (const o of fresh) {
      sink.emit('order.created', o.code, { order_code: o.code }, o.createdAt);
      statusEvents(sink, o, o.createdAt.getTime() - 1);
      if (o.paid) sink.emit('order.paid', o.code, { order_code: o.code }, o.paidAt!);
    }
    written += fresh.length;
    touched.push(...ids.map((r) => String(r.id)));
  }
  await refreshOrderRollups(trx, shop.id, touched);
  return written;
}
