/** Reads of carriers, shipments and tracking events, always within one shop; delivery statistics computed in SQL. */
import type { Db } from '../db/knex.js';
import type { Period } from '../capabilities/period.js';
import type { PageRequest } from '../capabilities/types.js';
import { knexRunner } from '../rollups/orders.js';
import { DELIVERY_BUCKET_MS, FIRST_BUCKET } from '../rollups/shipping.js';
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
 * Delivery statistics of the shipments created in the period, from the shipping rollups (src/rollups/shipping.ts):
 * counts from the per-day rows (GROUPING SETS: whole shop, per country, per carrier), percentiles located in the
 * period's 15-minute histogram (cumulative counts at `to` minus at `from - 1`) and then picked exactly from the
 * per-shipment delivery times, so they equal percentile_cont over the raw rows. Delivery time runs from hand-over to
 * the FIRST delivery tracking event; a shipment missing either point is left out of median and p90; cancelled
 * shipments are counted only as `cancelled`. Percentiles are rounded to 2 decimals (half away from zero) as NUMERIC.
 */
export async function shipmentStats(db: Db, shopId: string, period: Period | null, carrier: string | undefined): Promise<ShippingStats> {
  // Stats always have a period (default the last 30 days); without one, the whole history.
  const from = period?.from ?? '-infinity';
  const to = period?.to ?? 'infinity';
  const counts = await db.raw(`
    select grouping(r.country, r.carrier_code)::int as grouping_level, r.country, r.carrier_code,
      (select c.name from carriers c where c.shop_id = ? and c.code = r.carrier_code) as carrier_name,
      coalesce(sum(r.total), 0)::int as total, coalesce(sum(r.delivered), 0)::int as delivered, coalesce(sum(r.returned), 0)::int as returned, coalesce(sum(r.failed), 0)::int as failed,
      coalesce(sum(r.in_transit), 0)::int as in_transit, coalesce(sum(r.cancelled), 0)::int as cancelled,
      case when sum(r.delivered + r.returned + r.failed) > 0 then round(sum(r.delivered)::numeric / sum(r.delivered + r.returned + r.failed), 4) end as delivery_rate,
      coalesce(sum(r.measured), 0)::int as measured,
      array_agg(distinct r.country order by r.country) filter (where r.total > 0) as countries
    from shipping_daily_rollups r
    where r.shop_id = ? and r.day between ?::date and ?::date and (?::text is null or r.carrier_code = ?::text)
    group by grouping sets ((), (r.country), (r.carrier_code))
    order by grouping_level, total desc, r.country collate "C", r.carrier_code collate "C"`, [shopId, shopId, from, to, carrier ?? null, carrier ?? null]);
  const rows: StatsRow[] = counts.rows.map((r: StatsRow) => ({ ...r, median_hours: null, p90_hours: null }));
  await fillPercentiles(db, shopId, from, to, carrier, rows);

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

interface PercentileTarget {
  lvl: number;
  country: string | null;
  carrier_code: string | null;
  fraction: number;
  proportion: number;
  bucket: number;
  skip: number;
}

/**
 * Sets `median_hours` (every level) and `p90_hours` (total and carriers) on the count rows. The period's histogram
 * (each (carrier, country) array as of `to` minus the one before `from`, two index probes per pair) tells, for each
 * group and fraction, which 15-minute bucket holds the rank percentile_cont interpolates from and how
 * many of the group's values precede it there; an index-only scan from the bucket's start then reads the two exact
 * values. The interpolation repeats PostgreSQL's own float8 arithmetic, so the figure equals the raw computation.
 */
async function fillPercentiles(db: Db, shopId: string, from: string, to: string, carrier: string | undefined, rows: StatsRow[]): Promise<void> {
  if (!rows.some((r) => r.measured > 0)) return;
  const targets = await knexRunner(db)(`
    with groups as (
      select carrier_code, country from shipping_delivery_groups where shop_id = $1 and ($2::text is null or carrier_code = $2::text)
    ),
    -- Each group's running histogram as of \`to\` counts up, the one before \`from\` counts down.
    edges as (
      select g.carrier_code, g.country, e.sign, e.first_bucket, e.counts
      from groups g
      cross join lateral (
        (select 1 as sign, h.first_bucket, h.counts from shipping_delivery_histograms h
         where h.shop_id = $1 and h.carrier_code = g.carrier_code and h.country = g.country and h.day <= $4::date order by h.day desc limit 1)
        union all
        (select -1, h.first_bucket, h.counts from shipping_delivery_histograms h
         where h.shop_id = $1 and h.carrier_code = g.carrier_code and h.country = g.country and h.day < $3::date order by h.day desc limit 1)
      ) e
    ),
    hist as (
      select e.carrier_code, e.country, e.first_bucket + u.i::int - 1 as bucket, sum(e.sign * u.n) as n
      from edges e, unnest(e.counts) with ordinality as u(n, i)
      group by 1, 2, 3
    ),
    g as (
      select grouping(country, carrier_code)::int as lvl, country, carrier_code, bucket, sum(n) as n
      from hist where n > 0
      group by grouping sets ((bucket), (country, bucket), (carrier_code, bucket))
    ),
    c as (
      select g.*, sum(n) over (partition by lvl, country, carrier_code order by bucket) - n as below,
             sum(n) over (partition by lvl, country, carrier_code) as total
      from g
    ),
    t as (
      select grp.*, f.fraction, floor(f.fraction * (grp.total - 1)::float8)::bigint as k,
             f.fraction * (grp.total - 1)::float8 - floor(f.fraction * (grp.total - 1)::float8) as proportion
      from (select distinct lvl, country, carrier_code, total from c) grp
      cross join (values (0.5::float8), (0.9::float8)) as f(fraction)
      where grp.lvl <> ${LEVEL_COUNTRY} or f.fraction = 0.5
    )
    select t.lvl, t.country, t.carrier_code, t.fraction, t.proportion, c.bucket, (t.k - c.below)::int as skip
    from t join c on c.lvl = t.lvl and c.country is not distinct from t.country and c.carrier_code is not distinct from t.carrier_code
      and t.k >= c.below and t.k < c.below + c.n`, [shopId, carrier ?? null, from, to]) as unknown as PercentileTarget[];
  if (!targets.length) return;
  const bindings: Array<string | number> = [];
  const branches = targets.map((target, i) => {
    const where = ['shop_id = ?', 'delivery_ms >= ?', 'day between ?::date and ?::date'];
    // The lowest bucket also holds every smaller (clamped) value.
    bindings.push(i, target.proportion, shopId, target.bucket <= FIRST_BUCKET ? Number.MIN_SAFE_INTEGER : target.bucket * DELIVERY_BUCKET_MS, from, to);
    const carrierCode = target.carrier_code ?? carrier;
    if (carrierCode !== undefined) {
      where.push('carrier_code = ?');
      bindings.push(carrierCode);
    }
    if (target.country !== null) {
      where.push('country = ?');
      bindings.push(target.country);
    }
    bindings.push(target.skip);
    return `select ?::int as idx, (
      select round(((v[1]::float8 + (coalesce(v[2], v[1])::float8 - v[1]::float8) * ?::float8) / 3600000.0::float8)::numeric, 2)::text
      from (select array_agg(delivery_ms order by delivery_ms) as v from (
        select delivery_ms from shipment_delivery_times where ${where.join(' and ')} order by delivery_ms offset ? limit 2) x) y) as hours`;
  });
  const picked = await db.raw(branches.join('\nunion all\n'), bindings);
  for (const { idx, hours } of picked.rows as Array<{ idx: number; hours: string | null }>) {
    const target = targets[idx];
    const row = rows.find((r) => r.grouping_level === target.lvl && (r.country ?? null) === target.country && (r.carrier_code ?? null) === target.carrier_code);
    if (!row) continue;
    if (target.fraction === 0.5) row.median_hours = hours;
    else row.p90_hours = hours;
  }
}
