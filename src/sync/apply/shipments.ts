/**
 * Outbound shipments with their tracking events. Each status change in the carrier's tracking is one
 * `shipment.status_changed`; reaching DELIVERED is additionally `shipment.delivered`. Return shipments of claims are
 * not shipments (they live in claims), so they never produce `shipment.*`.
 */
import type { Knex } from 'knex';
import type { PlatformShipment } from '../../platforms/types.js';
import type { TrackingEvent } from '../../records/types.js';
import type { EventSink } from '../events.js';
import { knexRunner } from '../../rollups/orders.js';
import { refreshShipmentRollups } from '../../rollups/shipping.js';
import { bulkInsert } from '../bulk.js';
import { shipmentRow, trackingEventRows } from '../rows.js';
import type { SyncShop } from '../shops.js';

interface StoredShipment {
  id: string;
  carrier_code: string;
  tracking_number: string;
  status: string;
  updated_at: Date;
  day: string;
}

const key = (carrier: string, tracking: string) => `${carrier}|${tracking}`;

function transitionEvents(sink: EventSink, shipmentId: string, s: PlatformShipment, previous: string, events: TrackingEvent[]): void {
  let before = previous;
  for (const e of events) {
    if (e.status === before) continue;
    const data = {
      shipment_id: shipmentId, order_code: s.orderCode, carrier_code: s.carrierCode, status: e.status, previous_status: before, tracking_number: s.trackingNumber,
    };
    sink.emit('shipment.status_changed', shipmentId, data, e.occurredAt);
    if (e.status === 'DELIVERED') sink.emit('shipment.delivered', shipmentId, data, e.occurredAt);
    before = e.status;
  }
}

export async function applyShipments(trx: Knex.Transaction, shop: SyncShop, shipments: PlatformShipment[], sink: EventSink): Promise<number> {
  const rows: StoredShipment[] = await trx('shipments').where({ shop_id: shop.id }).whereIn('tracking_number', shipments.map((s) => s.trackingNumber))
    .select('id', 'carrier_code', 'tracking_number', 'status', 'updated_at',
      trx.raw('((created_at at time zone (select time_zone from shops where id = shipments.shop_id))::date)::text as day'));
  const stored = new Map(rows.map((r) => [key(r.carrier_code, r.tracking_number), r]));
  const fresh: PlatformShipment[] = [];
  const touched: string[] = [];
  // The days the changed stored versions counted in: their rollups are recomputed too.
  const previousDays: string[] = [];
  let written = 0;
  for (const s of shipments) {
    const known = stored.get(key(s.carrierCode, s.trackingNumber));
    if (!known) {
      fresh.push(s);
      continue;
    }
    if (known.updated_at.getTime() === s.updatedAt.getTime() && known.status === s.status) continue;
    const added = s.events.filter((e) => e.occurredAt.getTime() > known.updated_at.getTime());
    if (added.length) await trx('shipment_tracking_events').insert(trackingEventRows(known.id, added));
    const { order_code: _o, carrier_code: _c, tracking_number: _t, shop_id: _s, ...changes } = shipmentRow(shop.id, s);
    await trx('shipments').where({ id: known.id }).update(changes);
    transitionEvents(sink, String(known.id), s, known.status, added);
    touched.push(String(known.id));
    previousDays.push(known.day);
    written++;
  }
  if (fresh.length) {
    const ids = await bulkInsert<{ id: string; carrier_code: string; tracking_number: string }>(trx, 'shipments', fresh.map((s) => shipmentRow(shop.id, s)), { returning: ['id', 'carrier_code', 'tracking_number'] });
    const idByKey = new Map(ids.map((r) => [key(r.carrier_code, r.tracking_number), String(r.id)]));
    const events = fresh.flatMap((s) => trackingEventRows(idByKey.get(key(s.carrierCode, s.trackingNumber))!, s.events));
    await bulkInsert(trx, 'shipment_tracking_events', events);
    for (const s of fresh) {
      const id = idByKey.get(key(s.carrierCode, s.trackingNumber))!;
      sink.emit('shipment.created', id, { shipment_id: id, order_code: s.orderCode, carrier_code: s.carrierCode, tracking_number: s.trackingNumber }, s.createdAt);
      transitionEvents(sink, id, s, s.events[0].status, s.events.slice(1));
    }
    written += fresh.length;
    touched.push(...ids.map((r) => String(r.id)));
  }
  // Shipping rollups follow in the same transaction: a later delivery moves a shipment out of in-transit exactly once.
  if (touched.length) await refreshShipmentRollups(knexRunner(trx), shop.id, touched, previousDays);
  return written;
}
