/**
 * Property test of the shipping rollups (fast-check, real Postgres): random shipment histories — created across the
 * October DST change and a month end, delivered, returned, cancelled or still in transit, some delivered or cancelled
 * only in a later sync batch — go through the sync's own apply step, and shipping stats for random periods and
 * carriers must equal the same figures computed here by plain SQL over the raw shipments and tracking events.
 */
import fc from 'fast-check';
import { appTest, type AppContext } from '../helpers/app.js';
import type { ExecutionContext } from 'ava';
import { applyShipments } from '../../src/sync/apply/shipments.js';
import { EventSink } from '../../src/sync/events.js';
import { findSyncShop } from '../../src/sync/shops.js';
import { shipmentStats } from '../../src/queries/shipping.js';
import type { PlatformShipment } from '../../src/platforms/types.js';
import type { GeneratedTrackingEvent } from '../../src/platforms/demo/types.js';

const test = appTest({ scopes: ['shipping:read'] });
type Context = AppContext;

const HOUR = 3_600_000;
// 2026-10-20 .. 2026-11-03 in Europe/Budapest: the clocks go back on 25 October, and October ends.
const WINDOW_START = Date.parse('2026-10-19T22:00:00Z');
const WINDOW_DAYS = 15;
const CARRIERS = ['prop_a', 'prop_b', 'dpd'];
const COUNTRIES = ['HU', 'SK', 'AT'];
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** The expected stats straight from raw rows: the query shipping stats ran before it had rollups. */
async function rawStats(t: ExecutionContext<Context>, shopId: string, from: string, to: string, carrier: string | null) {
  const { rows } = await t.context.database.db.raw(`
    with tz as (select time_zone from shops where id = :shop),
    ps as (
      select s.carrier_code, trim(s.country) as country, s.outcome,
             case when s.outcome <> 'cancelled' then extract(epoch from (fd.first_delivery_at - s.handed_over_at)) * 1000 end::float8 as delivery_ms
      from shipments s, tz,
      lateral (select min(e.occurred_at) as first_delivery_at from shipment_tracking_events e where e.shipment_id = s.id and e.is_delivery) fd
      where s.shop_id = :shop and s.created_at >= (:from::date)::timestamp at time zone tz.time_zone
        and s.created_at < ((:to::date) + 1)::timestamp at time zone tz.time_zone and (:carrier::text is null or s.carrier_code = :carrier::text)
    )
    select grouping(country, carrier_code)::int as lvl, country, carrier_code,
      count(*) filter (where outcome <> 'cancelled')::int as total, count(*) filter (where outcome = 'delivered')::int as delivered,
      count(*) filter (where outcome = 'returned')::int as returned, count(*) filter (where outcome = 'failed')::int as failed,
      count(*) filter (where outcome = 'in_transit')::int as in_transit, count(*) filter (where outcome = 'cancelled')::int as cancelled,
      count(delivery_ms)::int as measured,
      round((percentile_cont(0.5) within group (order by delivery_ms) / 3600000.0::float8)::numeric, 2)::text as median,
      round((percentile_cont(0.9) within group (order by delivery_ms) / 3600000.0::float8)::numeric, 2)::text as p90
    from ps group by grouping sets ((), (country), (carrier_code))`, { shop: shopId, from, to, carrier });
  return rows as Array<{ lvl: number; country: string | null; carrier_code: string | null; total: number; delivered: number; returned: number; failed: number; in_transit: number; cancelled: number; measured: number; median: string | null; p90: string | null }>;
}

interface Draw {
  createdMin: number;
  carrier: number;
  country: number;
  handOverHours: number | null;
  deliveryMinutes: number[];
  deliveryMs: number;
  outcome: 'delivered' | 'returned' | 'failed' | 'in_transit' | 'cancelled';
  laterOutcome: 'same' | 'delivered' | 'cancelled';
}

