/** Reads of carriers, shipments and tracking events, always within one shop; delivery statistics computed in SQL. */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { iso, keysetPage, toPage, wherePeriod } from './keyset.js';

export const SHIPMENT_OUTCOMES = ['delivered', 'returned', 'failed', 'in_transit', 'cancelled'] as const;
export type ShipmentOutcome = (typeof SHIPMENT_OUTCOMES)[number];

// Explicit columns: `credentials_encrypted` must never leave the database.
const carrierColumns = ['code', 'name', 'profiles', 'connected_at'];

const shipmentColumns = [
  'id', 'order_code', 'carrier_code', 'tracking_number', 'country', 'status', 'outcome', 'created_at', 'handed_over_at', 'delivered_at',
];

interface ShipmentRow {
  id: string;
  order_code: string;
  carrier_code: string;
  tracking_number: string;
  country: string;
  status: string;
  outcome: ShipmentOutcome;
  created_at: Date;
  handed_over_at: Date | null;
  delivered_at: Date | null;
}

interface TrackingEventRow {
  occurred_at: Date;
  status: string;
  description: string;
  location: string | null;
  is_delivery: boolean;
}

function toShipment(row: ShipmentRow) {
  return {
    shipmentId: String(row.id),
    orderCode: row.order_code,
    carrierCode: row.carrier_code,
    trackingNumber: row.tracking_number,
    country: row.country.trim(),
    status: row.status,
    outcome: row.outcome,
    createdAt: row.created_at.toISOString(),
    handedOverAt: iso(row.handed_over_at),
    deliveredAt: iso(row.delivered_at),
  };
}

export type Shipment = ReturnType<typeof toShipment>;

/** The shop's connected carriers with their profiles, by code; never their credentials. */
export async function listCarriers(db: Db, shopId: string) {
  const rows: { code: string; name: string; profiles: Record<string, unknown>[]; connected_at: Date }[] = await db('carriers')
    .select(carrierColumns)
    .where({ shop_id: shopId })
    .orderBy('code');
  return rows.map((row) => ({ code: row.code, name: row.name, profiles: row.profiles ?? [], connectedAt: row.connected_at.toISOString() }));
}

/** A page of a shop's shipments created in the period, newest first, optionally of one carrier. */
export async function listShipments(db: Db, shopId: string, period: Period | null, carrier: string | undefined, page: PageRequest) {
  const q = db('shipments').select(shipmentColumns).where({ shop_id: shopId });
  if (carrier !== undefined) q.where({ carrier_code: carrier });
  wherePeriod(q, 'created_at', period);
  const rows: ShipmentRow[] = await keysetPage(q, 'created_at', 'id', page);
  const result = toPage(rows, page, (r) => r.created_at, toShipment);
  return { items: result.items, hasMore: result.hasMore, last: result.last };
}

/** One shipment of a shop with all its tracking events in chronological order, or null (another shop's is not found). */
export async function getShipment(db: Db, shopId: string, shipmentId: string) {
  const row: ShipmentRow | undefined = await db('shipments').select(shipmentColumns).where({ shop_id: shopId, id: shipmentId }).first();
  if (!row) return null;
  const events: TrackingEventRow[] = await db('shipment_tracking_events')
    .select('occurred_at', 'status', 'description', 'location', 'is_delivery')
    .where({ shipment_id: row.id })
    .orderBy([{ column: 'occurred_at' }, { column: 'id' }]);
  return {
    ...toShipment(row),
    trackingEvents: events.map((e) => ({
      occurredAt: e.occurred_at.toISOString(),
      status: e.status,
      description: e.description,
      location: e.location,
      isDelivery: e.is_delivery,
    })),
  };
}

/** Delivery-time figures of a group of shipments. */
export interface DeliveryTimes {
  measured: number;
  medianHours: number | null;
  p90Hours: number | null;
}

export interface ShippingStats {
  shipments: { total: number; delivered: number; returned: number; failed: number; inTransit: number; cancelled: number };
  deliveryRate: number | null;
  delivery: DeliveryTimes;
  countries: { country: string; shipments: number; delivered: number; deliveryRate: number | null; medianHours: number | null }[];
  carriers: {
    carrierCode: string;
    carrierName: string | null;
    shipments: number;
    delivered: number;
    returned: number;
    failed: number;
    inTransit: number;
    deliveryRate: number | null;
    delivery: DeliveryTimes;
    countries: string[];
  }[];
}

interface StatsRow {
  grouping_level: number;
  country: string | null;
  carrier_code: string | null;
  carrier_name: string | null;
  total: number;
  delivered: number;
  returned: number;
  failed: number;
  in_transit: number;
  cancelled: number;
  delivery_rate: string | null;
  measured: number;
  median_hours: string | null;
  p90_hours: string | null;
  countries: string[] | null;
}