const drawArb: fc.Arbitrary<Draw> = fc.record({
  createdMin: fc.integer({ min: 0, max: WINDOW_DAYS * 24 * 60 - 1 }),
  carrier: fc.integer({ min: 0, max: CARRIERS.length - 1 }),
  country: fc.integer({ min: 0, max: COUNTRIES.length - 1 }),
  handOverHours: fc.option(fc.integer({ min: 0, max: 30 }), { nil: null }),
  // Delivery scans in minutes after creation (the first one counts; ties and a second scan included).
  deliveryMinutes: fc.array(fc.integer({ min: 0, max: 8 * 24 * 60 }), { maxLength: 2 }),
  deliveryMs: fc.integer({ min: 0, max: 59_999 }),
  outcome: fc.constantFrom('delivered', 'returned', 'failed', 'in_transit', 'cancelled'),
  laterOutcome: fc.constantFrom('same', 'delivered', 'cancelled'),
});

let run = 0;

/** A platform shipment of a draw; `later` gives its state in the second batch (a delivery or cancellation added). */
function toShipment(d: Draw, index: number, later: boolean): PlatformShipment {
  const created = WINDOW_START + d.createdMin * 60_000;
  const events: GeneratedTrackingEvent[] = [{ occurredAt: new Date(created), status: 'CREATED' as never, description: 'created', location: null, isDelivery: false }];
  const handedOverAt = d.handOverHours === null ? null : new Date(created + d.handOverHours * HOUR);
  for (const m of d.deliveryMinutes) events.push({ occurredAt: new Date(created + m * 60_000 + d.deliveryMs), status: 'DELIVERED' as never, description: 'delivered', location: null, isDelivery: true });
  let outcome: Draw['outcome'] = d.outcome;
  if (later && d.laterOutcome !== 'same') {
    outcome = d.laterOutcome;
    if (d.laterOutcome === 'delivered') events.push({ occurredAt: new Date(created + 9 * 24 * HOUR + d.deliveryMs), status: 'DELIVERED' as never, description: 'delivered late', location: null, isDelivery: true });
  }
  events.sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
  const last = events[events.length - 1];
  return {
    carrierCode: CARRIERS[d.carrier], trackingNumber: `PROP-${run}-${index}`, country: COUNTRIES[d.country] as never, status: later ? `S-${outcome}` as never : `S-${d.outcome}` as never,
    outcome, createdAt: new Date(created), updatedAt: new Date(last.occurredAt.getTime() + (later ? 1 : 0)), handedOverAt,
    deliveredAt: events.find((e) => e.isDelivery)?.occurredAt ?? null, events, orderCode: `PROP-${run}-${index}`,
  };
}

test('When random shipment histories are synced and later change state, then shipping stats from rollups equal the raw computation for random periods', async (t) => {
  const db = t.context.database.db;
  const shop = (await findSyncShop(db, 'demo', 'hu'))!;
  const sync = async (shipments: PlatformShipment[]) => db.transaction(async (trx) => {
    await applyShipments(trx, shop, shipments, new EventSink(trx, shop, Number.MAX_SAFE_INTEGER));
  });
  const periodArb = fc.record({ start: fc.integer({ min: -2, max: WINDOW_DAYS }), length: fc.integer({ min: 0, max: WINDOW_DAYS }), carrier: fc.option(fc.constantFrom(...CARRIERS), { nil: null }) });
  let checks = 0;
  await fc.assert(fc.asyncProperty(fc.array(drawArb, { minLength: 1, maxLength: 25 }), fc.array(periodArb, { minLength: 1, maxLength: 3 }), async (draws, periods) => {
    run++;
    await sync(draws.map((d, i) => toShipment(d, i, false)));
    // A second batch: the same shipments, some delivered or cancelled since (and one batch re-sent unchanged).
    await sync(draws.map((d, i) => toShipment(d, i, true)));
    await sync(draws.map((d, i) => toShipment(d, i, true)));
    for (const p of periods) {
      const from = addDays('2026-10-20', p.start);
      const to = addDays(from, p.length);
      const ours = await shipmentStats(db, shop.id, { from, to, timeZone: shop.timeZone } as never, p.carrier ?? undefined);
      const raw = await rawStats(t, shop.id, from, to, p.carrier);
      const total = raw.find((r) => r.lvl === 3);
      const label = `${from}..${to} ${p.carrier ?? 'all'}`;
      if (JSON.stringify(ours.shipments) !== JSON.stringify({ total: total?.total ?? 0, delivered: total?.delivered ?? 0, returned: total?.returned ?? 0, failed: total?.failed ?? 0, inTransit: total?.in_transit ?? 0, cancelled: total?.cancelled ?? 0 })) {
        throw new Error(`${label}: counts ${JSON.stringify(ours.shipments)} vs raw ${JSON.stringify(total)}`);
      }
      const num = (x: string | null | undefined) => (x === null || x === undefined ? null : Number(x));
      const want = { measured: total?.measured ?? 0, medianHours: num(total?.median), p90Hours: num(total?.p90) };
      if (JSON.stringify(ours.delivery) !== JSON.stringify(want)) throw new Error(`${label}: delivery ${JSON.stringify(ours.delivery)} vs raw ${JSON.stringify(want)}`);
      for (const c of ours.carriers) {
        const r = raw.find((x) => x.lvl === 2 && x.carrier_code === c.carrierCode)!;
        const expected = { shipments: r.total, delivered: r.delivered, returned: r.returned, failed: r.failed, inTransit: r.in_transit, measured: r.measured, medianHours: num(r.median), p90Hours: num(r.p90) };
        const got = { shipments: c.shipments, delivered: c.delivered, returned: c.returned, failed: c.failed, inTransit: c.inTransit, ...c.delivery };
        if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${label} carrier ${c.carrierCode}: ${JSON.stringify(got)} vs raw ${JSON.stringify(expected)}`);
      }
      for (const c of ours.countries) {
        const r = raw.find((x) => x.lvl === 1 && x.country === c.country)!;
        if (c.shipments !== r.total || c.delivered !== r.delivered || c.medianHours !== num(r.median)) throw new Error(`${label} country ${c.country}: ${JSON.stringify(c)} vs raw ${JSON.stringify(r)}`);
      }
      const groups = (lvl: number) => raw.filter((x) => x.lvl === lvl && x.total > 0).length;
      if (ours.carriers.length !== groups(2) || ours.countries.length !== groups(1)) throw new Error(`${label}: group counts differ`);
      checks++;
    }
  }), { numRuns: 40, seed: 20261124 });
  t.true(checks >= 40, `compared ${checks} periods`);
});

test('When a synced shipment moves twice in one batch, then each shipment.status_changed names the status it left, not the one stored before the batch', async (t) => {
  const db = t.context.database.db;
  const shop = (await findSyncShop(db, 'demo', 'cz'))!;
  const created = Date.parse('2026-10-21T08:00:00Z');
  const scan = (minutes: number, status: string): GeneratedTrackingEvent => ({ occurredAt: new Date(created + minutes * 60_000), status: status as never, description: status, location: null, isDelivery: status === 'DELIVERED' });
  const shipment = (events: GeneratedTrackingEvent[], outcome: 'in_transit' | 'delivered'): PlatformShipment => ({
    carrierCode: 'dpd', trackingNumber: 'TWICE-1', country: 'CZ' as never, status: events[events.length - 1].status as never, outcome,
    createdAt: new Date(created), updatedAt: events[events.length - 1].occurredAt, handedOverAt: new Date(created + 60 * 60_000),
    deliveredAt: events.find((e) => e.isDelivery)?.occurredAt ?? null, events, orderCode: 'TWICE-1',
  });
  // Every change after the epoch is news here, so each transition is announced.
  const sync = async (s: PlatformShipment) => db.transaction(async (trx) => {
    const sink = new EventSink(trx, shop, 0);
    await applyShipments(trx, shop, [s], sink);
    await sink.flush();
  });
  const first = [scan(0, 'CREATED'), scan(60, 'HANDED_OVER')];
  await sync(shipment(first, 'in_transit'));
  await sync(shipment([...first, scan(120, 'IN_TRANSIT'), scan(180, 'DELIVERED')], 'delivered'));
  const id = String((await db('shipments').where({ shop_id: shop.id, tracking_number: 'TWICE-1' }).first('id')).id);
  const events = await db('outbox_events').where({ resource_id: id }).whereIn('event_type', ['shipment.status_changed', 'shipment.delivered']).orderBy('id').select('event_type', 'data');
  t.deepEqual(events.map((e) => [e.event_type, e.data.previous_status, e.data.status]), [
    ['shipment.status_changed', 'CREATED', 'HANDED_OVER'],
    ['shipment.status_changed', 'HANDED_OVER', 'IN_TRANSIT'],
    ['shipment.status_changed', 'IN_TRANSIT', 'DELIVERED'],
    ['shipment.delivered', 'IN_TRANSIT', 'DELIVERED'],
  ]);
});