// grouping(country, carrier_code): a bit is set for each column NOT grouped by.
const LEVEL_TOTAL = 3;
const LEVEL_COUNTRY = 1;
const LEVEL_CARRIER = 2;

const num = (value: string | null): number | null => (value === null ? null : Number(value));

/**
 * Delivery statistics of the shipments created in the period, in one pass over them (GROUPING SETS: whole shop,
 * per country, per carrier). Delivery time runs from hand-over to the FIRST delivery tracking event; a shipment
 * missing either point is left out of median and p90; cancelled shipments are counted only as `cancelled`.
 * Percentiles are taken over whole milliseconds and rounded to 2 decimals (half away from zero) as NUMERIC.
 */
export async function shipmentStats(db: Db, shopId: string, period: Period | null, carrier: string | undefined): Promise<ShippingStats> {
  const periodShipments = db('shipments as s')
    .leftJoin('carriers as c', function joinCarrier() {
      this.on('c.shop_id', '=', 's.shop_id').andOn('c.code', '=', 's.carrier_code');
    })
    .joinRaw(`left join lateral (
        select min(e.occurred_at) as first_delivery_at
        from shipment_tracking_events e
        where e.shipment_id = s.id and e.is_delivery
      ) fd on true`)
    .select(
      's.carrier_code',
      'c.name as carrier_name',
      db.raw('trim(s.country) as country'),
      's.outcome',
      // Null unless both points exist (and never for a cancelled shipment), so percentile_cont skips it.
      db.raw(`case when s.outcome <> 'cancelled' then extract(epoch from (fd.first_delivery_at - s.handed_over_at)) * 1000 end::float8 as delivery_ms`),
    )
    .where('s.shop_id', shopId);
  if (carrier !== undefined) periodShipments.where('s.carrier_code', carrier);
  wherePeriod(periodShipments, 's.created_at', period);

  const settled = `count(*) filter (where outcome in ('delivered', 'returned', 'failed'))`;
  const hours = (fraction: number) => `round((percentile_cont(${fraction}) within group (order by delivery_ms) / 3600000.0::float8)::numeric, 2)`;
  const rows: StatsRow[] = await db
    .with('ps', periodShipments)
    .from('ps')
    .select(db.raw(`
      grouping(country, carrier_code)::int as grouping_level,
      country, carrier_code, max(carrier_name) as carrier_name,
      count(*) filter (where outcome <> 'cancelled')::int as total,
      count(*) filter (where outcome = 'delivered')::int as delivered,
      count(*) filter (where outcome = 'returned')::int as returned,
      count(*) filter (where outcome = 'failed')::int as failed,
      count(*) filter (where outcome = 'in_transit')::int as in_transit,
      count(*) filter (where outcome = 'cancelled')::int as cancelled,
      case when ${settled} > 0 then round(count(*) filter (where outcome = 'delivered')::numeric / ${settled}, 4) end as delivery_rate,
      count(delivery_ms)::int as measured,
      ${hours(0.5)} as median_hours,
      ${hours(0.9)} as p90_hours,
      array_agg(distinct country::text order by country::text) filter (where outcome <> 'cancelled') as countries`))
    .groupByRaw('grouping sets ((), (country), (carrier_code))')
    .orderByRaw('grouping_level, total desc, country collate "C", carrier_code collate "C"');

  const total = rows.find((r) => r.grouping_level === LEVEL_TOTAL);
  // A country or carrier with only cancelled shipments has nothing to report.
  const groups = (level: number) => rows.filter((r) => r.grouping_level === level && r.total > 0);
  const times = (r: StatsRow): DeliveryTimes => ({ measured: r.measured, medianHours: num(r.median_hours), p90Hours: num(r.p90_hours) });

  return {
    shipments: {
      total: total?.total ?? 0,
      delivered: total?.delivered ?? 0,
      returned: total?.returned ?? 0,
      failed: total?.failed ?? 0,
      inTransit: total?.in_transit ?? 0,
      cancelled: total?.cancelled ?? 0,
    },
    deliveryRate: total ? num(total.delivery_rate) : null,
    delivery: total ? times(total) : { measured: 0, medianHours: null, p90Hours: null },
    countries: groups(LEVEL_COUNTRY).map((r) => ({
      country: r.country as string,
      shipments: r.total,
      delivered: r.delivered,
      deliveryRate: num(r.delivery_rate),
      medianHours: num(r.median_hours),
    })),
    carriers: groups(LEVEL_CARRIER).map((r) => ({
      carrierCode: r.carrier_code as string,
      carrierName: r.carrier_name,
      shipments: r.total,
      delivered: r.delivered,
      returned: r.returned,
      failed: r.failed,
      inTransit: r.in_transit,
      deliveryRate: num(r.delivery_rate),
      delivery: times(r),
      countries: r.countries ?? [],
    })),
  };
}
